/**
 * @kura/store in a browser (FORMAT.md §14): the same store logic on SQLite-in-wasm (the
 * opfs-sahpool VFS) and packs in the origin-private file system, inside a dedicated worker
 * (sync access handles exist only there). One writer per store per origin, enforced with a
 * Web Lock: a second tab gets STORE_LOCKED.
 */
import sqlite3InitModule, { type SAHPoolUtil, type Sqlite3Static } from '@sqlite.org/sqlite-wasm';
import { InvalidInputError } from '@kura/core';
import { WasmDatabase } from '../backend/sqlite-wasm.js';
import { StorageUnavailableError, StoreLockedError } from '../errors.js';
import { InitOptions as InitOptionsSchema, parse, type Durability, type InitOptions, type OpenOptions, type PutMeta } from '../options.js';
import { runLanes } from '../lanes.js';
import type { ChunkEvent, PutResult } from '../put.js';
import type { PutInput } from '../store.js';
import { PoolShare } from '../ingest/pool.js';
import { BrowserIngestPool } from './ingest-pool.js';
import { schemaVersion } from '../catalog/schema.js';
import { Store as StoreCore, type StoreBackends } from '../store.js';
import { OpfsPackStore } from './opfs-packs.js';
import { OpfsLogStore } from './opfs-log.js';

export * from '../index.js';
export { OpfsPackStore } from './opfs-packs.js';
export { BrowserIngestPool } from './ingest-pool.js';
export { WasmDatabase } from '../backend/sqlite-wasm.js';

/** The database file's name inside the store's SQLite pool. */
const DB_FILE = '/kura.db';
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

let sqlite3Ready: Promise<Sqlite3Static> | undefined;
/** The SQLite pools installed in this worker, by store name (one VFS per store). */
const pools = new Map<string, SAHPoolUtil>();

function sqlite3(): Promise<Sqlite3Static> {
  sqlite3Ready ??= sqlite3InitModule();
  return sqlite3Ready;
}

async function storeDir(name: string, create: boolean): Promise<FileSystemDirectoryHandle | undefined> {
  if (typeof navigator === 'undefined' || !navigator.storage?.getDirectory) {
    throw new StorageUnavailableError('this browser has no origin-private file system (OPFS); Kura cannot keep a store here');
  }
  let root: FileSystemDirectoryHandle;
  try {
    root = await navigator.storage.getDirectory();
  } catch (e) {
    // Private windows and some embedders refuse OPFS with a SecurityError.
    throw new StorageUnavailableError(`the origin-private file system is not available: ${(e as Error).message}`);
  }
  try {
    const kura = await root.getDirectoryHandle('kura', { create });
    return await kura.getDirectoryHandle(name, { create });
  } catch (e) {
    if (!create && e instanceof DOMException && e.name === 'NotFoundError') return undefined;
    throw e;
  }
}

/** Holds the store's Web Lock until `release` is called. */
async function acquireLock(name: string): Promise<() => void> {
  if (!navigator.locks) return () => undefined; // no Web Locks: a second tab fails on the SQLite pool instead
  return new Promise((resolve, reject) => {
    navigator.locks
      .request(`kura-store:${name}`, { ifAvailable: true }, (lock) => {
        if (!lock) {
          reject(new StoreLockedError(`the store "${name}" is open in another tab or window`));
          return undefined;
        }
        return new Promise<void>((unlock) => resolve(unlock));
      })
      .catch(reject);
  });
}

export interface BrowserStoreOptions extends OpenOptions {
  /** Used when the store does not exist yet. */
  init?: InitOptions;
  /**
   * Starts an ingest worker (one that calls `serveBrowserIngest()`): with it, Blobs are
   * chunked, hashed and compressed on other cores (browser/ingest-pool.ts).
   */
  ingestWorker?: () => Worker;
}

export interface BlobToPut {
  blob: Blob;
  meta?: PutMeta;
  onChunk?: (chunk: ChunkEvent) => void;
}

export interface BlobPutOutcome {
  /** The item's position in the input. */
  index: number;
  result?: PutResult;
  error?: unknown;
}

/** Blobs below this size go to the ingest workers in batches (one message each way per batch). */
const SMALL_BLOB = 256 * 1024;
const SMALL_BATCH = 64;
/** Blobs up to this size are read whole when put on this thread. */
const READ_WHOLE = 1 << 20;

/**
 * The ingest workers of this realm (a store's dedicated worker), shared by the stores it opens
 * one after another and ended POOL_IDLE_MS after the last one closes: a new pool loads the wasm
 * core in each worker, and fresh workers run their first files unoptimized (decision 0020).
 * The first store's worker factory makes it.
 */
let share: PoolShare<BrowserIngestPool> | undefined;

function leasePool(makeWorker: () => Worker) {
  share ??= new PoolShare(() => new BrowserIngestPool(makeWorker));
  return share.lease();
}

export class BrowserStore extends StoreCore {
  #makeWorker: (() => Worker) | undefined;
  #lease: ReturnType<typeof leasePool> | undefined;

  #ingestPool(): BrowserIngestPool | undefined {
    if (!this.#lease && this.#makeWorker) this.#lease = leasePool(this.#makeWorker);
    return this.#lease?.pool;
  }

  /** A Blob (File) is ingested on the ingest workers when the store has them. */
  override async put(input: PutInput | Blob, meta: PutMeta = {}, options: { onChunk?: (chunk: ChunkEvent) => void } = {}): Promise<PutResult> {
    if (typeof Blob !== 'undefined' && input instanceof Blob) {
      const pool = this.readonly ? undefined : this.#ingestPool();
      if (pool) {
        this.context('put');
        return this.putChunks(pool.ingestSource(input, this.ingestOptions()), meta, options);
      }
      return super.put(input.size <= READ_WHOLE ? new Uint8Array(await input.arrayBuffer()) : input.stream(), meta, options);
    }
    return super.put(input as PutInput, meta, options);
  }

  /**
   * Puts many Blobs (Files), each a document, using every core when the store has ingest
   * workers: small ones go to them in batches, large ones one by one, while this thread
   * deduplicates and commits (many puts in flight share commits). Yields one outcome per
   * item as it completes; a failing item does not stop the others.
   */
  async *putBlobs(items: BlobToPut[]): AsyncGenerator<BlobPutOutcome> {
    this.context('put');
    const pool = this.#ingestPool();
    const opts = this.ingestOptions();
    const outcomes: BlobPutOutcome[] = [];
    let wake: (() => void) | undefined;
    const settle = (index: number, p: Promise<PutResult>) =>
      p.then(
        (result) => outcomes.push({ index, result }),
        (error: unknown) => outcomes.push({ index, error }),
      ).finally(() => wake?.());
    const tasks: (() => Promise<unknown>)[] = [];
    const indexed = items.map((item, index) => ({ item, index }));
    const small = pool ? indexed.filter((x) => x.item.blob.size < SMALL_BLOB) : [];
    for (let i = 0; i < small.length; i += SMALL_BATCH) {
      const batch = small.slice(i, i + SMALL_BATCH);
      tasks.push(async () => {
        const ready = await pool!.ingestSmall(batch.map((x) => x.item.blob), opts).catch((e: unknown) => batch.map(() => e as Error));
        const inputs = ready.map((r, j) => (r instanceof Error ? r : { ...r, meta: batch[j]!.item.meta, onChunk: batch[j]!.item.onChunk }));
        const results = await this.putReady(inputs).catch((e: unknown) => batch.map(() => e as Error));
        await Promise.all(results.map((r, j) => settle(batch[j]!.index, r instanceof Error ? Promise.reject(r) : Promise.resolve(r))));
      });
    }
    for (const { item, index } of indexed) {
      if (pool && item.blob.size < SMALL_BLOB) continue;
      tasks.push(() => settle(index, this.put(item.blob, item.meta ?? {}, item.onChunk ? { onChunk: item.onChunk } : {})));
    }
    const running = runLanes(tasks, pool ? pool.size * 4 : 32);
    let finished = false;
    void running.finally(() => {
      finished = true;
      wake?.();
    });
    let yielded = 0;
    while (yielded < items.length) {
      if (outcomes.length === 0) {
        if (finished) break;
        await new Promise<void>((r) => (wake = r));
        continue;
      }
      yielded++;
      yield outcomes.shift()!;
    }
    await running;
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      this.#lease?.release();
      this.#lease = undefined;
    }
  }

  /**
   * Opens the store `name` of this origin, creating it (with `options.init`) when missing.
   * Must run in a dedicated worker.
   */
  static async openOpfs(name = 'default', options: BrowserStoreOptions = {}): Promise<BrowserStore> {
    if (!NAME.test(name)) throw new InvalidInputError('a browser store name is 1-64 letters, digits, - or _', 'name');
    if (options.init) parse(InitOptionsSchema, options.init, 'init options');
    const dir = (await storeDir(name, true))!;
    const unlock = await acquireLock(name);
    let pool: SAHPoolUtil | undefined;
    let db: WasmDatabase | undefined;
    try {
      const packs = new OpfsPackStore(await dir.getDirectoryHandle('packs', { create: true }));
      const s3 = await sqlite3();
      pool = await s3.installOpfsSAHPoolVfs({ name: `kura-${name}`, directory: `/kura/${name}/sqlite`, initialCapacity: 8 });
      pools.set(name, pool);
      if (pool.isPaused()) await pool.unpauseVfs();
      db = new WasmDatabase(s3, new pool.OpfsSAHPoolDb(DB_FILE));
      // The VFS has no shared memory, hence no WAL; a persisted rollback journal avoids
      // creating and deleting the journal file on every commit. This connection is the only
      // one (the pool's handles are exclusive, the Web Lock keeps other tabs out), so it keeps
      // its lock: otherwise every statement re-reads the header and probes for a hot journal
      // through the file handles before trusting its page cache.
      db.exec('PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = PERSIST; PRAGMA cache_size = -16384; PRAGMA temp_store = MEMORY');
      const opened = db;
      const vfs = pool;
      const log = new OpfsLogStore(dir);
      const b: StoreBackends = {
        db: opened,
        packs,
        log,
        setDurability: (d: Durability) => opened.exec(`PRAGMA synchronous = ${d === 'full' ? 'FULL' : 'NORMAL'}`),
        // Pausing gives the pool's file handles back, so the store can be opened again (in
        // this worker or, after the lock, in another tab).
        release: () => {
          vfs.pauseVfs();
          unlock();
        },
      };
      const { init, ingestWorker, ...open } = options;
      // A database that is missing while the configuration is there is rebuilt from the log.
      const fresh = schemaVersion(opened) === 0 && (await log.readConfig()) === undefined;
      const store = (fresh ? await this.create(b, init ?? {}) : await this.openBackends(b, open)) as BrowserStore;
      store.#makeWorker = ingestWorker;
      // The ingest workers start now, not at the first put: loading and compiling the wasm
      // core takes ~100 ms, which would otherwise delay the first drop.
      if (!store.readonly && store.#ingestPool() && store.#lease!.fresh) store.#lease!.pool.warm(store.ingestOptions());
      return store;
    } catch (e) {
      try {
        db?.close();
        pool?.pauseVfs();
      } finally {
        unlock();
      }
      throw e;
    }
  }

  /** Whether this origin holds the store `name`. */
  static async exists(name = 'default'): Promise<boolean> {
    return (await storeDir(name, false)) !== undefined;
  }

  /**
   * Deletes the store `name` and everything in it (it must not be open: STORE_LOCKED when a
   * tab has it open).
   */
  static async destroy(name = 'default'): Promise<void> {
    if (!NAME.test(name)) throw new InvalidInputError('a browser store name is 1-64 letters, digits, - or _', 'name');
    const unlock = await acquireLock(name);
    try {
      // A pool this worker installed unregisters first: it holds handles on the files.
      const pool = pools.get(name);
      if (pool) {
        pools.delete(name);
        if (pool.isPaused()) await pool.unpauseVfs();
        await pool.removeVfs();
      }
      const kura = await (await navigator.storage.getDirectory()).getDirectoryHandle('kura', { create: true });
      await kura.removeEntry(name, { recursive: true }).catch((e) => {
        if (!(e instanceof DOMException && e.name === 'NotFoundError')) throw e;
      });
    } finally {
      unlock();
    }
  }
}
