/**
 * The history index's documents (decision 0056): reading a document's text as the history
 * indexes take it, and writing documents into `history` with the names of their paths.
 */
import type { SqlDatabase } from '../backend/sql.js';
import type { Reader } from '../bytes/read.js';
import type { Statements } from '../catalog/statements.js';
import type { ExtractCaps, Extracted } from '../extract/caps.js';
import type { ExtractKind } from '../extract/kind.js';
import { documentBody, extractDocument, saveExtracted } from './doc-text.js';
import { INDEXED_TEXT_MAX } from './text.js';
import { spaceWords } from './words.js';

/** Text read per transaction, about (characters). */
export const BATCH_TEXT = 4 << 20;

export interface HistorySource {
  db: SqlDatabase;
  st: Statements;
  reader: Reader;
  extract?: ((kind: ExtractKind, bytes: Uint8Array, caps: ExtractCaps) => Promise<Extracted>) | undefined;
}

/** A document's text as the history indexes take it, and its extraction when one was made now. */
export type HistoryText = { text: string; extracted?: { kind: ExtractKind; r: Extracted } };

/** The text of document `id` (its first INDEXED_TEXT_MAX characters; '' when gone or binary). */
export async function historyText(s: HistorySource, id: number): Promise<HistoryText> {
  const doc = s.db.read(() => s.st.docById.get(id));
  if (!doc) return { text: '' };
  // A document's media type is its entries'; one no entry shows is typed by its content.
  const body = await documentBody(s.reader, s.st, doc, null, INDEXED_TEXT_MAX);
  if ('text' in body) return { text: body.text };
  if (!s.extract) return { text: '' };
  const r = await extractDocument(s.reader, doc, body.extract, s.extract);
  return { text: r.text.length > INDEXED_TEXT_MAX ? r.text.slice(0, INDEXED_TEXT_MAX) : r.text, extracted: { kind: body.extract, r } };
}

/** The token naming a path in the history index's `names` column. */
export const pathToken = (pathId: number) => `p${pathId}`;

/**
 * Writes what was read into the history index (inside the caller's write transaction): each
 * document no entry shows and that still exists, with the names of every path it is a version
 * of — added, or written again when its names changed (a document became a version of another
 * path), with the extractions made for them. Documents an entry shows, or gone, are left (the
 * next sync sees them again).
 */
export function writeHistoryDocs(s: HistorySource, texts: ReadonlyMap<number, HistoryText>): void {
  const now = Date.now();
  const shown = s.db.prepare<{ n: number }>('SELECT COUNT(*) AS n FROM entries WHERE doc_id = ?');
  const exists = s.db.prepare<{ n: number }>('SELECT COUNT(*) AS n FROM documents WHERE id = ?');
  const held = s.db.prepare<{ names: string }>('SELECT names FROM historic_docs WHERE doc_id = ?');
  const namesOf = s.db.prepare<{ id: number }>('SELECT DISTINCT p.id AS id FROM versions v JOIN history_paths p ON p.path = v.path WHERE v.doc_id = ? ORDER BY p.id');
  const del = s.db.prepare('DELETE FROM history WHERE rowid = ?');
  const add = s.db.prepare('INSERT INTO history(rowid, body, names) VALUES (?, ?, ?)');
  const mark = s.db.prepare('INSERT INTO historic_docs(doc_id, names) VALUES (?, ?) ON CONFLICT(doc_id) DO UPDATE SET names = excluded.names');
  for (const [id, t] of texts) {
    // (An entry may show it, or GC have dropped it, since it was read. A document an entry
    // shows keeps no extraction made here: the indexer extracts by the entry's media type.)
    if (shown.get(id)!.n > 0 || exists.get(id)!.n === 0) continue;
    if (t.extracted) saveExtracted(s.st, id, t.extracted.kind, t.extracted.r, now);
    const names = namesOf.all(id).map((r) => pathToken(r.id)).join(' ');
    const before = held.get(id);
    if (before?.names === names) continue;
    if (before) del.run(id);
    add.run(id, spaceWords(t.text), names);
    mark.run(id, names);
  }
}
