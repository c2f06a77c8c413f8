/**
 * The search index's queue (FORMAT.md §10, decision 0033): what a commit changed that the
 * index must catch up with, as rows of entry ids. A commit writes one row however many
 * entries it changed (at most QUEUE_ROW_MAX ids a row), so a batch of 500 metadata changes
 * costs the queue two rows, not 500, and so does a commit batch of 500 puts. The indexer deletes a row once it has indexed every id
 * in it; an entry changed while the indexer read it is in a newer row, and is read again.
 */
import type { SqlStatement } from '../backend/sql.js';

export const QUEUE_ROW_MAX = 256;

/**
 * The entry ids the open write transaction changed, written as queue rows when it commits
 * (`flush`, called by the commit log just before COMMIT): a batch of commits (decision 0028)
 * writes one row per QUEUE_ROW_MAX ids, not one per commit. Operations only `add`; whoever
 * runs the transaction flushes it, or `undoTo`s the mark it took when a savepoint rolls back.
 */
export class QueuedEntries {
  #ids: number[] = [];

  constructor(private readonly insert: SqlStatement) {}

  add(id: number): void {
    this.#ids.push(id);
  }

  addAll(ids: readonly number[]): void {
    for (const id of ids) this.#ids.push(id);
  }

  /** Where a savepoint began: `undoTo` it drops what the savepoint added. */
  get mark(): number {
    return this.#ids.length;
  }

  undoTo(mark: number): void {
    this.#ids.length = Math.min(this.#ids.length, mark);
  }

  /** Writes the rows, inside the transaction that made the changes. */
  flush(): void {
    const ids = this.#ids;
    if (ids.length === 0) return;
    this.#ids = [];
    this.write(ids);
  }

  /** Writes rows of `ids` now, leaving what is pending alone (the indexer requeues entries); answers the rows' ids. */
  write(ids: readonly number[]): number[] {
    const rows: number[] = [];
    for (let i = 0; i < ids.length; i += QUEUE_ROW_MAX) rows.push(Number(this.insert.run(JSON.stringify(ids.slice(i, i + QUEUE_ROW_MAX))).lastInsertRowid));
    return rows;
  }
}

/** Queues every entry (a rebuilt database, or one whose index was dropped). */
export const ENQUEUE_ALL = `INSERT INTO search_queue(entries)
  SELECT json_group_array(id) FROM (SELECT id, (row_number() OVER (ORDER BY id) - 1) / ${QUEUE_ROW_MAX} AS g FROM entries)
  GROUP BY g ORDER BY g`;
