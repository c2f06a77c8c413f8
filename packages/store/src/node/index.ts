/**
 * @kura/store for Node: Store.init / Store.open on a directory (FORMAT.md §5), with
 * better-sqlite3 metadata, file-system packs, the writer lock and file-path puts.
 */
import { createReadStream, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InvalidInputError } from '@kura/core';
import { NotFoundError } from '../errors.js';
import type { InitOptions, OpenOptions } from '../options.js';
import { Store as StoreCore, type StoreBackends } from '../store.js';
import { FsPackStore } from './fs-packs.js';
import { acquireWriterLock } from './lock.js';
import { openSqlite } from './sqlite.js';

export * from '../index.js';
export { FsPackStore } from './fs-packs.js';
export { openSqlite } from './sqlite.js';

export const DB_FILE = 'kura.db';

function backends(dir: string, readonly: boolean): StoreBackends {
  const lock = readonly ? undefined : acquireWriterLock(dir);
  try {
    const db = openSqlite(join(dir, DB_FILE), { readonly });
    return {
      db,
      packs: new FsPackStore(join(dir, 'packs')),
      release: () => lock?.release(),
      openPath: (path) => createReadStream(path, { highWaterMark: 1 << 20 }),
      setDurability: (d) => db.setDurability(d),
    };
  } catch (e) {
    lock?.release();
    throw e;
  }
}

export class Store extends StoreCore {
  /** Creates a new store in `dir` (created if missing; must not already hold a store). */
  static async init(dir: string, options: InitOptions = {}): Promise<Store> {
    const root = resolve(dir);
    mkdirSync(root, { recursive: true });
    if (existsSync(join(root, DB_FILE))) throw new InvalidInputError(`${root} already holds a Kura store`, 'dir');
    const unexpected = readdirSync(root).filter((f) => !f.startsWith('.'));
    if (unexpected.length) throw new InvalidInputError(`${root} is not empty; a store needs a directory of its own`, 'dir');
    const b = backends(root, false);
    try {
      return (await StoreCore.create(b, options)) as Store;
    } catch (e) {
      b.db.close();
      b.release?.();
      throw e;
    }
  }

  /** Opens the store in `dir`; `readonly: true` to read alongside another process's writer. */
  static async open(dir: string, options: OpenOptions = {}): Promise<Store> {
    const root = resolve(dir);
    if (!existsSync(join(root, DB_FILE))) throw new NotFoundError(`no Kura store at ${root} (run kura init)`);
    const b = backends(root, options.readonly ?? false);
    try {
      return (await StoreCore.openBackends(b, options)) as Store;
    } catch (e) {
      b.db.close();
      await b.release?.();
      throw e;
    }
  }
}
