/**
 * @kura/store in a browser (FORMAT.md §14): the same store logic on SQLite-in-wasm (the
 * opfs-sahpool VFS) and packs in the origin-private file system, inside a dedicated worker
 * (sync access handles exist only there). One writer per store per origin, enforced with a
 * Web Lock: a second tab gets STORE_LOCKED.
 */
import sqlite3InitModule, { type SAHPoolUtil, type Sqlite3Static } from '@sqlite.org/sqlite-wasm';
import { InternalError, InvalidInputError, type IngestOptions } from '@kura/core';
import { WasmDatabase, openMemoryDatabase } from '../backend/sqlite-wasm.js';
import { CorruptDataError, NotFoundError, StorageUnavailableError, StoreLockedError, storageError } from '../errors.js';
import { InitOptions as InitOptionsSchema, parse, type Durability, type InitOptions, type OpenOptions, type PutMeta } from '../options.js';
import { putMany, type ManySources, type SourceOutcome } from '../put-many.js';
import { snapshotRun, type SnapshotReport, type SnapshotRunOptions } from '../snapshot-run.js';
import { filesSource, type FileInTree } from './snapshot-files.js';
import type { ChunkEvent } from '../put.js';
import type { KnownChunks } from '../ingest/known-chunks.js';
import { PoolShare } from '../ingest/pool.js';
import { BrowserIngestPool } from './ingest-pool.js';
import { migrate, schemaVersion } from '../catalog/schema.js';
import { readConfigObject, rebuildCatalog } from '../catalog/open.js';
import { prepareStatements } from '../catalog/statements.js';
import { Store as StoreCore, type StoreBackends } from '../store.js';
import { OpfsPackStore } from './opfs-packs.js';
import { OpfsLogStore } from './opfs-log.js';

export * from '../index.js';
export { OpfsPackStore } from './opfs-packs.js';
export { BrowserIngestPool } from './ingest-pool.js';
export { WasmDatabase } from '../backend/sqlite-wasm.js';
export { scanFiles, type FileInTree } from './snapshot-files.js';
export { loadMiniLmOnWebWorker } from './embed-away.js';
export { loadMiniLmWeb } from './minilm-web.js';
export type { SnapshotReport, SnapshotRunOptions } from '../snapshot-run.js';

/** The database file's name inside the store's SQLite pool. */
const DB_FILE = '/kura.db';
/** The database a rebuild makes, before it replaces DB_FILE. */
const REBUILT_FILE = '/kura.db.rebuild';
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

/** A Blob's outcome: its position in the input, and its result or error. */
export type BlobPutOutcome = SourceOutcome;

/** Blobs below this size go to the ingest workers in batches (one message each way per batch). */
const SMALL_BLOB = 256 * 1024;

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

/**
 * A store's puts of Blobs on the realm's ingest workers (IngestWorkers), when it was given a
 * worker factory; the pool is leased on first use and let go when the store closes.
 */
function blobsOnWorkers(makeWorker: (() => Worker) | undefined) {
  let lease: ReturnType<typeof leasePool> | undefined;
  const pool = () => {
    if (!lease && makeWorker) lease = leasePool(makeWorker);
    return lease?.pool;
  };
  return {
    pool,
    /** Whether the pool was made by this store (its workers still load the core). */
    fresh: () => lease?.fresh ?? false,
    stream(input: unknown, options: IngestOptions, known: () => KnownChunks | undefined) {
      if (!(typeof Blob !== 'undefined' && input instanceof Blob)) return undefined;
      const p = pool();
      return p?.ingestSource(input, options, false, known());
    },
    close() {
      lease?.release();
      lease = undefined;
    },
  };
}

/**
 * Puts the store's database in WAL mode (decision 0052), as Node's is. This connection is the
 * only one (the pool's handles are exclusive, the Web Lock keeps other tabs out), so it keeps
 * its lock: every statement would otherwise re-read the header through the file handles before
 * trusting its page cache. The lock is also what lets SQLite keep the WAL's index in the heap,
 * the VFS having no shared memory; it must be taken before WAL mode is asked for.
 */
function walMode(db: WasmDatabase): void {
  db.exec('PRAGMA locking_mode = EXCLUSIVE');
  // A new (empty) database takes incremental auto-vacuum only before WAL mode writes its first
  // page (decision 0038), as in node/sqlite.ts.
  if (db.prepare<{ page_count: number }>('PRAGMA page_count').get()?.page_count === 0) db.exec('PRAGMA auto_vacuum = INCREMENTAL');
  const mode = db.prepare<{ journal_mode: string }>('PRAGMA journal_mode = WAL').get()?.journal_mode;
  // SQLite answers with the mode it stayed in when it cannot switch (a build without WAL).
  if (mode !== 'wal') throw new InternalError(`the browser's SQLite stayed in journal mode ${mode} when asked for WAL`);
  db.exec('PRAGMA cache_size = -16384; PRAGMA temp_store = MEMORY');
}

/** The commit the database in the pool has applied, when it can be read (a damaged one cannot: undefined). */
function appliedSeq(s3: Sqlite3Static, pool: SAHPoolUtil): number | undefined {
  if (!pool.getFileNames().includes(DB_FILE)) return undefined;
  let db: WasmDatabase | undefined;
  try {
    db = new WasmDatabase(s3, new pool.OpfsSAHPoolDb(DB_FILE));
    db.exec('PRAGMA locking_mode = EXCLUSIVE'); // (a WAL database is read so in this VFS: no shared memory)
    return db.prepare<{ seq: number }>('SELECT seq FROM log_state WHERE id = 1').get()?.seq;
  } catch {
    return undefined;
  } finally {
    try {
      db?.close();
    } catch {
      // (closing a database that failed to open)
    }
  }
}

export class BrowserStore extends StoreCore {
  #workers: ReturnType<typeof blobsOnWorkers> | undefined;

  /**
   * Puts many Blobs (Files), each a document, using every core when the store has ingest
   * workers: small ones go to them in batches, large ones one by one, while this thread
   * deduplicates and commits, in input order (put-many.ts). Yields one outcome per item,
   * in input order; a failing item does not stop the others.
   */
  putBlobs(items: BlobToPut[]): AsyncGenerator<BlobPutOutcome> {
    // Each a Blob (a File is one): anything else failed deep in the read, uncoded (a trial).
    if (!Array.isArray(items)) throw new InvalidInputError('putBlobs takes an array of { blob, meta? }', 'items');
    items.forEach((i, n) => {
      if (!(i?.blob instanceof Blob)) throw new InvalidInputError(`items[${n}].blob is not a Blob or File`, `items[${n}].blob`);
    });
    const host = this.#host('put');
    const sources = items.map((i) => ({ source: i.blob, meta: i.meta, onChunk: i.onChunk }));
    return putMany(host, sources, this.#blobs());
  }

  /**
   * Snapshots files given with their paths in a tree — a dropped or picked folder, each File
   * with its path below it (`docs/a.txt`) — as Node snapshots a directory (snapshot-run.ts):
   * the files go through the deduplicating put (kept for the snapshot, not listed), then the
   * trees and the snapshot record are committed in one transaction. Files get mode 0644 and
   * (unless `mtime: false`) their last-modified time; every file is read (browser/snapshot-files.ts).
   */
  async snapshotFiles(files: FileInTree[], options: SnapshotRunOptions & { mtime?: boolean } = {}): Promise<SnapshotReport> {
    if (!Array.isArray(files)) throw new InvalidInputError('snapshotFiles takes an array of { path, file }', 'files');
    files.forEach((f, n) => {
      if (!(f?.file instanceof Blob)) throw new InvalidInputError(`files[${n}].file is not a Blob or File`, `files[${n}].file`);
    });
    const host = this.#host('snapshot');
    return snapshotRun(host, filesSource(host, files, this.#blobs(), options), options);
  }

  /** What put-many.ts and snapshot-run.ts work with, once the store is open for writing. */
  #host(op: string) {
    const host = { store: this, context: (o: string) => this.context(o) };
    host.context(op);
    return host;
  }

  /** This store's Blobs as put-many.ts reads them: small ones in batches on the workers. */
  #blobs(): ManySources<Blob> {
    return { pool: this.#workers?.pool(), small: (blob) => blob.size < SMALL_BLOB, here: (blob) => blob, size: (blob) => blob.size };
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
      walMode(db);
      const opened = db;
      const vfs = pool;
      const log = new OpfsLogStore(dir);
      const b: StoreBackends = {
        db: opened,
        scratchDb: () => openMemoryDatabase(s3),
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
      const workers = blobsOnWorkers(ingestWorker);
      b.ingest = workers;
      // A database that is missing while the configuration is there is rebuilt from the log.
      const fresh = schemaVersion(opened) === 0 && (await log.readConfig()) === undefined;
      const store = (fresh ? await this.create(b, init ?? {}) : await this.openBackends(b, open)) as BrowserStore;
      store.#workers = workers;
      // The ingest workers start now, not at the first put: loading and compiling the wasm
      // core takes ~100 ms, which would otherwise delay the first drop.
      const ingest = store.readonly ? undefined : workers.pool();
      if (ingest && workers.fresh()) ingest.warm(store.ingestOptions());
      return store;
    } catch (e) {
      try {
        db?.close();
        pool?.pauseVfs();
      } finally {
        unlock();
      }
      // A database SQLite cannot read is CORRUPT_DATA (reason `database`), as in Node: it was
      // an INTERNAL SQLite3Error, and the demo had no way back (a trial).
      throw storageError(e);
    }
  }

  /** Whether this origin holds the store `name`. */
  static async exists(name = 'default'): Promise<boolean> {
    return (await storeDir(name, false)) !== undefined;
  }

  /**
   * Rebuilds the database of the store `name` from its log (FORMAT.md §15.4), as Node's
   * `Store.rebuild` does: into a database of its own — the newest checkpoint and the commits
   * after it — which replaces the old one only once it is whole. A log that cannot be replayed
   * (damage inside it) fails the rebuild and changes nothing; an old database that has applied
   * commits the log no longer holds is kept (CORRUPT_DATA `log-behind`), unless `force`. (It
   * deleted the database first: a damaged log then left a store that had opened unopenable, and
   * a cut one lost acknowledged puts without a word — a trial.) With `force`, damage inside the
   * log is cut out, its bytes kept beside the log (`cut`), as Node's rebuild does. The store
   * must not be open (STORE_LOCKED). Answers how many database files (the database, its WAL)
   * were replaced, and the commit the new database has applied.
   */
  static async rebuild(name = 'default', options: { force?: boolean } = {}): Promise<{ deletedFiles: number; seq: number; cut?: string[] }> {
    if (!NAME.test(name)) throw new InvalidInputError('a browser store name is 1-64 letters, digits, - or _', 'name');
    if (options === null || typeof options !== 'object' || Object.keys(options).some((k) => k !== 'force')) throw new InvalidInputError('rebuild options are { force?: boolean }', 'options');
    const dir = await storeDir(name, false);
    if (!dir) throw new NotFoundError(`no browser store ${name}`);
    const unlock = await acquireLock(name);
    let deletedFiles = 0;
    let seq: number;
    const cut: string[] = [];
    try {
      const s3 = await sqlite3();
      const pool = pools.get(name) ?? (await s3.installOpfsSAHPoolVfs({ name: `kura-${name}`, directory: `/kura/${name}/sqlite`, initialCapacity: 8 }));
      pools.set(name, pool);
      if (pool.isPaused()) await pool.unpauseVfs();
      const leftovers = () => {
        for (const f of pool.getFileNames()) if (f.startsWith(REBUILT_FILE)) pool.unlink(f);
      };
      try {
        const log = new OpfsLogStore(dir);
        const config = await readConfigObject(log);
        if (!config) throw new NotFoundError(`browser store ${name} has no configuration to rebuild from`);
        let rebuilt: number | undefined;
        while (rebuilt === undefined) {
          leftovers();
          const next = new WasmDatabase(s3, new pool.OpfsSAHPoolDb(REBUILT_FILE));
          try {
            migrate(next);
            rebuilt = (await rebuildCatalog(next, prepareStatements(next), log, config)).seq;
          } catch (e) {
            next.close();
            leftovers();
            // Damage inside the log: with `force`, the segment is cut there — what follows kept
            // beside the log (`log-cut-<segment>-<offset>`) — and the rebuild goes on from what
            // the log holds before it, as Node's `kura rebuild --force` (its messages name both).
            const at = e as { segment?: unknown; offset?: unknown };
            if (!options.force || !(e instanceof CorruptDataError) || typeof at.segment !== 'string' || typeof at.offset !== 'number') throw e;
            cut.push(await log.cutSegment(at.segment, at.offset));
            continue;
          }
          next.close();
        }
        seq = rebuilt;
        const had = appliedSeq(s3, pool);
        if (had !== undefined && had > seq && !options.force) {
          leftovers();
          throw new CorruptDataError(
            `the database has applied commit ${had}, and the log holds commits up to ${seq} only: the log lost commits (deleted or damaged) that the database still has; the database was kept. Rebuilding from this log would lose them: BrowserStore.rebuild(name, { force: true }) if that is what you want`,
            'log-behind',
          );
        }
        const bytes = pool.exportFile(REBUILT_FILE);
        for (const f of pool.getFileNames()) if (!f.startsWith(REBUILT_FILE)) deletedFiles += pool.unlink(f) ? 1 : 0;
        await pool.importDb(DB_FILE, bytes);
        leftovers();
      } finally {
        pool.pauseVfs();
      }
    } finally {
      unlock();
    }
    await (await BrowserStore.openOpfs(name)).close();
    return { deletedFiles, seq, ...(cut.length ? { cut } : {}) };
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
