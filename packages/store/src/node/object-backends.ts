/**
 * A store whose objects live in an object store (decision 0040), in Node: the configuration,
 * log, checkpoints and packs there; the database (the log's replay) in a local cache
 * directory, derived and disposable. `s3://bucket/prefix` locations open an S3ObjectStore.
 */
import { createHash } from 'node:crypto';
import { chmodSync, createReadStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { StoreBackends } from '../store-types.js';
import { DirectoryObjectStore } from './dir-objects.js';
import { newWriterId } from '../catalog/commits.js';
import { readConfigObject, storeIdOf } from '../catalog/open.js';
import { checkpointName } from '../catalog/checkpoint.js';
import { encodeCheckpointAway } from './checkpoint-write.js';
import { ObjectLogStore } from '../catalog/object-log.js';
import type { ObjectStore } from '../objects/object-store.js';
import { ProbedObjectStore, requireConditionalCreate } from '../objects/probe.js';
import { WorkerExtractor } from './extract-away.js';
import { CachedPackStore, PACK_CACHE_BYTES } from './cached-packs.js';
import { openSqlite, scratchSqlite } from './sqlite.js';
import { openSearchFile } from './search-file.js';
import { LazyCheckpointer } from './checkpointer.js';
import { DB_FILE } from './backends.js';
import { CONFIG_FILE } from './fs-log.js';
import { FormatMismatchError, InvalidInputError } from '../errors.js';
import type { S3Options } from './s3-objects.js';
import { isObjectLocation, parseS3Location } from './s3-location.js';
import { KEYS_PREFIX, KeyRing } from '../encryption/key-files.js';
import { Sealing } from '../encryption/sealing.js';
import { encryptedStoreId } from '../encryption/config.js';
import { randomHex } from '../hex.js';
import type { KdfParams } from '@kura/core';

export { isObjectLocation };

/** A password, or how to get one when it is needed (a prompt asked only for an encrypted store). */
export type PasswordSource = string | Uint8Array | (() => Promise<string | Uint8Array | undefined>);

/**
 * An encrypted store's password (FORMAT.md §17): to open it, or, with `encryption`, to make a
 * new store encrypted with it as its first key. Strings are taken as UTF-8.
 */
export interface KeyOptions {
  password?: PasswordSource;
  /** Making a store: encrypt it (its first key's Argon2id costs; default DEFAULT_KDF). */
  encryption?: { kdf?: KdfParams };
  /**
   * Opening: the store must be encrypted. A plain store found instead is refused
   * (FORMAT_MISMATCH) and nothing is read from it or written to it: whoever can write the
   * storage could otherwise swap an encrypted store for a plain one of their own, and the
   * password would be ignored while new documents went to it in the clear. Set it whenever a
   * password is configured (the CLI and the server do).
   */
  requireEncryption?: boolean;
}

/** The refusal of a plain store where an encrypted one was expected (KeyOptions.requireEncryption, a cache that knew it encrypted). */
export function notEncrypted(location: string, why: string): FormatMismatchError {
  return new FormatMismatchError(`${location} holds a plain store, not an encrypted one (${why}): it was not opened, and nothing was read from it or written to it`, 'encrypted', 'plain');
}

/** Whether the database at `file` (a cache's) was made for an encrypted store: its config says so. */
export function cacheWasEncrypted(file: string): boolean {
  if (!existsSync(file)) return false;
  let db: ReturnType<typeof openSqlite> | undefined;
  try {
    db = openSqlite(file, { readonly: true });
    return db.prepare<{ n: number }>("SELECT COUNT(*) AS n FROM config WHERE key = 'encryption'").get()?.n === 1;
  } catch {
    return false; // no config table yet, or not a database: nothing known
  } finally {
    db?.close();
  }
}

/** Where a store on object storage keeps what is derived from it; and how to reach S3. */
export interface LocationOptions extends KeyOptions {
  /** The local cache (the database): default ~/.cache/kura/stores/<hash of the location>. */
  cacheDir?: string;
  /** The S3 endpoint, region and credentials, when not the environment's (s3-objects.ts). */
  s3?: S3Options;
  /** Bytes of pack copies the cache directory keeps (cached-packs.ts; default 2 GiB). */
  packCacheBytes?: number;
}

/** The object store a location names. The S3 client is loaded only here (~80 ms): a command on a local store never pays for it. */
export async function openObjectLocation(location: string, options: LocationOptions = {}): Promise<ObjectStore> {
  parseS3Location(location); // a bad location: refused before the client loads
  const { S3ObjectStore } = await import('./s3-objects.js');
  return new S3ObjectStore(location, options.s3);
}

export function defaultCacheDir(location: string): string {
  const base = process.env.KURA_CACHE ?? join(homedir(), '.cache', 'kura');
  return join(base, 'stores', createHash('sha256').update(location).digest('hex').slice(0, 16));
}

/**
 * The backends of the store in `bucket`, its database in `cacheDir`. A database left there by
 * another store (another store id) is replaced: it is only ever a replay. `probe`: check that
 * the object store enforces conditional creates (objects/probe.ts) before anything is written.
 */
export async function objectBackends(
  bucket: ObjectStore,
  cacheDir: string,
  readonly: boolean,
  probe = true,
  packCacheBytes = PACK_CACHE_BYTES,
  fresh = false,
  keys: KeyOptions = {},
): Promise<StoreBackends> {
  const dir = resolve(cacheDir);
  // What a cache holds is deleted when it belongs to another store: never a store's own files.
  if (existsSync(join(dir, CONFIG_FILE)) || existsSync(join(dir, 'packs'))) throw new InvalidInputError(`${dir} holds a Kura store; the cache of a store on object storage needs a directory of its own`, 'cacheDir');
  // The cache holds the store's database in plain form — paths, tags, metadata, the search
  // index, token hashes; an encrypted store's decrypted staged uploads too: the cache's owner
  // alone may enter it (it was 755, its files 644: any account on the machine read them).
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    chmodSync(dir, 0o700);
  } catch {
    // not ours to change (a directory given by its owner): left as they keep it
  }
  if (fresh) clearCache(dir);
  // The probe goes on beside the open's reads; writes wait for it (ProbedObjectStore), and
  // the open for its answer (`ready`).
  const probed = probe && !readonly ? requireConditionalCreate(bucket) : Promise.resolve();
  const objects = new ProbedObjectStore(bucket, probed);
  const log = new ObjectLogStore(objects);
  // Checkpoints are encoded on a worker from the cache's database and uploaded from here.
  if (!readonly) {
    log.checkpointAway = async (schema) => {
      const { seq, bytes } = await encodeCheckpointAway(join(dir, DB_FILE), schema);
      await log.createCheckpoint(checkpointName(seq), bytes); // false: another server made it
      return seq;
    };
  }
  // (The cache's database is written even where the store is opened read-only: its replay.)
  const checkpointer = new LazyCheckpointer(join(dir, DB_FILE));
  const openDb = () => openSqlite(join(dir, DB_FILE), { readonly: false, onCommit: checkpointer.onCommit });
  let db: ReturnType<typeof openSqlite> | undefined;
  let damagedKeys: (() => Promise<{ id: string; message: string }[]>) | undefined;
  try {
    log.sealing = await unlocked(objects, log, keys, fresh, join(dir, KEY_USED));
    if (log.sealing) damagedKeys = () => new KeyRing(objects, log.sealing!.storeId).damaged();
    // A cache made for an encrypted store at this location, and a plain store there now: the
    // store was swapped (or replaced on purpose: then its old cache is deleted by hand).
    if (!log.sealing && !fresh && cacheWasEncrypted(join(dir, DB_FILE))) throw notEncrypted(objects.location, `the cache ${dir} was made for an encrypted store here; if it was replaced on purpose, delete that directory`);
    const config = await readConfigObject(log);
    db = openDb();
    const cachedId = storeIdOf(db);
    if (config && cachedId !== undefined && cachedId !== config.get('store_id')) {
      db.close(); // another store's cache: its replay and its pack copies go
      db = undefined;
      clearCache(dir);
      db = openDb();
    }
  } catch (e) {
    db?.close();
    await probed.catch(() => undefined); // (no probe object left behind)
    await objects.close();
    throw e;
  }
  const id = newWriterId();
  const opened = db;
  checkpointer.arm(opened);
  return {
    db: opened,
    searchIndex: (ro) => openSearchFile(dir, join(dir, DB_FILE), opened, ro),
    scratchDb: scratchSqlite,
    packs: new CachedPackStore(objects, join(dir, PACK_COPIES), packCacheBytes),
    log,
    // Other writers are other servers: none is ever known dead (GC waits for its leases).
    writer: { id, alive: () => true, others: () => [] },
    // (An open that failed early lets the probe finish first: no probe object left behind.)
    opened: (how: { created: boolean }) => checkpointer.opened(how),
    release: async () => {
      await checkpointer.stop();
      await probed.catch(() => undefined);
      await objects.close();
    },
    clockOffsetMs: () => objects.clockOffsetMs?.(),
    ...(bucket instanceof DirectoryObjectStore ? { dataOnDisk: true } : {}),
    gcHolder: cacheId(dir),
    // (Local files a put names: a server's staged uploads, when it stages them in its cache.)
    openPath: (path) => createReadStream(path, { highWaterMark: 1 << 20 }),
    ...(readonly ? {} : { extractor: new WorkerExtractor() }),
    setDurability: (d) => opened.setDurability(d),
    ready: probed,
    ...(log.sealing ? { sealing: log.sealing } : {}),
    ...(damagedKeys ? { damagedKeys } : {}),
  };
}

async function passwordBytes(source: PasswordSource | undefined): Promise<Uint8Array | undefined> {
  const p = typeof source === 'function' ? await source() : source;
  return typeof p === 'string' ? new TextEncoder().encode(p) : p;
}

/**
 * An encrypted store's Sealing (FORMAT.md §17): a new store's first key made (`encryption`),
 * or an existing one's master key unlocked with the password; undefined for a plain store.
 */
/**
 * In the cache directory: the id of the key file that opened the store last. It is tried first
 * next time: each key file costs an Argon2id derivation, and one planted with the costs the
 * format allows (1 GiB, 64 passes) slowed every open by half a minute (a trial).
 */
const KEY_USED = 'key-used';

async function unlocked(objects: ObjectStore, log: ObjectLogStore, keys: KeyOptions, fresh: boolean, keyUsed: string): Promise<Sealing | undefined> {
  const raw = await log.readRawConfig();
  if (fresh && keys.encryption) {
    // (A store that exists, or key files of one that was being made, must not gain a key here.)
    if ((raw && raw.length) || (await objects.list(KEYS_PREFIX, { limit: 1 })).objects.length) throw new InvalidInputError(`${objects.location} already holds a Kura store (or its keys)`, 'dir');
    const password = await passwordBytes(keys.password);
    if (!password || password.length === 0) throw new InvalidInputError('an encrypted store needs a password', 'password');
    const storeId = randomHex(16);
    const { master } = await new KeyRing(objects, storeId).create(password, keys.encryption.kdf);
    return new Sealing(master, storeId);
  }
  const storeId = encryptedStoreId(raw);
  if (storeId === undefined) {
    if (keys.requireEncryption && raw && raw.length) throw notEncrypted(objects.location, 'a password is configured');
    return undefined;
  }
  let preferred: string | undefined;
  try {
    preferred = readFileSync(keyUsed, 'utf8').trim();
  } catch {
    // (none yet)
  }
  const { master, id } = await new KeyRing(objects, storeId).unlock(await passwordBytes(keys.password), preferred);
  if (id !== preferred) {
    try {
      writeFileSync(keyUsed, `${id}\n`);
    } catch {
      // A hint only: a read-only cache is tried in order next time.
    }
  }
  return new Sealing(master, storeId);
}

/**
 * The cache directory's id (`server-id`, 16 hex digits, made once): the same after a restart,
 * so a server killed while it held the GC lease takes it back when it starts again.
 */
function cacheId(dir: string): string {
  const file = join(dir, SERVER_ID);
  try {
    const id = readFileSync(file, 'utf8').trim();
    if (/^[0-9a-f]{16}$/.test(id)) return id;
  } catch {
    // (none yet)
  }
  const id = newWriterId();
  writeFileSync(file, `${id}\n`);
  return id;
}

const SERVER_ID = 'server-id';

/** Where a cache directory keeps its copies of packs (cached-packs.ts). */
const PACK_COPIES = 'pack-copies';

function clearCache(dir: string): void {
  for (const f of [DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`, PACK_COPIES]) rmSync(join(dir, f), { recursive: true, force: true });
}
