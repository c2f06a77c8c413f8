/**
 * Where the keyword index's rows are written (FORMAT.md §10, decision 0081). The indexer
 * (indexer.ts) reads what to index on the store's thread and hands the rows here; a store of
 * files writes them on a thread of its own into `search.db` (node/search-file.ts), a store in
 * memory or in a browser into its own database (`InlineIndex`, below).
 */
import { CorruptDataError } from '@kura/core';
import type { SqlDatabase } from '../backend/sql.js';
import { ENQUEUE_ALL } from '../catalog/search-queue.js';
import { deletesKeepTotals, FtsTotals } from './fts-totals.js';

/** The keyword index: an entry's path, tags, metadata and text, by entry id (contentless: FORMAT.md §10). */
export const SEARCH_TABLE = `search USING fts5(path, tags, meta, body, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2')`;

/** An entry's row of the index: path, tags, metadata, body (ASCII text as its bytes). */
export type IndexFields = [string | null, string, string, string | Uint8Array];

/** An entry's new row, or `null`: the entry has none (deleted, or not indexed). */
export type IndexRow = readonly [id: number, fields: IndexFields | null];

export interface IndexWriter {
  /** Whether rows are written on a thread of their own (the store's thread only waits). */
  readonly threaded: boolean;
  /**
   * Replaces these entries' rows in one transaction; resolves once it is durable, with the
   * batch number that transaction gave the index (a file's: `index_of.batch`, decision 0084),
   * or undefined where the index is the catalog's own table.
   */
  write(rows: readonly IndexRow[]): Promise<number | undefined>;
  /** One step of merging the index's segments (`pages` of work); true when it did work. */
  merge(pages: number): Promise<boolean>;
  /** Gives up to `pages` free pages back to the file system (0: none); answers how many are left free. */
  vacuum(pages: number): Promise<number>;
  /** Removes every row (the catalog was replaced: everything is queued again). */
  clear(): Promise<void>;
  /** The index database's size (bytes): what its compaction weighs the text indexed since against. */
  bytes(): number;
  /** Ends the writing; later calls fail. */
  close(): Promise<void>;
}

/** The index a store searches through: the connection its queries read, and where rows go. */
export interface SearchIndex {
  /**
   * The connection keyword queries run on: it reads the index and the catalog together. The
   * catalog's own connection (inline), or one of its own (a file's index: node/search-file.ts).
   */
  readonly db: SqlDatabase;
  /** Undefined where the store is read-only. */
  readonly writer: IndexWriter | undefined;
  /**
   * What SQLite finds wrong with the index (`PRAGMA quick_check`, FTS5's own checks of its
   * segments and structure; `thorough`: integrity_check) and whether BM25's totals are its
   * rows' (fts-totals.ts). Empty: nothing found.
   */
  check(thorough: boolean): string[];
  /**
   * Empties the index and queues every entry again, so that the indexer makes it anew (a
   * damaged index: store-index.ts). Run while no indexing batch is in flight; `endBatch` ends
   * the catalog's open batch (its writes then commit on their own). Undefined where the store
   * is read-only.
   */
  readonly remake: ((endBatch: () => void) => Promise<void>) | undefined;
  /** Closes what the index opened (the catalog's connection is its owner's). */
  close(): Promise<void>;
}

/**
 * The problems `PRAGMA <schema>.quick_check` (or integrity_check) reports in the database that
 * holds the index (those `only` matches, where that database holds more than the index); else
 * BM25's totals where they are not the sums of the index's rows; else an index that is
 * `termless`. Empty: nothing found.
 */
export function indexProblems(db: SqlDatabase, schema: string, thorough: boolean, only?: RegExp): string[] {
  const pragma = thorough ? 'integrity_check' : 'quick_check';
  let found: string[];
  try {
    found = db.read(() => {
      // A query first, in the same read transaction: FTS5 reads its structure record again
      // only when a query finds the database changed by another connection, and the pragma's
      // check uses the one it holds (catalog-verify.ts met the same).
      db.prepare(`SELECT rowid FROM ${schema}.search WHERE search MATCH 'kura' LIMIT 1`).all();
      return db.prepare<Record<string, string>>(`PRAGMA ${schema}.${pragma}`).all();
    })
      .map((r) => String(Object.values(r)[0]))
      .filter((line) => line !== 'ok' && (!only || only.test(line)));
  } catch (e) {
    // (The adapters type SQLite's SQLITE_CORRUPT as CORRUPT_DATA, reason `database`.)
    if (!(e instanceof CorruptDataError && e.reason === 'database')) throw e;
    return [e.message];
  }
  if (found.length > 0) return found;
  const totals = new FtsTotals(db, `${schema}.search`, 4);
  try {
    if (!totals.agrees()) return ["BM25's totals (search_data row 1) are not the sums of search_docsize"];
  } catch (e) {
    return [`BM25's totals (search_data row 1) cannot be read: ${(e as Error).message}`];
  }
  if (termless(db, schema, totals)) found.push('the index holds rows with words and no term: its structure record reads as empty');
  return found;
}

/**
 * Whether the index's rows hold words and it has not one term: a structure record cut below
 * its 4-byte cookie reads as an index of no segments, which no check of SQLite's finds.
 */
export function termless(db: SqlDatabase, schema: string, totals = new FtsTotals(db, `${schema}.search`, 4)): boolean {
  if (totals.tokens() === 0) return false;
  const vocab = `kura_vocab_${schema}`;
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.${vocab} USING fts5vocab(${schema}, search, 'row')`);
  try {
    return !db.prepare(`SELECT 1 FROM temp.${vocab} LIMIT 1`).get();
  } finally {
    db.exec(`DROP TABLE temp.${vocab}`);
  }
}

/** A database's page count, free pages or page size. */
export function pragmaNumber(db: SqlDatabase, name: string): number {
  return Number(Object.values(db.prepare<Record<string, number>>(`PRAGMA ${name}`).get() ?? {})[0] ?? 0);
}

/** The statements that write the index, on a connection whose `search` table is the index. */
export class IndexStatements {
  readonly #del;
  readonly #ins;
  readonly #changes;
  /** A file's index numbers its writes (decision 0084); the catalog's own table does not. */
  readonly #number;
  /** Where FTS5 leaves a deleted row in its BM25 totals, the writer takes it out (fts-totals.ts). */
  readonly #totals: FtsTotals | undefined;

  /**
   * On a connection that writes the index, outside a transaction: the totals are made true
   * first. `numbered`: the index is a file of its own, whose `index_of` row counts its writes.
   */
  constructor(
    readonly db: SqlDatabase,
    numbered = false,
  ) {
    this.#del = db.prepare('DELETE FROM search WHERE rowid = ?');
    this.#ins = db.prepare('INSERT INTO search(rowid, path, tags, meta, body) VALUES (?, ?, ?, ?, ?)');
    this.#changes = db.prepare<{ n: number }>('SELECT total_changes() AS n');
    this.#number = numbered ? db.prepare<{ batch: number }>('UPDATE index_of SET batch = batch + 1 RETURNING batch') : undefined;
    const totals = new FtsTotals(db, 'search', 4);
    totals.mend();
    if (!deletesKeepTotals(db)) this.#totals = totals;
  }

  /** The batch's number where the index is numbered (`IndexWriter.write`). */
  write(rows: readonly IndexRow[]): number | undefined {
    // An entry's last row in the batch is its row (the totals take each replaced row out once).
    const last = new Map<number, IndexFields | null>();
    for (const [id, fields] of rows) {
      last.delete(id);
      last.set(id, fields);
    }
    return this.db.transaction(() => {
      this.#totals?.forget(last.keys());
      for (const [id, fields] of last) {
        this.#del.run(id);
        if (fields) this.#ins.run(id, ...fields);
      }
      return this.#number?.get()?.batch;
    });
  }

  merge(pages: number): boolean {
    // A merge that did work changes two rows or more of the index (FTS5's documentation).
    return this.db.transaction(() => {
      const before = this.#changes.get()!.n;
      this.db.exec(`INSERT INTO search(search, rank) VALUES('merge', -${pages})`);
      return this.#changes.get()!.n - before >= 2;
    });
  }

  vacuum(pages: number): number {
    // (incremental_vacuum(0) would free every page at once: 0 asks only how many there are.)
    if (pages > 0) this.db.transaction(() => this.db.exec(`PRAGMA incremental_vacuum(${pages})`));
    return pragmaNumber(this.db, 'freelist_count');
  }

  clear(): void {
    this.db.transaction(() => this.db.exec(`INSERT INTO search(search) VALUES('delete-all')`));
  }

  /**
   * Gives a file's index to the catalog `owner` (its `index_of` row: node/search-file.ts),
   * emptying it first if `clear`, in one transaction.
   */
  own(owner: string, clear: boolean): void {
    this.db.transaction(() => {
      if (clear) this.clear();
      this.db.exec('DELETE FROM index_of');
      this.db.prepare('INSERT INTO index_of(catalog) VALUES (?)').run(owner);
    });
  }

  bytes(): number {
    return pragmaNumber(this.db, 'page_count') * pragmaNumber(this.db, 'page_size');
  }
}

/**
 * The index as a table of the catalog's own database, written on the store's thread: a store
 * in memory, or in a browser (one connection, one thread). Its writes are the catalog's
 * transactions, so nothing can disagree after a crash.
 */
export function inlineIndex(db: SqlDatabase, writable: boolean): SearchIndex {
  if (writable) db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${SEARCH_TABLE}`);
  const st = writable ? new IndexStatements(db) : undefined;
  const writer: IndexWriter | undefined = st && {
    threaded: false,
    write: async (rows) => st.write(rows),
    merge: async (pages) => st.merge(pages),
    vacuum: async (pages) => st.vacuum(pages),
    clear: async () => st.clear(),
    bytes: () => st.bytes(),
    close: async () => undefined,
  };
  return {
    db,
    writer,
    // (The catalog's database: what its own checks find elsewhere is catalog-verify's to say.)
    check: (thorough) => indexProblems(db, 'main', thorough, /"search"/),
    // One database: the index emptied and every entry queued in one transaction.
    remake:
      st &&
      (async (endBatch) => {
        endBatch();
        db.transaction(() => {
          st.clear();
          db.exec(`DELETE FROM search_queue; ${ENQUEUE_ALL}`);
        });
      }),
    close: async () => undefined,
  };
}
