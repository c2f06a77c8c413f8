/**
 * Search through history (FORMAT.md §10, decision 0056): older versions of paths and the files
 * of snapshots. The keyword index (`search`) holds what entries show — each path's latest
 * version; the history index (`history`, rowid = documents.id) holds, once each, the text of
 * every other stored document: an older version, a snapshot's file no path shows. Its `names`
 * column holds a token (`p` and the id of its `history_paths` row) for each path the document
 * is a version of, so that one query checks which versions of a few paths match. What names a
 * document (versions, snapshot trees) is looked up when a hit is made. History spans
 * (history-spans.ts) rank paths' versions in runs.
 *
 * Both follow the documents lazily: a history search first takes out the documents shown again
 * or deleted since, brings the spans up to date, then indexes the documents no entry shows that
 * the history index lacks — so puts pay nothing for it, and the first search through history
 * after many changes pays for them (as a first keyword search pays for a large add).
 */
import type { SqlDatabase } from '../backend/sql.js';
import { FtsTotals } from './fts-totals.js';
import { BATCH_TEXT, historyText, writeHistoryDocs, type HistorySource, type HistoryText } from './history-docs.js';
import { syncSpans } from './history-spans.js';

export type { HistorySource } from './history-docs.js';

/** Documents indexed per transaction, at most. */
const BATCH = 128;

/** Documents no entry shows and the history index lacks (older versions, snapshots' files). */
const MISSING = `SELECT d.id AS id FROM documents d
  WHERE NOT EXISTS (SELECT 1 FROM entries e WHERE e.doc_id = d.id) AND NOT EXISTS (SELECT 1 FROM historic_docs h WHERE h.doc_id = d.id)
  ORDER BY d.id LIMIT ${BATCH}`;
/** Documents the history index holds that an entry shows again, or that are gone. */
const STALE = `SELECT h.doc_id AS id FROM historic_docs h
  WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.id = h.doc_id) OR EXISTS (SELECT 1 FROM entries e WHERE e.doc_id = h.doc_id)`;

/**
 * Brings the history index and spans up to date (see above); `pause` is awaited between
 * batches (the event loop's turns, or a background run yielding to puts: true stops it,
 * unfinished). One run at a time per database: a second waits for the first, then looks again
 * (two at once would both write a path's spans).
 */
export async function syncHistory(s: HistorySource, pause: () => Promise<boolean | void> = async () => {}): Promise<boolean> {
  for (;;) {
    const running = runs.get(s.db);
    if (!running) break;
    await running.catch(() => undefined);
  }
  // Nothing committed since the last sync to the end: nothing to do. (The queries below scan
  // every document and version; a search through history asked again and again must not pay.)
  const seq = s.db.read(() => s.db.prepare<{ seq: number }>('SELECT seq FROM log_state WHERE id = 1').get()?.seq ?? -1);
  if (seq >= 0 && syncedAt.get(s.db) === seq) return true;
  const run = syncOnce(s, pause);
  runs.set(s.db, run);
  try {
    const done = await run;
    if (done && seq >= 0) syncedAt.set(s.db, seq);
    return done;
  } finally {
    runs.delete(s.db);
  }
}

/**
 * How many documents the history index lacks (older versions, snapshots' files stored since it
 * was last brought up to date): what a read-only store, which cannot bring it up to date,
 * searches without (it answered nothing for them, and said nothing: a trial). Call inside a
 * read transaction.
 */
export function historyBehind(db: SqlDatabase): number {
  return db.prepare<{ n: number }>(`SELECT COUNT(*) AS n FROM documents d WHERE NOT EXISTS (SELECT 1 FROM entries e WHERE e.doc_id = d.id) AND NOT EXISTS (SELECT 1 FROM historic_docs h WHERE h.doc_id = d.id)`).get()!.n;
}

/** The log position (log_state.seq) each database's history index was last brought up to date at. */
const syncedAt = new WeakMap<SqlDatabase, number>();
/** The sync running on each database. */
const runs = new WeakMap<SqlDatabase, Promise<boolean>>();

async function syncOnce(s: HistorySource, pause: () => Promise<boolean | void>): Promise<boolean> {
  const stale = s.db.read(() => s.db.prepare<{ id: number }>(STALE).all());
  if (stale.length) {
    s.db.transaction(() => {
      const del = s.db.prepare('DELETE FROM history WHERE rowid = ?');
      const forget = s.db.prepare('DELETE FROM historic_docs WHERE doc_id = ?');
      for (const { id } of stale) {
        del.run(id);
        forget.run(id);
      }
    });
  }
  // Spans first: the documents they read are written to the history index with them (named by
  // their paths). Then the documents no path's spans read: snapshots' files, and those of
  // paths unchanged whose entries moved on from them.
  const done = (await syncSpans(s, pause)) && (await syncMissing(s, pause));
  // The rows this took out (a run stopped midway too) left FTS5's BM25 totals counting them:
  // made again from the rows there are (fts-totals.ts). Its transactions delete and insert in
  // any order, which `forget` cannot follow; each made here is committed.
  for (const [table, columns] of [['history', 2], ['history_span_text', 1]] as const) new FtsTotals(s.db, table, columns).mend();
  return done;
}

/** Indexes the documents no entry shows that the history index lacks; false when `pause` said to stop. */
async function syncMissing(s: HistorySource, pause: () => Promise<boolean | void>): Promise<boolean> {
  for (;;) {
    const ids = s.db.read(() => s.db.prepare<{ id: number }>(MISSING).all());
    if (ids.length === 0) return true;
    const texts = new Map<number, HistoryText>();
    let textRead = 0;
    for (const { id } of ids) {
      const t = await historyText(s, id);
      texts.set(id, t);
      if ((textRead += t.text.length) >= BATCH_TEXT) break;
    }
    // (A document shown or dropped since it was read is left out, and MISSING no longer lists it.)
    s.db.transaction(() => writeHistoryDocs(s, texts));
    if ((await pause()) === true) return false;
  }
}
