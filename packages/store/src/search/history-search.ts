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
import { detectMediaType } from '../media-types.js';
import { formatDigest } from '../hex.js';
import { requireSnapshot, walkTree } from '../catalog/snapshot.js';
import { filterSql, toMatch, toSupersetMatch, WORD_SPLIT } from './fts.js';
import { spaceWords } from './words.js';
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
  if (parsed.filters.not?.path.some((p) => path.startsWith(p))) return false; // (`-path:`)
  return parsed.filters.path.length === 0 || parsed.filters.path.some((p) => path.startsWith(p));
}

/**
 * A run of hits that rank together: a document's names (an entry shows it, or, checked one by
 * one, the history index holds it) or a span's matching versions. Ranked by score, then kind
 * (documents before spans), then id: one order, so every page is a part of it.
 */
type Group = { score: number; kind: 0 | 1; id: number; hits: HistoryFound[] };
const byKey = (a: Group, b: Group) => a.score - b.score || a.kind - b.kind || a.id - b.id;
/** What one source gives for its best `n` rows: groups best first, and whether rows were left past them. */
type Taken = { groups: Group[]; cut: boolean };

/** Spans checked before a query whose spans can match without a version matching is trusted to them. */
const PROBE_SPANS = 32;
/** Of those, how many must hold a matching version (else documents are ranked one by one). */
const PROBE_PASS = 24;
/** Path names in one check of the history index (FTS5's OR costs per branch at each step). */
const NAMES_PER_CHECK = 64;
/** Spans checked at a time, best first, until their hits fill the page. */
const SPANS_PER_CHECK = 8;

/**
 * Every version whose text matches (`window` at most), best first, by history spans
 * (history-spans.ts): spans whose lines match a loosened query are ranked best first, and each
 * span's versions checked against the whole query — those an entry shows in the keyword index's
 * body column, the others in the history index by their paths' names — matching ones listed
 * newest first with the span's score, spans checked a few at a time until the page is full. A
 * query whose spans may match with no version matching (AND, NOT, `-word`, phrases) first checks
 * the best PROBE_SPANS: where too few hold a match — and in a store whose spans were not brought
 * up to date (`synced` false: opened read-only) — documents are ranked one by one instead (the
 * keyword index's body and the history index merged by score: the way before spans, exact but
 * slower at scale). Filters hold for the paths hits name, so rows are taken best first until
 * `window` hits pass them (or none is left).
 */
export function allVersionsFound(s: HistorySource, parsed: ParsedQuery, q: Query, window: number, synced: boolean): HistoryFound[] {
  const match = toMatch(parsed);
  const superset = toSupersetMatch(parsed);
  if (match === null || superset === null) return [];
  // Paths are held to `path:`, `-path:` and the prefixes by the paths hits name (pathAllowed);
  // the rest are the current entry's: a path deleted with its versions kept passes path
  // filters, and exclusions (`-tag:`, `-type:`: it has no tag or type to exclude it), only.
  const filters = allFilters({ ...parsed, filters: { path: [], tag: parsed.filters.tag, type: parsed.filters.type } }, { ...q, pathPrefix: undefined, pathPrefixes: undefined });
  const not = parsed.filters.not;
  const excluded = not && (not.tag.length || not.type.length) ? filterSql({ path: [], tag: [], type: [], not: { path: [], tag: not.tag, type: not.type } }) : undefined;
  return s.db.read(() => {
    const entryAt = s.db.prepare<{ id: number; media_type: string | null }>('SELECT id, media_type FROM entries WHERE path = ?');
    const entryOk = filters.where.length
      ? s.db.prepare<{ n: number }>(`SELECT COUNT(*) AS n FROM entries e WHERE e.id = ?${filters.where.map((w) => ` AND ${w}`).join('')}`)
      : undefined;
    const entryKept = excluded
      ? s.db.prepare<{ n: number }>(`SELECT COUNT(*) AS n FROM entries e WHERE e.id = ?${excluded.where.map((w) => ` AND ${w}`).join('')}`)
      : undefined;
    const pathOk = new Map<string, { id: number; media_type: string | null } | null | false>();
    /** The path's current entry (null: none) if hits at the path pass the filters, else false. */
    const admit = (path: string) => {
      let a = pathOk.get(path);
      if (a === undefined) {
        const entry = entryAt.get(path) ?? null;
        a =
          !pathAllowed(path, parsed, q) ||
          (entryOk && (!entry || entryOk.get(entry.id, ...filters.params)!.n === 0)) ||
          (entryKept && entry && entryKept.get(entry.id, ...excluded!.params)!.n === 0)
            ? false
            : entry;
        pathOk.set(path, a);
      }
      return a;
    };
    const namedSql = s.db.prepare<{ doc_id: number; path: string; version: number; digest: Uint8Array; size: number }>(
      `SELECT v.doc_id AS doc_id, v.path AS path, v.version AS version, d.digest AS digest, d.size AS size
       FROM versions v JOIN documents d ON d.id = v.doc_id WHERE v.doc_id IN (SELECT value FROM json_each(?)) ORDER BY v.path, v.version DESC`,
    );
    /** Documents as groups of the (path, version) pairs naming them that pass the filters. */
    const docGroups = (rows: { doc_id: number; score: number }[]): Group[] => {
      const named = new Map<number, HistoryFound[]>();
      for (const v of namedSql.all(JSON.stringify(rows.map((r) => r.doc_id)))) {
        const entry = admit(v.path);
        if (entry === false) continue;
        const hits = named.get(v.doc_id) ?? [];
        hits.push({ entry_id: entry?.id ?? -1, doc_id: v.doc_id, digest: v.digest, path: v.path, media_type: entry?.media_type ?? typedByName(v.path), size: v.size, score: 0, version: v.version });
        named.set(v.doc_id, hits);
      }
      return rows.map((r) => ({ score: r.score, kind: 0, id: r.doc_id, hits: (named.get(r.doc_id) ?? []).map((h) => ({ ...h, score: r.score })) }));
    };
    // Documents entries show: the keyword index's body column (each document's best row).
    // (Ranked and cut before the join: joining every matching row first cost more.)
    const shownSql = s.db.prepare<{ doc_id: number; score: number }>(
      `SELECT e.doc_id AS doc_id, r.score AS score
       FROM (SELECT rowid AS id, bm25(search, 0.0, 0.0, 0.0, 1.0) AS score FROM search WHERE search MATCH ? ORDER BY score, rowid LIMIT ?) r
       JOIN entries e ON e.id = r.id ORDER BY r.score, r.id`,
    );
    const shown = (n: number): Taken => {
      const rows = shownSql.all(`body : (${match})`, n);
      return { groups: docGroups(rows.filter(firstOfEach())), cut: rows.length === n };
    };
    // The others, one by one (exact; every matching row ranked).
    const olderSql = s.db.prepare<{ doc_id: number; score: number }>('SELECT rowid AS doc_id, bm25(history, 1.0, 0.0) AS score FROM history WHERE history MATCH ? ORDER BY score, rowid LIMIT ?');
    const olderOneByOne = (n: number): Taken => {
      const rows = olderSql.all(`body : (${match})`, n);
      return { groups: docGroups(rows), cut: rows.length === n };
    };
    // The others by spans.
    const spansSql = s.db.prepare<{ id: number; path_id: number; path: string; first: number; last: number; score: number }>(
      `SELECT sp.id AS id, sp.path_id AS path_id, p.path AS path, sp.first AS first, sp.last AS last, r.score AS score
       FROM (SELECT rowid AS id, bm25(history_span_text) AS score FROM history_span_text WHERE history_span_text MATCH ? ORDER BY score, rowid LIMIT ?) r
       JOIN history_spans sp ON sp.id = r.id JOIN history_paths p ON p.id = sp.path_id ORDER BY r.score, r.id`,
    );
    // The spans' versions, for all of a round's spans in one query ([span id, path, first,
    // last] each): whether an entry shows each (then the keyword index has its text), or the
    // history index holds it (a version neither holds yet is left to the next sync).
    const spanVersionsSql = s.db.prepare<{ span: number; version: number; doc_id: number; digest: Uint8Array; size: number; shown: number; held: number }>(
      `SELECT j.value ->> 0 AS span, v.version AS version, v.doc_id AS doc_id, d.digest AS digest, d.size AS size,
         EXISTS (SELECT 1 FROM entries e WHERE e.doc_id = v.doc_id) AS shown, EXISTS (SELECT 1 FROM historic_docs h WHERE h.doc_id = v.doc_id) AS held
       FROM json_each(?) j JOIN versions v ON v.path = j.value ->> 1 AND v.version >= j.value ->> 2 AND v.version <= j.value ->> 3
       JOIN documents d ON d.id = v.doc_id ORDER BY v.version DESC`,
    );
    // Of documents entries show, those whose text (as any of their entries' reading) matches.
    const shownMatchSql = s.db.prepare<{ doc_id: number }>(
      `SELECT DISTINCT e.doc_id AS doc_id FROM search JOIN entries e ON e.id = search.rowid
       WHERE search MATCH ? AND search.rowid IN (SELECT e2.id FROM entries e2 WHERE e2.doc_id IN (SELECT value FROM json_each(?)))`,
    );
    const namesSql = s.db.prepare<{ id: number }>('SELECT rowid AS id FROM history WHERE history MATCH ?');
    /** Checks `spans`' versions (a round's, in one query each): which match, as their groups' hits. */
    const check = (spans: ReturnType<typeof spansSql.all>, groups: Group[]) => {
      const admitted = spans.flatMap((sp, i) => {
        const entry = admit(sp.path);
        return entry === false ? [] : [{ sp, entry, group: groups[i]! }];
      });
      const byId = new Map(admitted.map((a) => [a.sp.id, a]));
      const shownDocs = new Set<number>();
      const heldPaths = new Set<number>();
      for (const v of spanVersionsSql.all(JSON.stringify(admitted.map(({ sp }) => [sp.id, sp.path, sp.first, sp.last])))) {
        const { sp, entry, group } = byId.get(v.span)!;
        if (v.shown) shownDocs.add(v.doc_id);
        else if (v.held) heldPaths.add(sp.path_id);
        else continue;
        group.hits.push({ entry_id: entry?.id ?? -1, doc_id: v.doc_id, digest: v.digest, path: sp.path, media_type: entry?.media_type ?? typedByName(sp.path), size: v.size, score: sp.score, version: v.version });
      }
      // Which of those versions match: those entries show in the keyword index's body column;
      // the others by their paths' names, a few at a time, and the query, in the history index.
      const matching = new Set<number>();
      if (shownDocs.size) for (const r of shownMatchSql.all(`body : (${match})`, JSON.stringify([...shownDocs]))) matching.add(r.doc_id);
      const pathIds = [...heldPaths];
      for (let i = 0; i < pathIds.length; i += NAMES_PER_CHECK) {
        const names = pathIds.slice(i, i + NAMES_PER_CHECK).map((id) => `"${pathToken(id)}"`);
        for (const r of namesSql.all(`names : (${names.join(' OR ')}) AND body : (${match})`)) matching.add(r.id);
      }
      for (const g of groups) g.hits = g.hits.filter((h) => matching.has(h.doc_id));
    };
    /**
     * The best `n` spans, checked best first a few at a time until their hits make `need` (or
     * the spans `least`, at least): spans left unchecked rank after every one checked, so the
     * list is cut there.
     */
    // The ranked spans and the groups checked so far, kept across the probe and the rounds (a
    // list ranked for more rows begins with the list for fewer: one order).
    let ranked: ReturnType<typeof spansSql.all> = [];
    let rankedFor = 0;
    const checkedGroups = new Map<number, Group>();
    const bySpans = (n: number, need: number, least = 0): Taken => {
      if (n > rankedFor && ranked.length === rankedFor) {
        ranked = spansSql.all(superset, n);
        rankedFor = n;
      }
      const spans = ranked.slice(0, n);
      let checked = 0;
      let hits = 0;
      while (checked < spans.length && (hits < need || checked < least)) {
        const next = Math.min(spans.length, checked + SPANS_PER_CHECK);
        const fresh = spans.slice(checked, next).filter((sp) => !checkedGroups.has(sp.id));
        const groups: Group[] = fresh.map((sp) => ({ score: sp.score, kind: 1, id: sp.id, hits: [] }));
        if (fresh.length) check(fresh, groups);
        for (const g of groups) checkedGroups.set(g.id, g);
        for (let i = checked; i < next; i++) hits += checkedGroups.get(spans[i]!.id)!.hits.length;
        checked = next;
      }
      return { groups: spans.slice(0, checked).map((sp) => checkedGroups.get(sp.id)!), cut: checked < spans.length || spans.length === n };
    };
    // Spans are exact in what they find for a query of words OR-ed (a span matching holds a
    // version matching); for others, the best PROBE_SPANS say whether they find enough to be
    // worth it (the same spans whatever the page: every page is asked of the same list).
    // Spans serve a store whose spans are up to date (a store opened read-only has what its
    // last writer's searches made: documents one by one there). They are exact in what they find
    // for words OR-ed (a span matching holds a version matching); for other queries the best
    // PROBE_SPANS say whether they find enough to be worth it — the same spans whatever the
    // page, so that every page is a part of one order.
    let spansServe = synced;
    if (spansServe && !orOfWords(parsed)) {
      const probe = bySpans(PROBE_SPANS + 1, 0, PROBE_SPANS);
      spansServe = !probe.cut || probe.groups.filter((g) => g.hits.length > 0).length >= PROBE_PASS;
    }
    for (let fetch = Math.max(PROBE_SPANS, window); ; fetch *= 4) {
      const lists = spansServe ? [bySpans(fetch, window)] : [shown(fetch), olderOneByOne(fetch)];
      // Merged best first. Where a list was cut by its LIMIT, what lies past its last row is not
      // known: only groups up to that row are certain to be the best (the merge's exact part).
      let edge: Group | undefined;
      for (const l of lists) {
        const last = l.cut ? l.groups[l.groups.length - 1] : undefined;
        if (last && (!edge || byKey(last, edge) < 0)) edge = last;
      }
      const out: HistoryFound[] = [];
      for (const g of lists.flatMap((l) => l.groups).sort(byKey)) {
        if (edge && byKey(g, edge) > 0) break;
        out.push(...g.hits);
      }
      if (out.length >= window || !edge) return out.slice(0, window);
    }
  });
}

/** Whether a query is words (or prefixes) OR-ed, with no exclusion: what a span matching always has a version matching. */
function orOfWords(parsed: ParsedQuery): boolean {
  if (parsed.exclude.length || !parsed.expr) return false;
  const single = (t: { text: string }) => spaceWords(t.text).split(WORD_SPLIT).filter(Boolean).length <= 1;
  const e = parsed.expr;
  if ('text' in e) return e.kind !== 'phrase' && single(e);
  return e.kind === 'or' && e.items.every((i) => 'text' in i && i.kind !== 'phrase' && single(i));
}

/** The files of snapshot `id` whose text matches, best first (`window` at most). */
export function snapshotFound(s: HistorySource, id: string, parsed: ParsedQuery, q: Query, window: number): HistoryFound[] {
  const match = toMatch(parsed);
  return s.db.read(() => {
    const row = requireSnapshot(s.st, id, 'snapshot');
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
      for (const path of at.get(d.doc_id) ?? []) out.push({ entry_id: -1, doc_id: d.doc_id, digest: doc.digest, path, media_type: typedByName(path), size: doc.size, score: d.score });
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

/**
 * A hit's media type where no entry at its path says one (a deleted path's versions, a
 * snapshot's files): its name's, as reads by path and snapshot files are typed (it was null).
 */
function typedByName(path: string): string | null {
  return detectMediaType(path) ?? null;
}
