/**
 * The key files of the encrypted store at a location (FORMAT.md §17.2), for `kura key`: a
 * directory's files through the directory object store, a bucket's objects through S3.
 */
import { resolve } from 'node:path';
import { InvalidInputError, NotFoundError } from '../errors.js';
import { KeyRing } from '../encryption/key-files.js';
import { encryptedStoreId } from '../encryption/config.js';
import { CONFIG_KEY } from '../catalog/object-log.js';
import { isNotFound } from '../objects/object-store.js';
import { DirectoryObjectStore } from './dir-objects.js';
import { isObjectLocation, openObjectLocation, type LocationOptions } from './object-backends.js';

export async function openKeyRing(location: string, options: Pick<LocationOptions, 's3'> = {}): Promise<{ ring: KeyRing; close: () => Promise<void> }> {
  const objects = isObjectLocation(location) ? await openObjectLocation(location, options) : new DirectoryObjectStore(resolve(location));
  try {
    let raw: Uint8Array;
    try {
      raw = await objects.get(CONFIG_KEY);
    } catch (e) {
      if (isNotFound(e)) throw new NotFoundError(`no Kura store at ${location}`);
      throw e;
    }
    const storeId = encryptedStoreId(raw);
    if (storeId === undefined) throw new InvalidInputError(`the store at ${location} is not encrypted: it has no keys (kura copy it to an encrypted store)`, 'store');
    return { ring: new KeyRing(objects, storeId), close: () => objects.close() };
  } catch (e) {
    await objects.close();
    throw e;
  }
}
