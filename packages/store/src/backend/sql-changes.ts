/**
 * Whether a database may have changed since a caller last looked, for work skipped when it has
 * not (decision 0070): semantic search brings its in-memory rows in step with doc_vectors and
 * asks which documents wait for embedding before every query — a count and a scan, ~7 ms of
 * a query at 100,000 chunks, for tables that change far less often than they are searched.
 *
 * Two numbers SQLite keeps say it: `data_version` changes when another connection commits
 * (another process, or a thread of this one), `total_changes()` when a statement of this
 * connection changes a row — rolled back or not, so a change undone still counts as one. What
 * a look sees inside a write transaction of this connection may yet be rolled back: it gives
 * no mark, and the next look looks again.
 */
import type { SqlDatabase, SqlStatement } from './sql.js';

/** The database's state as one read saw it; equal marks: nothing changed in between. */
export type ChangeMark = string;

export class SqlChanges {
  readonly #now: SqlStatement<{ c: number; v: number }>;

  constructor(readonly db: SqlDatabase) {
    this.#now = db.prepare('SELECT total_changes() AS c, data_version AS v FROM pragma_data_version');
  }

  /**
   * Runs `fn` in one read transaction, given the state it reads (`undefined` inside a write
   * transaction of this connection): a caller keeps the mark of a look whose answer it
   * remembers, and passes over the next look while the mark is the same.
   */
  read<T>(fn: (mark: ChangeMark | undefined) => T): T {
    const settled = !this.db.inTransaction();
    return this.db.read(() => {
      if (!settled) return fn(undefined);
      const { c, v } = this.#now.get()!;
      return fn(`${c}:${v}`);
    });
  }
}
