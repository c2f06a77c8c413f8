/**
 * Searches through history (decision 0056), by words (BM25): `allVersions` finds every version
 * of a path whose text matches — documents entries show through the keyword index's body
 * column, the others through the history index; a hit for each `path` and `version` naming a
 * matching document — and `snapshot` the files of one snapshot
 * (hits name the file's path in it). Both indexes score alike (porter, BM25); the lists are
 * merged by score. Filters: `path:`/`pathPrefix` hold for the paths hits name; tags and media
 * types are the current entry's, for versions (a snapshot's files have none).
 */
import { InvalidInputError } from '@kura/core';
import { formatDigest } from '../hex.js';
import { requireSnapshot, walkTree } from '../catalog/snapshot.js';
import { toMatch } from './fts.js';
import type { ParsedQuery } from './grammar.js';
import { allFilters, type FoundEntry } from './keyword.js';
import type { SearchQuery } from './search-query.js';
import type { HistorySource } from './history.js';
import type { z } from 'zod';

type Query = z.output<typeof SearchQuery>;

/** A found document at a name: an entry's path and version, or a snapshot's file. */
export type HistoryFound = FoundEntry & { version?: number };

/**
 * A filter keeping each document's first (best) row: entries showing one document are rows of
 * their own in the keyword index. (SQLite refuses bm25() under an aggregate.)
 */
function firstOfEach(): (r: { doc_id: number }) => boolean {
  const seen = new Set<number>();
  return (r) => !seen.has(r.doc_id) && !!seen.add(r.doc_id);
}

function pathAllowed(path: string, parsed: ParsedQuery, q: Query): boolean {
  if (q.pathPrefix && !path.startsWith(q.pathPrefix)) return false;
  if (q.pathPrefixes && !q.pathPrefixes.some((p) => path.startsWith(p))) return false;
  return parsed.filters.path.length === 0 || parsed.filters.path.some((p) => path.startsWith(p));
}

/** A found document and its score, in the order hits are ranked: score, then document id. */
type Scored = { doc_id: number; score: number };
const byScore = (a: Scored, b: Scored) => a.score - b.score || a.doc_id - b.doc_id;

/**
 * Every version whose text matches, best first (`window` at most). Filters hold for the paths
 * hits name, so matching documents are taken best first until `window` hits pass them (or none
 * is left): a filter cannot empty a page that has hits further down. Ties are broken by
 * document id in the queries and in the answer, so that every page is a part of one order.
 */
export function allVersionsFound(s: HistorySource, parsed: ParsedQuery, q: Query, window: number): HistoryFound[] {
  const match = toMatch(parsed);
  if (match === null) return [];
  const filters = allFilters(parsed, q);
  return s.db.read(() => {
    // The documents whose text matches: those entries show, through the keyword index (its
    // body column: a version is found by its text), and the others through the history index.
    const shownSql = s.db.prepare<Scored>(
      `SELECT e.doc_id AS doc_id, bm25(search, 0.0, 0.0, 0.0, 1.0) AS score
       FROM search JOIN entries e ON e.id = search.rowid WHERE search MATCH ? ORDER BY score, e.doc_id LIMIT ?`,
    );
    const olderSql = s.db.prepare<Scored>('SELECT rowid AS doc_id, bm25(history) AS score FROM history WHERE history MATCH ? ORDER BY score, rowid LIMIT ?');
    const namedSql = s.db.prepare<{ doc_id: number; path: string; version: number; entry_id: number | null; media_type: string | null; digest: Uint8Array; size: number }>(
      `SELECT v.doc_id AS doc_id, v.path AS path, v.version AS version, e.id AS entry_id, e.media_type AS media_type, d.digest AS digest, d.size AS size
       FROM versions v JOIN documents d ON d.id = v.doc_id LEFT JOIN entries e ON e.path = v.path
       WHERE v.doc_id IN (SELECT value FROM json_each(?))`,
    );
    const entryOk = filters.where.length
      ? s.db.prepare<{ n: number }>(`SELECT COUNT(*) AS n FROM entries e WHERE e.id = ?${filters.where.map((w) => ` AND ${w}`).join('')}`)
      : undefined;
    for (let fetch = window * 4; ; fetch *= 4) {
      const shownRows = shownSql.all(`body : (${match})`, fetch);
      const olderRows = olderSql.all(match, fetch);
      // Merged best first. Where a list was cut by its LIMIT, what lies past its last row is not
      // known: only documents up to that row are certain to be the best (the merge's exact part).
      let edge: Scored | undefined;
      for (const rows of [shownRows, olderRows]) {
        const last = rows.length === fetch ? rows[rows.length - 1] : undefined;
        if (last && (!edge || byScore(last, edge) < 0)) edge = last;
      }
      const seen = new Set<number>();
      const docs = [...shownRows, ...olderRows].sort(byScore).filter((d) => !seen.has(d.doc_id) && !!seen.add(d.doc_id) && (!edge || byScore(d, edge) <= 0));
      const scoreOf = new Map(docs.map((d) => [d.doc_id, d.score]));
      // Each at every (path, version) naming it: one query for all of them.
      const out: HistoryFound[] = [];
      for (const v of namedSql.all(JSON.stringify([...scoreOf.keys()]))) {
        if (!pathAllowed(v.path, parsed, q)) continue;
        // Tag and type filters are the path's current entry's (a path deleted since has none).
        if (entryOk && (v.entry_id === null || entryOk.get(v.entry_id, ...filters.params)!.n === 0)) continue;
        out.push({ entry_id: v.entry_id ?? -1, doc_id: v.doc_id, digest: v.digest, path: v.path, media_type: v.media_type, size: v.size, score: scoreOf.get(v.doc_id)!, version: v.version });
      }
      if (out.length >= window || !edge) {
        return out.sort((a, b) => byScore(a, b) || (a.path ?? '').localeCompare(b.path ?? '') || (b.version ?? 0) - (a.version ?? 0)).slice(0, window);
      }
    }
  });
}

/** The files of snapshot `id` whose text matches, best first (`window` at most). */
export function snapshotFound(s: HistorySource, id: string, parsed: ParsedQuery, q: Query, window: number): HistoryFound[] {
  const match = toMatch(parsed);
  return s.db.read(() => {
    const row = requireSnapshot(s.st, id);
    if (match === null) return [];
    // A snapshot's files have no tags and no media types: a filter by either holds for none.
    if (parsed.filters.tag.length || parsed.filters.type.length || q.tag !== undefined || q.mediaType !== undefined) return [];
    // The snapshot's files by document: where each document is in it.
    const at = new Map<number, string[]>();
    const byDigest = s.db.prepare<{ id: number }>('SELECT id FROM documents WHERE digest = ?');
    for (const { path, entry } of walkTree(s.st, formatDigest(row.tree))) {
      if (entry.type !== 'file' || !pathAllowed(path, parsed, q)) continue;
      const doc = byDigest.get(Buffer.from(entry.digest.slice(7), 'hex'));
      if (!doc) continue;
      const paths = at.get(doc.id);
      if (paths) paths.push(path);
      else at.set(doc.id, [path]);
    }
    if (at.size === 0) return [];
    const ids = JSON.stringify([...at.keys()]);
    // Documents an entry shows are in the keyword index (its body column: a snapshot's file is
    // found by its text, not by the entry's path or tags); the others in the history index.
    const shown = s.db
      .prepare<{ doc_id: number; score: number }>(
        `SELECT e.doc_id AS doc_id, bm25(search, 0.0, 0.0, 0.0, 1.0) AS score
         FROM search JOIN entries e ON e.id = search.rowid WHERE search MATCH ? AND e.doc_id IN (SELECT value FROM json_each(?)) ORDER BY score`,
      )
      .all(`body : (${match})`, ids)
      .filter(firstOfEach());
    const older = s.db
      .prepare<{ doc_id: number; score: number }>('SELECT rowid AS doc_id, bm25(history) AS score FROM history WHERE history MATCH ? AND rowid IN (SELECT value FROM json_each(?))')
      .all(match, ids);
    const out: HistoryFound[] = [];
    for (const d of [...shown, ...older]) {
      const doc = s.st.docById.get(d.doc_id);
      if (!doc) continue;
      for (const path of at.get(d.doc_id) ?? []) out.push({ entry_id: -1, doc_id: d.doc_id, digest: doc.digest, path, media_type: null, size: doc.size, score: d.score });
    }
    return out.sort((a, b) => a.score - b.score || (a.path ?? '').localeCompare(b.path ?? '')).slice(0, window);
  });
}

/** History searches are by words: a mode other than keyword is said to be unavailable there. */
export function historyMode(mode: string | undefined): void {
  if (mode !== undefined && mode !== 'keyword') {
    throw new InvalidInputError(`a search through versions or a snapshot is a keyword search (mode ${mode} is not available there)`, 'mode');
  }
}

