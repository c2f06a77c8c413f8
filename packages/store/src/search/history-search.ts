/**
 * Searches through history (decision 0056), by words (BM25): `allVersions` finds every version
 * of a path whose text matches — spans of each path's versions ranked (history-spans.ts), then
 * each span's versions checked exactly: documents entries show through the keyword index's body
 * column, the others through the history index; a hit for each `path` and `version` naming a
 * matching document — and `snapshot` the files of one snapshot (hits name the file's path in
 * it; the two indexes' scores merged). Filters: `path:`/`pathPrefix` hold for the paths hits
 * name; tags and media types are the current entry's, for versions (a snapshot's files have none).
 */
import { InvalidInputError } from '@kura/core';
import { formatDigest } from '../hex.js';
import { requireSnapshot, walkTree } from '../catalog/snapshot.js';
import { toMatch, toSupersetMatch } from './fts.js';
import type { ParsedQuery } from './grammar.js';
import { allFilters, type FoundEntry } from './keyword.js';
import type { SearchQuery } from './search-query.js';
import { pathToken, type HistorySource } from './history-docs.js';
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

/** A span of a path's versions found (history-spans.ts), best first. */
type FoundSpan = { id: number; path_id: number; path: string; first: number; last: number; score: number };

/**
 * Every version whose text matches (`window` at most), by spans (history-spans.ts): spans
 * whose lines match are ranked best first (BM25 over each span's distinct lines), and each
 * span's versions are checked against the query exactly — those entries show in the keyword
 * index's body column, the others in the history index, a few spans' versions a query — and
 * listed newest first, each with its span's score. Filters hold for the paths hits name, so
 * spans are taken best first until `window` hits pass them (or none is left). Ties are broken
 * by span id, so that every page is a part of one order.
 */
export function allVersionsFound(s: HistorySource, parsed: ParsedQuery, q: Query, window: number): HistoryFound[] {
  const match = toMatch(parsed);
  const superset = toSupersetMatch(parsed);
  if (match === null || superset === null) return [];
  // Paths are held to `path:` and the prefixes by the paths hits name (pathAllowed); the rest
  // are the current entry's: a path deleted with its versions kept passes path filters only.
  const filters = allFilters({ ...parsed, filters: { ...parsed.filters, path: [] } }, { ...q, pathPrefix: undefined, pathPrefixes: undefined });
  return s.db.read(() => {
    const spansSql = s.db.prepare<FoundSpan>(
      `SELECT sp.id AS id, sp.path_id AS path_id, p.path AS path, sp.first AS first, sp.last AS last, bm25(history_span_text) AS score
       FROM history_span_text JOIN history_spans sp ON sp.id = history_span_text.rowid JOIN history_paths p ON p.id = sp.path_id
       WHERE history_span_text MATCH ? ORDER BY score, sp.id LIMIT ? OFFSET ?`,
    );
    const versionsSql = s.db.prepare<{ version: number; doc_id: number; digest: Uint8Array; size: number; shown_by: number | null }>(
      `SELECT v.version AS version, v.doc_id AS doc_id, d.digest AS digest, d.size AS size,
         (SELECT e.id FROM entries e WHERE e.doc_id = v.doc_id LIMIT 1) AS shown_by
       FROM versions v JOIN documents d ON d.id = v.doc_id WHERE v.path = ? AND v.version >= ? AND v.version <= ? ORDER BY v.version DESC`,
    );
    const entryAt = s.db.prepare<{ id: number; media_type: string | null }>('SELECT id, media_type FROM entries WHERE path = ?');
    const entryOk = filters.where.length
      ? s.db.prepare<{ n: number }>(`SELECT COUNT(*) AS n FROM entries e WHERE e.id = ?${filters.where.map((w) => ` AND ${w}`).join('')}`)
      : undefined;
    // Which documents match, exactly: those entries show (any entry showing one has its text),
    // and the others of a few paths at once (their names, then the query: FTS5 goes through
    // the few documents the names hold, not every document the query's words are in).
    const shownSql = s.db.prepare<{ id: number }>('SELECT rowid AS id FROM search WHERE search MATCH ? AND rowid IN (SELECT value FROM json_each(?))');
    const olderSql = s.db.prepare<{ id: number }>('SELECT rowid AS id FROM history WHERE history MATCH ?');
    const out: HistoryFound[] = [];
    let taken = 0;
    for (let fetch = Math.max(8, window); ; fetch *= 4) {
      const spans = spansSql.all(superset, fetch, taken);
      taken += spans.length;
      const candidates: { span: FoundSpan; entry: { id: number; media_type: string | null } | undefined; versions: ReturnType<typeof versionsSql.all> }[] = [];
      for (const span of spans) {
        if (!pathAllowed(span.path, parsed, q)) continue;
        // Tag and type filters are the path's current entry's (a path deleted since has none).
        const entry = entryAt.get(span.path);
        if (entryOk && (!entry || entryOk.get(entry.id, ...filters.params)!.n === 0)) continue;
        candidates.push({ span, entry, versions: versionsSql.all(span.path, span.first, span.last) });
      }
      const shownIds = candidates.flatMap((c) => c.versions.flatMap((v) => (v.shown_by === null ? [] : [v.shown_by])));
      const shownMatch = new Set(shownIds.length ? shownSql.all(`body : (${match})`, JSON.stringify(shownIds)).map((r) => r.id) : []);
      const pathIds = [...new Set(candidates.filter((c) => c.versions.some((v) => v.shown_by === null)).map((c) => c.span.path_id))];
      const olderMatch = new Set(pathIds.length ? olderSql.all(`names : (${pathIds.map((id) => `"${pathToken(id)}"`).join(' OR ')}) AND body : (${match})`).map((r) => r.id) : []);
      for (const { span, entry, versions } of candidates) {
        for (const v of versions) {
          if (!(v.shown_by === null ? olderMatch.has(v.doc_id) : shownMatch.has(v.shown_by))) continue;
          out.push({ entry_id: entry?.id ?? -1, doc_id: v.doc_id, digest: v.digest, path: span.path, media_type: entry?.media_type ?? null, size: v.size, score: span.score, version: v.version });
        }
      }
      if (out.length >= window || spans.length < fetch) return out.slice(0, window);
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
      .prepare<{ doc_id: number; score: number }>('SELECT rowid AS doc_id, bm25(history, 1.0, 0.0) AS score FROM history WHERE history MATCH ? AND rowid IN (SELECT value FROM json_each(?))')
      .all(`body : (${match})`, ids);
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

