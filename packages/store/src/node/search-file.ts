/**
 * A store of files keeps its keyword index in a database of its own, `search.db` beside
 * `kura.db` (FORMAT.md §10, decision 0081), written by a thread of its own: tokenizing text
 * for FTS5 costs about as much CPU as ingesting it, and on the store's thread it ran after the
 * ingest (at the close, or between puts) while the machine's other core stood idle. On the
 * catalog's connection those writes would also hold kura.db's write lock. Searches read it
 * through a read-only connection of their own, with the catalog attached.
 *
 * The two files agree through the catalog's queue: an entry's queue row is deleted only after
 * the index's transaction with its row has committed (synchronous = FULL), so a crash between
 * the two indexes it again. A `search.db` that is missing, or made for another catalog (its
 * `index_of` row is not the catalog's `search_file` row: a copied or restored `kura.db`), is
 * emptied and every entry queued.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { CorruptDataError } from '@kura/core';
import type { SqlDatabase } from '../backend/sql.js';
import { ENQUEUE_ALL } from '../catalog/search-queue.js';
import { storageError } from '../errors.js';
import { FtsTotals } from '../search/fts-totals.js';
import { IndexStatements, indexProblems, SEARCH_TABLE, termless, type IndexRow, type IndexWriter, type SearchIndex } from '../search/index-writer.js';
import { openSqlite } from './sqlite.js';
import type { SearchAnswer, SearchCall } from './search-worker.js';

export const SEARCH_FILE = 'search.db';
/** `index_of`'s count of the index's writes (decision 0084). */
const INDEX_BATCH = 'batch INTEGER NOT NULL DEFAULT 0';

/** The index beside the catalog in `dir` (the catalog migrated: it has `search_file`). */
export function openSearchFile(dir: string, catalogFile: string, catalog: SqlDatabase, readonly: boolean): SearchIndex {
  const path = join(dir, SEARCH_FILE);
  // A catalog from before the index had its own file, read without migrating it: its own table.
  if (readonly && !hasTable(catalog, 'search_file')) return { db: catalog, writer: undefined, check: (thorough) => indexProblems(catalog, 'main', thorough, /"search"/), remake: undefined, close: async () => undefined };
  if (!readonly) matchOrRemake(path, catalog);
  else if (!existsSync(path)) {
    // Read-only, and never indexed here: an empty index (nothing may be written), beside the catalog.
    const db = openSqlite('');
    db.exec(`CREATE VIRTUAL TABLE ${SEARCH_TABLE}`);
    db.exec(`ATTACH ${quote(catalogFile)} AS catalog`);
    return { db, writer: undefined, check: () => [], remake: undefined, close: async () => db.close() };
  }
  // The catalog's connection attaches it where that connection is read-only already; a writer's
  // searches get a read-only connection of their own: attached to the writer's connection, the
  // index's file would take part in every BEGIN IMMEDIATE there, and its write lock with it.
  const db = readonly ? catalog : openSqlite(catalogFile, { readonly: true });
  try {
    db.exec(`ATTACH ${quote(path)} AS idx`);
  } catch (e) {
    if (db !== catalog) db.close();
    throw e;
  }
  const writer = readonly ? undefined : new WorkerIndexWriter(path);
  return {
    db,
    writer,
    check: (thorough) => {
      const found = indexProblems(db, 'idx', thorough);
      return found.length > 0 ? found : notTheCatalogs(db);
    },
    remake: writer && ((endBatch) => remake(writer, catalog, endBatch)),
    close: async () => {
      // The readers' connection first: the writer's, closed last, then checkpoints the WAL into
      // search.db and deletes it. Closed before a reader, it left the WAL (6 MiB after five
      // typescript releases) beside the index, which a read-only connection cannot take in.
      try {
        if (db !== catalog) db.close();
        else db.exec('DETACH idx');
      } finally {
        await writer?.close();
      }
    },
  };
}

/**
 * Why the attached index is not the catalog's as it stands (decision 0084), on a connection
 * to the catalog with the index attached as `idx`: another catalog's id, or fewer batches than
 * the catalog took as written. Empty: it is.
 */
function notTheCatalogs(db: SqlDatabase): string[] {
  // (A catalog or an index from before the batches were counted, opened read-only: unmigrated.)
  const counted = (schema: string, table: string) => db.prepare('SELECT 1 FROM pragma_table_info(?, ?) WHERE name = ?').get(table, schema, 'batch') !== undefined;
  if (!counted('main', 'search_file') || !counted('idx', 'index_of')) return [];
  const ids = db.read(() => {
    // (The catalog's row first, as matchCatalog reads them.)
    const theirs = db.prepare<{ id: string; batch: number }>('SELECT id, batch FROM main.search_file').get();
    const mine = db.prepare<{ catalog: string; batch: number }>('SELECT catalog, batch FROM idx.index_of').get();
    return { theirs, mine };
  });
  const { theirs, mine } = ids;
  if (!theirs || !mine) return [];
  if (mine.catalog !== theirs.id) return [`search.db was made for another catalog (its id ${mine.catalog}, the catalog's ${theirs.id})`];
  if (mine.batch < theirs.batch) {
    return [`search.db holds ${mine.batch} batches of writes, and the catalog took ${theirs.batch} as written: the index is older than the catalog (a copy restored alone?)`];
  }
  return [];
}

function hasTable(db: SqlDatabase, name: string): boolean {
  return db.prepare<{ n: number }>("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?").get(name)!.n > 0;
}

function quote(path: string): string {
  return `'${path.replaceAll("'", "''")}'`;
}

/**
 * matchCatalog; a search.db SQLite cannot read (not a database, a damaged page on the way) is
 * derived data: it is deleted and made again, where its damage would otherwise keep the whole
 * store from opening.
 */
function matchOrRemake(path: string, catalog: SqlDatabase): void {
  try {
    matchCatalog(path, catalog);
  } catch (e) {
    if (!(e instanceof CorruptDataError && e.reason === 'database')) throw e;
    for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
    matchCatalog(path, catalog);
  }
}

/**
 * Makes `search.db` if it is missing, and empties it and queues every entry unless it is the
 * catalog's and has every batch the catalog took as written (decision 0084).
 */
function matchCatalog(path: string, catalog: SqlDatabase): void {
  const file = openSqlite(path);
  try {
    file.transaction(() => {
      file.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${SEARCH_TABLE}`);
      file.exec(`CREATE TABLE IF NOT EXISTS index_of (catalog TEXT NOT NULL, ${INDEX_BATCH}) STRICT`);
      // (An index made before its writes were numbered: from 0, as the catalog's.)
      if (!file.prepare("SELECT 1 FROM pragma_table_info('index_of') WHERE name = 'batch'").get()) file.exec(`ALTER TABLE index_of ADD COLUMN ${INDEX_BATCH}`);
    });
    // The catalog's first: the index commits a batch before the catalog takes it as written, so
    // read in this order a writer in another process cannot make the two seem to disagree.
    const theirs = catalog.prepare<{ id: string; batch: number }>('SELECT id, batch FROM search_file').get();
    const mine = file.prepare<{ catalog: string; batch: number }>('SELECT catalog, batch FROM index_of').get();
    if (mine !== undefined && theirs !== undefined && mine.catalog === theirs.id && mine.batch >= theirs.batch) {
      // BM25's totals made true before the first search (decision 0082), not when the writer
      // thread first starts: a store that only searches never starts it. An index whose rows
      // hold words and no term (decision 0083) is made again, as another catalog's is.
      const totals = new FtsTotals(file, 'search', 4);
      totals.mend();
      if (!termless(file, 'main', totals)) return;
    }
    const id = randomBytes(16).toString('hex');
    // The index first: a crash between the two leaves them disagreeing, and the next open does this again.
    file.transaction(() => {
      file.exec(`INSERT INTO search(search) VALUES('delete-all')`);
      file.exec('DELETE FROM index_of');
      file.prepare('INSERT INTO index_of(catalog) VALUES (?)').run(id);
    });
    catalog.transaction(() => {
      catalog.exec('DELETE FROM search_file');
      catalog.prepare('INSERT INTO search_file(id) VALUES (?)').run(id);
      catalog.exec('DELETE FROM search_queue');
      catalog.exec(ENQUEUE_ALL);
    });
  } finally {
    file.close();
  }
}

/**
 * Makes the index anew while the store is open (a damaged one: store-index.ts), with no
 * indexing batch in flight. The file first stops being the catalog's (emptied, owned by no
 * catalog: one transaction), then the catalog queues every entry under a new id, then the file
 * takes that id. A crash before the last step leaves ids that differ, and the next open does it
 * all again (matchCatalog).
 */
async function remake(writer: WorkerIndexWriter, catalog: SqlDatabase, endBatch: () => void): Promise<void> {
  await writer.own('', true);
  const id = randomBytes(16).toString('hex');
  endBatch();
  catalog.transaction(() => {
    catalog.exec('DELETE FROM search_file');
    catalog.prepare('INSERT INTO search_file(id) VALUES (?)').run(id);
    catalog.exec(`DELETE FROM search_queue; ${ENQUEUE_ALL}`);
  });
  await writer.own(id, false);
}

/** A call after the writer's close. */
function closedIndex<T>(): Promise<T> {
  return Promise.reject(storageError(Object.assign(new Error('the search index is closed'), { code: 'SQLITE_MISUSE' })));
}

/** A batch's text: what FTS5 tokenizes. */
function textOf(rows: readonly IndexRow[]): number {
  let n = 0;
  for (const [, fields] of rows) if (fields) for (const f of fields) n += f === null ? 0 : typeof f === 'string' ? f.length : f.byteLength;
  return n;
}

function workerUrl(): URL {
  const beside = new URL('./search-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL('../../dist/node/search-worker.js', import.meta.url); // from the TS sources (tests)
}

type Pending = { resolve: (v: unknown) => void; reject: (e: unknown) => void };

/**
 * Text (string lengths, and bytes of ASCII bodies) a store writes into its index on its own
 * thread before the writer thread starts. Starting that thread costs ~100 ms (measured: a
 * one-shot open, put and close of a small file took 130 ms to close with it, 6 ms before
 * decision 0081): a `kura add` of one file, or a server's first few puts, should not pay it;
 * 256 KiB of FTS5's tokenizing is ~3 ms of this thread, once.
 */
const HERE_TEXT = 256 << 10;

/**
 * The main thread's side of the writer thread: started on the first call past HERE_TEXT (until
 * then, and for a store that indexes little, the index is written here), kept from holding
 * the process open while no call waits.
 */
class WorkerIndexWriter implements IndexWriter {
  readonly threaded = true;
  #worker: Worker | undefined;
  #next = 0;
  readonly #pending = new Map<number, Pending>();
  #closed = false;
  /** The index's connection on this thread, until the writer thread starts. */
  #here: { db: ReturnType<typeof openSqlite>; st: IndexStatements } | undefined;
  #hereLeft = HERE_TEXT;

  constructor(readonly path: string) {}

  write(rows: readonly IndexRow[]): Promise<number | undefined> {
    if (!this.#worker && !this.#closed) {
      const text = textOf(rows);
      if (text <= this.#hereLeft) {
        this.#hereLeft -= text;
        return this.#onThisThread((st) => st.write(rows));
      }
      this.#hereLeft = 0;
    }
    return this.#call({ op: 'write', rows: rows as IndexRow[] }) as Promise<number | undefined>;
  }

  merge(pages: number): Promise<boolean> {
    if (this.#here) return this.#onThisThread((st) => st.merge(pages));
    return this.#call({ op: 'merge', pages }) as Promise<boolean>;
  }

  vacuum(pages: number): Promise<number> {
    if (this.#here) return this.#onThisThread((st) => st.vacuum(pages));
    return this.#call({ op: 'vacuum', pages }) as Promise<number>;
  }

  clear(): Promise<void> {
    if (this.#here) return this.#onThisThread((st) => st.clear());
    return this.#call({ op: 'clear' }) as Promise<void>;
  }

  /** Gives the index to the catalog `owner` (its `index_of` row), emptying it first if `clear`. */
  own(owner: string, clear: boolean): Promise<void> {
    if (this.#here) return this.#onThisThread((st) => st.own(owner, clear));
    return this.#call({ op: 'own', owner, clear }) as Promise<void>;
  }

  /** Runs `fn` on this thread's connection (opened on first use), as the writer thread would. */
  #onThisThread<T>(fn: (st: IndexStatements) => T): Promise<T> {
    if (this.#closed) return closedIndex();
    try {
      if (!this.#here) {
        const db = openSqlite(this.path);
        try {
          db.setDurability('full'); // (as the writer thread's: search-worker.ts)
          this.#here = { db, st: new IndexStatements(db, true) };
        } catch (e) {
          db.close();
          throw e;
        }
      }
      return Promise.resolve(fn(this.#here.st));
    } catch (e) {
      return Promise.reject(storageError(e));
    }
  }

  bytes(): number {
    try {
      return statSync(this.path).size;
    } catch {
      return 0;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeHere();
    const worker = this.#worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    await this.#send({ op: 'close' });
    worker.ref(); // (its answer let it go: until it has exited, it keeps the process alive)
    await exited;
  }

  #call(call: DistributiveOmit<SearchCall, 'id'>): Promise<unknown> {
    if (this.#closed) return closedIndex();
    return this.#send(call);
  }

  #send(call: DistributiveOmit<SearchCall, 'id'>): Promise<unknown> {
    const worker = this.#start();
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ ...call, id });
    });
  }

  /** This thread's connection closed (the writer thread's, closed last, takes the WAL in). */
  #closeHere(): void {
    const here = this.#here;
    this.#here = undefined;
    here?.db.close();
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    this.#closeHere(); // (everything is written there from now on)
    const worker = new Worker(workerUrl(), { workerData: { path: this.path } });
    worker.on('message', (m: SearchAnswer) => {
      const p = this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id);
      if (this.#pending.size === 0) worker.unref();
      if ('done' in m) p.resolve(m.done);
      else p.reject(storageError(Object.assign(new Error(m.failed.message), { code: m.failed.code })));
    });
    const fail = (e: unknown) => {
      if (this.#worker === worker) this.#worker = undefined; // a later call starts another
      for (const p of this.#pending.values()) p.reject(e);
      this.#pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the search index's writer ended (exit code ${code})`)));
    worker.unref();
    return (this.#worker = worker);
  }
}

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;
