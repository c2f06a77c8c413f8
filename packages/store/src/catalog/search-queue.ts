/**
 * The search index's queue (FORMAT.md §10, decision 0033): what a commit changed that the
 * index must catch up with, as rows of entry ids. A commit writes one row however many
 * entries it changed (at most QUEUE_ROW_MAX ids a row), so a batch of 500 metadata changes
 * costs the queue two rows, not 500. The indexer deletes a row once it has indexed every id
 * in it; an entry changed while the indexer read it is in a newer row, and is read again.
 */
import type { Statements } from './statements.js';

export const QUEUE_ROW_MAX = 256;

/** Queues entries for (re)indexing, inside the caller's transaction. */
export function enqueue(st: Statements, ids: readonly number[]): void {
  for (let i = 0; i < ids.length; i += QUEUE_ROW_MAX) st.queueAdd.run(JSON.stringify(ids.slice(i, i + QUEUE_ROW_MAX)));
}

/** Queues every entry (a rebuilt database, or one whose index was dropped). */
export const ENQUEUE_ALL = `INSERT INTO search_queue(entries)
  SELECT json_group_array(id) FROM (SELECT id, (row_number() OVER (ORDER BY id) - 1) / ${QUEUE_ROW_MAX} AS g FROM entries)
  GROUP BY g ORDER BY g`;
