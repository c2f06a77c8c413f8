/**
 * Search through history (FORMAT.md §10, decision 0056): older versions of paths and the files
 * of snapshots. The keyword index (`search`) holds what entries show — each path's latest
 * version; the history index (`history`, rowid = documents.id) holds, once each, the text of
 * every other stored document: an older version, a snapshot's file no path shows. Together
 * they index every document's text once, however many versions, paths and snapshots hold it;
 * what names a document (versions, snapshot trees) is looked up when a hit is made.
 *
 * The history index follows the documents lazily: a history search first takes out the
 * documents shown again or deleted since, then indexes those no entry shows that it lacks — so
 * puts pay nothing for it, and the first search through history after many changes pays for
 * them (as a first keyword search pays for a large add).
 */
import type { SqlDatabase } from '../backend/sql.js';
import type { Reader } from '../bytes/read.js';
import type { Statements } from '../catalog/statements.js';
import type { ExtractCaps, Extracted } from '../extract/caps.js';
import type { ExtractKind } from '../extract/kind.js';
import { documentBody, extractDocument, saveExtracted } from './doc-text.js';
import { INDEXED_TEXT_MAX } from './text.js';
import { spaceWords } from './words.js';

/** Documents indexed per transaction, and about this much text at most. */
const BATCH = 128;
const BATCH_TEXT = 4 << 20;

export interface HistorySource {
  db: SqlDatabase;
  st: Statements;
  reader: Reader;
  extract?: ((kind: ExtractKind, bytes: Uint8Array, caps: ExtractCaps) => Promise<Extracted>) | undefined;
}

/** Documents no entry shows and the history index lacks (older versions, snapshots' files). */
const MISSING = `SELECT d.id AS id FROM documents d
  WHERE NOT EXISTS (SELECT 1 FROM entries e WHERE e.doc_id = d.id) AND NOT EXISTS (SELECT 1 FROM historic_docs h WHERE h.doc_id = d.id)
  ORDER BY d.id LIMIT ${BATCH}`;
/** Documents the history index holds that an entry shows again, or that are gone. */
const STALE = `SELECT h.doc_id AS id FROM historic_docs h
  WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.id = h.doc_id) OR EXISTS (SELECT 1 FROM entries e WHERE e.doc_id = h.doc_id)`;

/**
 * Brings the history index up to date (see above); `pause` is awaited between batches (the
 * event loop's turns, or a background run yielding to puts: true stops it, unfinished).
 */
export async function syncHistory(s: HistorySource, pause: () => Promise<boolean | void> = async () => {}): Promise<boolean> {
  // Nothing committed since the last sync to the end: nothing to do. (Both queries below scan
  // every document; a search through history asked again and again must not pay for that.)
  const seq = s.db.read(() => s.db.prepare<{ seq: number }>('SELECT seq FROM log_state WHERE id = 1').get()?.seq ?? -1);
  if (seq >= 0 && syncedAt.get(s.db) === seq) return true;
  const done = await syncOnce(s, pause);
  if (done && seq >= 0) syncedAt.set(s.db, seq);
  return done;
}

/** The log position (log_state.seq) each database's history index was last brought up to date at. */
const syncedAt = new WeakMap<SqlDatabase, number>();

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
  for (;;) {
    const ids = s.db.read(() => s.db.prepare<{ id: number }>(MISSING).all());
    if (ids.length === 0) return true;
    const rows: [number, string][] = [];
    const extracted: { docId: number; kind: ExtractKind; r: Extracted }[] = [];
    let textRead = 0;
    for (const { id } of ids) {
      const doc = s.db.read(() => s.st.docById.get(id));
      if (!doc) continue;
      // A document's media type is its entries'; one no entry shows is typed by its content.
      let body = await documentBody(s.reader, s.st, doc, null, INDEXED_TEXT_MAX);
      if ('extract' in body) {
        if (s.extract) {
          const r = await extractDocument(s.reader, doc, body.extract, s.extract);
          extracted.push({ docId: doc.id, kind: body.extract, r });
          body = { text: r.text.length > INDEXED_TEXT_MAX ? r.text.slice(0, INDEXED_TEXT_MAX) : r.text };
        } else body = { text: '' };
      }
      const text = 'text' in body ? body.text : '';
      rows.push([id, spaceWords(text)]);
      if ((textRead += text.length) >= BATCH_TEXT) break;
    }
    s.db.transaction(() => {
      const now = Date.now();
      for (const x of extracted) saveExtracted(s.st, x.docId, x.kind, x.r, now);
      const add = s.db.prepare('INSERT INTO history(rowid, body) VALUES (?, ?)');
      const mark = s.db.prepare('INSERT OR IGNORE INTO historic_docs(doc_id) VALUES (?)');
      const shown = s.db.prepare<{ n: number }>('SELECT COUNT(*) AS n FROM entries WHERE doc_id = ?');
      const exists = s.db.prepare<{ n: number }>('SELECT COUNT(*) AS n FROM documents WHERE id = ?');
      for (const [id, text] of rows) {
        // (An entry may show it, or GC have dropped it, since it was read: the next run sees.)
        if (shown.get(id)!.n > 0 || exists.get(id)!.n === 0) continue;
        add.run(id, text);
        mark.run(id);
      }
    });
    // Documents read but not indexed (raced) are looked at again: mark those skipped for none.
    if (rows.length === 0) return true;
    if ((await pause()) === true) return false;
  }
}
