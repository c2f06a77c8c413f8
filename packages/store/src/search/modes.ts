/**
 * A search, whole (FORMAT.md §10): the query parsed once (grammar.ts) — never refused — then
 * answered by keyword search (BM25 over the FTS5 index), semantic search (the embedder's
 * vectors, semantic/semantic-side.ts), both fused (hybrid), or through history
 * (history-search.ts); the ranked list reranked when a reranker is in use (rerank.ts), paged,
 * and made into hits with snippets.
 */
import { InvalidInputError } from '@kura/core';
import type { SqlDatabase } from '../backend/sql.js';
import type { Reader } from '../bytes/read.js';
import type { Statements } from '../catalog/statements.js';
import { parse } from '../options.js';
import type { SemanticSearch } from '../semantic/semantic-side.js';
import { fuseRanks, fuseScores, keywordWeight } from './fusion.js';
import { parseQuery, type ParsedQuery } from './grammar.js';
import { allFilters, excludedEntries, fieldsOf, keywordEntries, keywordFound, passes, toHits, type FoundEntry } from './keyword.js';
import { WORD_SPLIT, toMatch } from './fts.js';
import { allExact, exactQuery, exactTerms, holdsAny, identifiersQuery, joinedQuery, namesApart, onlyExact, requiredJoined, type ExactTerm } from './exact-terms.js';
import { editDistance, indexVocabulary, noticedSaid, typosNoticed, typosSaid, withTyposRead, withTyposShown, type Vocabulary } from './typos.js';
import { stemOf, SNIPPET_SOURCE_MAX } from './snippet.js';
import { fold, wordsOf } from './words.js';
import { withPrefixesRead } from './prefixes.js';
import { SearchQuery, type SearchHit, type SearchHits } from './search-query.js';
import { historyBehind, syncHistory, type HistorySource } from './history.js';
import { allVersionsFound, historyMode, snapshotFound, type HistoryFound } from './history-search.js';
import { RerankFailed, type Reranker } from './rerank.js';
import { documentText } from './doc-text.js';
import { breather } from '../breather.js';

const breathe = breather();

/** Characters of a query the embedder is given at most: the local model reads 254 tokens. */
export const QUERY_EMBED_CHARS = 8192;
/** Characters of each hit's text a reranker is given (its path, then its passage or text). */
export const RERANK_TEXT_CHARS = 2000;
/** A collapsed hit's other paths named at most (`alsoAt`; `alsoAtMore` counts the rest). */
export const ALSO_AT_MAX = 20;

export interface Searcher {
  db: SqlDatabase;
  st: Statements;
  reader: Reader;
  semantic: SemanticSearch | undefined;
  reranker: Reranker | undefined;
}

type Query = ReturnType<typeof SearchQuery.parse>;

/** A ranked candidate: what was found, what its hit says of it, and its passage (semantic). */
interface Ranked {
  f: FoundEntry;
  extra: Pick<SearchHit, 'matched'> & Partial<SearchHit>;
  passage?: { start: number; end: number };
}

/** How a rerank went: said with the hits (`reranked`). */
export interface RerankReport {
  model: string;
  /** False: the fused order was kept, and `reason` says why. */
  applied: boolean;
  candidates: number;
  ms: number;
  reason?: string;
}

/**
 * The hits, with how the query was read. `parsedAs`, `fallbacks` and `reranked` are not
 * enumerable: the array's own entries are the hits, so `hits` compares, spreads and serialises
 * as the list it is.
 */
function answer(hits: SearchHit[], parsed: ParsedQuery, notEmbedded?: number, reranked?: RerankReport): SearchHits {
  Object.defineProperty(hits, 'parsedAs', { value: parsed.parsedAs, writable: true, configurable: true });
  const fallbacks = [...parsed.fallbacks, ...(parsed.typos ? typosSaid(parsed.typos, hits.map((h) => h.snippet)) : [])];
  if (fallbacks.length) Object.defineProperty(hits, 'fallbacks', { value: fallbacks, writable: true, configurable: true });
  if (reranked) Object.defineProperty(hits, 'reranked', { value: reranked, writable: true, configurable: true });
  const out = hits as SearchHits;
  if (notEmbedded) out.notEmbedded = notEmbedded;
  return out;
}

/** How many candidates a search ranks before paging: its page, and what a rerank looks at. */
function windowOf(s: Searcher, q: Query, base: number): number {
  return Math.max(base, q.offset + q.limit, reranking(s, q) ? q.rerankTop : 0);
}

/** The index's vocabulary on the searcher's connection (typos.ts), made once per connection. */
const vocabularies = new WeakMap<SqlDatabase, Vocabulary>();
function vocabulary(s: Searcher): Vocabulary {
  let v = vocabularies.get(s.db);
  if (!v) vocabularies.set(s.db, (v = indexVocabulary(s.db)));
  return v;
}

const reranking = (s: Searcher, q: Query) => s.reranker !== undefined && q.rerank !== false;

/**
 * The first `rerankTop` candidates scored again by the reranker, within `rerankMs`; past it, or
 * on any failure, the order stays and the report says why.
 */
async function rerank(s: Searcher, parsed: ParsedQuery, q: Query, ranked: Ranked[]): Promise<{ ranked: Ranked[]; report?: RerankReport }> {
  const reranker = s.reranker;
  if (!reranker || q.rerank === false || ranked.length === 0) return { ranked };
  const started = performance.now();
  const top = ranked.slice(0, q.rerankTop);
  const report = (applied: boolean, reason?: string): RerankReport => ({ model: reranker.model, applied, candidates: top.length, ms: Math.round(performance.now() - started), ...(reason ? { reason } : {}) });
  const signal = AbortSignal.timeout(q.rerankMs);
  try {
    const texts: string[] = [];
    for (const r of top) {
      const doc = s.db.read(() => s.st.docById.get(r.f.doc_id));
      let text = doc ? await documentText(s.reader, s.st, doc, r.f.media_type, r.passage ? Math.min(r.passage.end * 4, 1 << 20) : RERANK_TEXT_CHARS * 4) : '';
      if (r.passage) text = text.slice(r.passage.start, r.passage.end);
      texts.push(`${r.f.path ?? ''}\n${text.slice(0, RERANK_TEXT_CHARS)}`);
      if (signal.aborted) throw new RerankFailed('no answer in time');
    }
    const scores = await reranker.rerank(parsed.text || parsed.parsedAs, texts, signal);
    const order = top.map((r, i) => ({ r, score: scores[i]!, i })).sort((a, b) => b.score - a.score || a.i - b.i);
    const reordered = order.map(({ r, score }, k) => ({ ...r, extra: { ...r.extra, rerank: { rank: k + 1, score } } }));
    return { ranked: [...reordered, ...ranked.slice(top.length)], report: report(true) };
  } catch (e) {
    if (!(e instanceof RerankFailed) && !(e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError'))) throw e;
    return { ranked, report: report(false, e instanceof RerankFailed ? e.message : 'no answer in time') };
  }
}

/** The ranked candidates reranked (when a reranker is in use), paged, made hits. */
async function finish(s: Searcher, parsed: ParsedQuery, q: Query, ranked: Ranked[], notEmbedded?: number): Promise<SearchHits> {
  const done = await rerank(s, parsed, q, ranked);
  let page = done.ranked.slice(q.offset, q.offset + q.limit);
  const also = q.collapse ? otherPaths(s, parsed, q, page) : new Map<number, OtherPaths>();
  // A hit at no path (a put of bytes alone) whose document has paths is shown at its first.
  page = page.map((r) => {
    const instead = also.get(r.f.entry_id)?.instead;
    if (!instead) return r;
    also.set(instead.entry_id, also.get(r.f.entry_id)!);
    return { ...r, f: { ...r.f, ...instead } };
  });
  const byEntry = new Map(page.map((r) => [r.f, r]));
  const vocab = vocabulary(s);
  const hits = await toHits(
    s.db,
    s.st,
    s.reader,
    parsed,
    page.map((r) => r.f),
    (f) => {
      const r = byEntry.get(f)!;
      const a = also.get(f.entry_id);
      return { ...r.extra, ...(a?.alsoAt.length ? { alsoAt: a.alsoAt } : {}), ...(a?.alsoAtMore ? { alsoAtMore: a.alsoAtMore } : {}), ...(r.passage ? { passage: r.passage } : {}) };
    },
    (term) => vocab.docsHolding(term),
  );
  return answer(hits, parsed, notEmbedded, done.report);
}

/**
 * Candidates, the first of each document kept (a collapsed search, decision 0072): the same
 * bytes at other paths rank where their first does, and are named in its `alsoAt`.
 */
function onePerDocument<T>(xs: readonly T[], doc: (x: T) => number): T[] {
  const seen = new Set<number>();
  return xs.filter((x) => {
    const d = doc(x);
    return !seen.has(d) && (seen.add(d), true);
  });
}

/** A collapsed hit's other paths (`alsoAt`), and for a hit at no path the entry to show instead. */
interface OtherPaths {
  alsoAt: string[];
  alsoAtMore?: number;
  instead?: { entry_id: number; path: string; media_type: string | null };
}

/**
 * A collapsed page's other paths of each hit's document: the entries holding the same
 * document that the search's filters keep (path, tag, type, time; the query's own `path:`…,
 * its `-word`s), in path order, ALSO_AT_MAX at most each — the first of them `instead` when
 * the hit has no path. Keyed by the hit's entry.
 */
function otherPaths(s: Searcher, parsed: ParsedQuery, q: Query, page: readonly Ranked[]): Map<number, OtherPaths> {
  const out = new Map<number, OtherPaths>();
  if (page.length === 0) return out;
  const filters = allFilters(parsed, q);
  const rows = s.db.read(() =>
    s.db
      .prepare<{ entry_id: number; doc_id: number; path: string; media_type: string | null }>(
        `SELECT e.id AS entry_id, e.doc_id AS doc_id, e.path AS path, e.media_type AS media_type
         FROM entries e JOIN documents d ON d.id = e.doc_id
         WHERE e.doc_id IN (SELECT value FROM json_each(?)) AND e.path IS NOT NULL${filters.where.map((w) => ` AND ${w}`).join('')}
         ORDER BY e.doc_id, e.path`,
      )
      .all(JSON.stringify(page.map((r) => r.f.doc_id)), ...filters.params),
  );
  // (`-word` holds for them too: a copy whose path or tags hold an excluded word is not named.)
  const excluded = s.db.read(() => excludedEntries(s.db, parsed, rows.map((r) => r.entry_id)));
  const hitOf = new Map(page.map((r) => [r.f.doc_id, r.f]));
  for (const r of rows) {
    const hit = hitOf.get(r.doc_id);
    if (hit === undefined || hit.entry_id === r.entry_id || excluded.has(r.entry_id)) continue;
    let a = out.get(hit.entry_id);
    if (!a) out.set(hit.entry_id, (a = { alsoAt: [] }));
    if (hit.path === null && !a.instead) a.instead = { entry_id: r.entry_id, path: r.path, media_type: r.media_type };
    else if (a.alsoAt.length < ALSO_AT_MAX) a.alsoAt.push(r.path);
    else a.alsoAtMore = (a.alsoAtMore ?? 0) + 1;
  }
  return out;
}

/** Keyword search alone (the index drained first by the caller). */
export async function keywordSearch(s: Searcher, query: string, options: SearchQuery): Promise<SearchHits> {
  if (typeof query !== 'string') throw new InvalidInputError('query must be a string', 'query');
  const q = parse(SearchQuery, options, 'search options');
  const typed = withPrefixesRead(vocabulary(s), parseQuery(query));
  let r = await keywordRanked(s, typed, q);
  // A query that finds nothing as typed has its misspelt words read again (typos.ts) — asked
  // only then: a search that finds something costs nothing more (asked first, every keyword
  // search paid a second MATCH: 1.2 → 4 ms a question on 10,000 documents).
  if (r.ranked.length === 0 && q.typos) {
    const read = withTyposRead(vocabulary(s), typed);
    if (read !== typed) r = await keywordRanked(s, await typosShown(s, read), q);
  } else if (q.typos) r = { ...r, parsed: await noticingTypos(s, r.parsed) };
  if (r.ranked.length === 0) {
    const apart = namesApart(r.parsed);
    if (apart && (q.offset === 0 || (await keywordRanked(s, r.parsed, { ...q, offset: 0, limit: 1 })).ranked.length === 0)) {
      const again = await keywordRanked(s, { ...apart.parsed, fallbacks: [...apart.parsed.fallbacks, ...apart.said] }, q);
      if (again.ranked.length) r = again;
    }
  }
  // (What these say is read from the whole index: not to a search narrowed to some paths — a
  // token limited to prefixes — which would learn of paths and words outside them.)
  if (!q.pathPrefixes) {
    if (r.ranked.length === 0) r = { ...r, parsed: sayingPathsAbsent(s, r.parsed) ?? sayingApart(s, r.parsed) };
    r = { ...r, parsed: sayingExcluded(s, r.parsed) };
  }
  return finish(s, r.parsed, r.q, r.ranked);
}

/**
 * A search that found nothing with a `path:` no stored path begins with: said, with a path that
 * holds it further in (`path:` is a prefix from the path's start: `path:man2` in a store of
 * `corpus/man2/…` found nothing, and what was said blamed the query's words — a trial).
 * Undefined when every path filter names some path.
 */
function sayingPathsAbsent(s: Searcher, parsed: ParsedQuery): ParsedQuery | undefined {
  const absent = parsed.filters.path.filter((p) => !s.db.read(() => s.db.prepare<{ one: number }>('SELECT 1 AS one FROM entries WHERE path >= ? AND path < ? LIMIT 1').get(p, `${p}\u{10ffff}`)));
  if (absent.length === 0 || absent.length < parsed.filters.path.length) return undefined;
  const said = absent.slice(0, 2).map((p) => {
    const inside = s.db.read(() => s.db.prepare<{ path: string }>("SELECT path FROM entries WHERE instr(path, '/' || ?) > 0 LIMIT 1").get(p));
    const at = inside ? inside.path.indexOf(`/${p}`) + 1 : -1;
    return `no stored path begins with "${p}" (path: is a prefix from a path's start)${inside ? `: ${JSON.stringify(inside.path)} holds it further in — path:${inside.path.slice(0, at)}${p}` : ''}`;
  });
  return { ...parsed, fallbacks: [...parsed.fallbacks, ...said] };
}

/** Exclusions said at most (each costs a MATCH). */
const EXCLUDED_SAID_MAX = 3;

/**
 * The words a query leaves out (`-exec`) that did leave out documents matching the rest, said:
 * `find -exec` is as often a command's flag pasted as a word to exclude, and it left out
 * find's manual, the page that answers, without a word (a trial; flags of one or two letters
 * are read as words already, grammar.ts). Nothing is said of one that excluded nothing.
 */
function sayingExcluded(s: Searcher, parsed: ParsedQuery): ParsedQuery {
  const words = parsed.exclude.filter((t) => t.kind === 'word').slice(0, EXCLUDED_SAID_MAX);
  const positive = words.length ? toMatch({ ...parsed, exclude: [] }) : null;
  if (positive === null) return parsed;
  const v = vocabulary(s);
  const said = words
    .filter((t) => v.matches(`(${positive}) AND ${toMatch({ ...parsed, expr: t, exclude: [] })}`))
    .map((t) => `"-${t.text}" left out the documents holding "${t.text}" (a command's flag? quote it, "-${t.text}", to search it as a word)`);
  return said.length ? { ...parsed, fallbacks: [...parsed.fallbacks, ...said] } : parsed;
}

/**
 * A query of identifiers that found nothing: those joined (`harbour:master`, `author:alice`)
 * are found only as written (decision 0068) — where their words are in documents apart, that
 * is said, with how to ask for them so (a trial: `author:alice` found nothing, and nothing said
 * why, while the entry's metadata was `author alice`).
 */
function sayingApart(s: Searcher, parsed: ParsedQuery): ParsedQuery {
  const joined = exactTerms(parsed).filter((x) => x.joined);
  if (joined.length === 0) return parsed;
  const v = vocabulary(s);
  const said: string[] = [];
  for (const x of joined.slice(0, 2)) {
    const words = x.term.text.split(WORD_SPLIT).filter(Boolean);
    if (words.length < 2 || !v.matches(words.map((w) => `"${w.replace(/"/g, '""')}"`).join(' AND '))) continue;
    said.push(`"${x.term.text}" is in no document as written (it is read as one identifier); its words are in some, apart: search ${words.join(' ')}`);
  }
  return said.length ? { ...parsed, fallbacks: [...parsed.fallbacks, ...said] } : parsed;
}

/** The parse, with its misspelt words said (typos.ts `typosNoticed`): a query that found documents without them. */
async function noticingTypos(s: Searcher, parsed: ParsedQuery): Promise<ParsedQuery> {
  const noticed = typosNoticed(vocabulary(s), parsed);
  if (noticed.length === 0) return parsed;
  const said: string[] = [];
  for (const n of noticed) said.push(noticedSaid(n.typed, (await heldWord(s, n.near, n.typed)) ?? `${stemOf(fold(n.near))}…`));
  return { ...parsed, fallbacks: [...parsed.fallbacks, ...said] };
}

/** A parse whose typos were read (typos.ts `withTyposRead`), each shown as a document's own word (heldWord). */
async function typosShown(s: Searcher, parsed: ParsedQuery): Promise<ParsedQuery> {
  const shown = new Map<string, string>();
  for (const t of parsed.typos ?? []) {
    const word = await heldWord(s, t.term, t.typed);
    if (word !== undefined) shown.set(t.term, word);
  }
  return withTyposShown(parsed, shown);
}

/**
 * A word as one document holding `word`'s index term wrote it (folded): `decision` for
 * `decise`. The index keeps stems only, and a stem's words made up from English endings are
 * often no word (a trial: `decide` was said to be near "decise", and searched as it); the first
 * documents holding the term are read (their paths, and up to SNIPPET_SOURCE_MAX of their text;
 * HELD_WORD_DOCS of them) for the word of the same stem nearest to what was `typed` (`expresion` is `expression`, not the
 * `express` a package's name there also holds). Undefined when none is found there.
 */
async function heldWord(s: Searcher, word: string, typed: string): Promise<string | undefined> {
  const stem = stemOf(fold(word));
  const rows = s.db.read(() =>
    s.db
      .prepare<{ id: number }>(`SELECT rowid AS id FROM search WHERE search MATCH ? LIMIT ${HELD_WORD_DOCS}`)
      .all(`"${word.replace(/"/g, '""')}"`)
      .flatMap((hit) => {
        const entry = s.st.entryById.get(hit.id);
        return entry ? [{ entry, doc: s.st.docById.get(entry.doc_id) }] : [];
      }),
  );
  const target = fold(typed);
  const seen = new Set<string>();
  let best: { word: string; d: number } | undefined;
  const inText = (text: string | null) => {
    for (const { word: w } of wordsOf(text ?? '')) {
      const f = fold(w);
      if (seen.has(f)) continue;
      seen.add(f);
      if (stemOf(f) !== stem) continue;
      const d = editDistance(target, f, target.length + f.length);
      if (!best || d < best.d) best = { word: f, d };
    }
  };
  for (const row of rows) {
    inText(row.entry.path);
    if (!row.doc) continue;
    try {
      inText(await documentText(s.reader, s.st, row.doc, row.entry.media_type, SNIPPET_SOURCE_MAX));
    } catch {
      // (a document that cannot be read: the others', or the stem, is said)
    }
    if (best?.d === 0) break;
  }
  return best?.word;
}

/** Documents heldWord reads at most. */
const HELD_WORD_DOCS = 3;

/**
 * Keyword's ranked candidates for a parse, and the query to page them with. Collapsed (one
 * document a hit), pages count documents: candidates are asked from the top, twice as many
 * again while documents repeat and the page's are not all there (one query when none repeat).
 */
async function keywordRanked(s: Searcher, parsed: ParsedQuery, q: Query): Promise<{ parsed: ParsedQuery; ranked: Ranked[]; q: Query }> {
  if (!q.collapse) return keywordPage(s, parsed, q);
  const first = await firstDocuments(async (n) => {
    const r = await keywordPage(s, parsed, { ...q, offset: 0, limit: n });
    return { hits: r.ranked, exhausted: r.exhausted };
  }, (x) => x.f.doc_id, windowOf(s, q, 0));
  return { parsed, ranked: first.hits.map((x, i) => ({ ...x, extra: { ...x.extra, keyword: { rank: i + 1, score: x.f.score } } })), q };
}

/**
 * Keyword's candidates, a hit per entry, and the query to page them with (already paged:
 * offset 0); `exhausted` when the index has no more (a shorter list may only have false
 * matches taken out: falseMatchesLast).
 */
async function keywordPage(s: Searcher, parsed: ParsedQuery, q: Query): Promise<{ parsed: ParsedQuery; ranked: Ranked[]; q: Query; exhausted: boolean }> {
  const exact = exactTerms(parsed);
  if (exact.some((x) => x.joined) && !onlyExact(parsed, exact)) return { parsed, ...(await falseMatchesLast(s, parsed, q, exact)), q };
  // Without a rerank the page is asked of SQLite alone; with one, its candidates from the top.
  const offset = reranking(s, q) ? 0 : q.offset;
  const asked = windowOf(s, q, 0) - offset;
  const found = await keywordFound(s, parsed, q, asked, offset);
  const ranked = found.map((f, i) => ({ f, extra: { matched: ['keyword'] as SearchHit['matched'], keyword: { rank: offset + i + 1, score: f.score } } }));
  // (Already paged: finish pages from the start of what it is given.)
  return { parsed, ranked, q: offset === 0 ? q : { ...q, offset: 0 }, exhausted: found.length < asked };
}

/**
 * Of `entries`, those holding one of the identifiers as written: the index's match of them
 * (one query), and for a joined one the text read and checked (exact-terms.ts).
 */
async function holdingIdentifiers(s: Searcher, parsed: ParsedQuery, q: Query, exact: ExactTerm[], entries: FoundEntry[]): Promise<Set<number>> {
  const matched = s.db.read(() => keywordEntries(s.db, identifiersQuery(parsed, exact), q, entries.length, 0, entries.map((f) => f.entry_id)));
  if (!exact.some((x) => x.joined)) return new Set(matched.map((f) => f.entry_id));
  const has = holdsAny(exact);
  const out = new Set<number>();
  for (const f of matched) if (await passes(s, f, has)) out.add(f.entry_id);
  return out;
}

/**
 * Keyword's order for a question with joined identifiers (exact-terms.ts) and other words:
 * within its first `window` matches, those the index matched for an identifier's words but
 * that hold none of them as written (`6.17, 0.5` for `6.17.0`) go last — they match the
 * question's other words, and BM25 counted the identifier too — and go altogether when the
 * identifier is required (`lodash AND 4.17.21`). Past the window, BM25's order goes on (a
 * window fixed for the query: every page is cut from one order, and so is what is read: every
 * suspect in the window, whatever the time).
 */
async function falseMatchesLast(s: Searcher, parsed: ParsedQuery, q: Query, exact: ExactTerm[]): Promise<{ ranked: Ranked[]; exhausted: boolean }> {
  const window = Math.max(q.window, reranking(s, q) ? q.rerankTop : 0);
  const head = await keywordFound(s, parsed, q, window, 0);
  const suspects = s.db.read(() => keywordEntries(s.db, joinedQuery(parsed, exact), q, window, 0, head.map((f) => f.entry_id)));
  const joined = holdsAny(exact.filter((x) => x.joined));
  const required = requiredJoined(parsed, exact);
  const wrong = new Set<number>();
  const gone = new Set<number>();
  for (const f of suspects) {
    const texts = await fieldsOf(s, f);
    if (!texts.some(joined)) wrong.add(f.entry_id);
    if (!required.every((x) => texts.some((t) => x.pattern.test(t)))) gone.add(f.entry_id);
  }
  const need = q.offset + q.limit - window;
  const tail = need > 0 && head.length === window ? await keywordFound(s, parsed, q, need, window) : [];
  const ranked = [...head, ...tail].map((f, i) => ({ f, extra: { matched: ['keyword'] as SearchHit['matched'], keyword: { rank: i + 1, score: f.score } } }));
  const first = ranked.slice(0, head.length).filter((r) => !gone.has(r.f.entry_id));
  return {
    ranked: [...first.filter((r) => !wrong.has(r.f.entry_id)), ...first.filter((r) => wrong.has(r.f.entry_id)), ...ranked.slice(head.length)],
    exhausted: head.length < window || (need > 0 && tail.length < need),
  };
}

/**
 * A search through history (history-search.ts): every version (`allVersions`) or one
 * snapshot's files (`snapshot`), by words. The history index is brought up to date first.
 */
export async function historySearch(s: Searcher & { history: HistorySource; writable: boolean }, query: string, options: SearchQuery): Promise<SearchHits> {
  if (typeof query !== 'string') throw new InvalidInputError('query must be a string', 'query');
  const q = parse(SearchQuery, options, 'search options');
  if (q.allVersions && q.snapshot !== undefined) throw new InvalidInputError('allVersions and snapshot are two searches: ask one of them', 'snapshot');
  historyMode(q.mode);
  const parsed = parseQuery(query);
  const synced = s.writable && (await syncHistory(s.history, async () => void (await breathe())));
  // Read-only, the index cannot be brought up to date: what it lacks is said (`notIndexed`).
  const notIndexed = s.writable ? 0 : s.db.read(() => historyBehind(s.db));
  const window = windowOf(s, q, 0);
  // (Read through the searcher's connection, which holds the keyword index: history's own upkeep writes through the catalog's.)
  const reading = { ...s.history, db: s.db };
  const find = (n: number): HistoryFound[] => (q.snapshot !== undefined ? snapshotFound(reading, q.snapshot, parsed, q, n) : allVersionsFound(reading, parsed, q, n, synced));
  // Collapsed (the default), the same bytes at several paths or versions are one hit, the others
  // named in its `alsoAt` (`path@N`), as a search of the latest versions shows them (4 of a
  // trial's 5 hits were one manual's bytes at four paths); `collapse: false`, a hit each. More
  // is read until the page's documents are there.
  let found: HistoryFound[] = [];
  const others = new Map<number, string[]>();
  for (let n = window; ; n *= 2) {
    const all = find(n);
    const first = new Map<number, HistoryFound>();
    others.clear();
    for (const f of all) {
      if (!q.collapse) first.set(first.size, f);
      else if (!first.has(f.doc_id)) first.set(f.doc_id, f);
      else (others.get(f.doc_id) ?? others.set(f.doc_id, []).get(f.doc_id)!).push(f.version !== undefined ? `${f.path}@${f.version}` : f.path!);
    }
    found = [...first.values()];
    if (!q.collapse || found.length >= window || all.length < n) break;
  }
  const ranked = found.map((f, i) => {
    const also = q.collapse ? others.get(f.doc_id) : undefined;
    return {
      f,
      extra: {
        matched: ['keyword'] as SearchHit['matched'],
        keyword: { rank: i + 1, score: f.score },
        ...(f.version !== undefined ? { version: f.version } : {}),
        ...(also?.length ? { alsoAt: also.slice(0, ALSO_AT_MAX), ...(also.length > ALSO_AT_MAX ? { alsoAtMore: also.length - ALSO_AT_MAX } : {}) } : {}),
      },
    };
  });
  const hits = await finish(s, parsed, { ...q, collapse: false }, ranked); // (collapsed above, by document)
  // (Not enumerable, as parsedAs: the array's own entries are the hits.)
  if (notIndexed) Object.defineProperty(hits, 'notIndexed', { value: notIndexed, writable: true, configurable: true });
  return hits;
}

/** Semantic or hybrid hits for `query` (the keyword index drained first by the caller). */
export async function semanticSearch(s: Searcher & { semantic: SemanticSearch }, query: string, options: SearchQuery, mode: 'semantic' | 'hybrid'): Promise<SearchHits> {
  if (typeof query !== 'string') throw new InvalidInputError('query must be a string', 'query');
  const q = parse(SearchQuery, options, 'search options');
  const parsed = withPrefixesRead(vocabulary(s), parseQuery(query));
  const hits = await semanticParsed(s, parsed, q, mode);
  // Identifiers alone that no document holds as written: their words in a row (namesApart),
  // on both sides (the semantic side kept only documents holding one as written).
  const apart = hits.length === 0 ? namesApart(parsed) : undefined;
  if (apart && (q.offset === 0 || (await semanticParsed(s, parsed, { ...q, offset: 0, limit: 1 }, mode)).length === 0)) {
    const again = await semanticParsed(s, { ...apart.parsed, fallbacks: [...apart.parsed.fallbacks, ...apart.said] }, q, mode);
    if (again.length) return again;
  }
  return hits;
}

async function semanticParsed(s: Searcher & { semantic: SemanticSearch }, parsed: ParsedQuery, q: Query, mode: 'semantic' | 'hybrid'): Promise<SearchHits> {
  if (!parsed.expr) return answer([], parsed);
  // Hybrid fuses each side's first `window` candidates (with a rerank, at least its top): a
  // window fixed for the query, not grown with the page, so that every page is cut from one
  // order. (Grown to offset + limit, it fused the first pages differently from the ones
  // before: "Show more" repeated some documents and skipped others — a trial.) Past the fused
  // candidates the other matches follow, each side's in its own order (beyondWindow).
  // Semantic mode's order is its scores': a window grown with the page keeps it.
  const window = mode === 'hybrid' ? Math.max(q.window, reranking(s, q) ? q.rerankTop : 0) : windowOf(s, q, q.window);
  const filters = allFilters(parsed, q);
  const text = parsed.text.slice(0, QUERY_EMBED_CHARS);
  const semantic = await s.semantic.entries(text, q, window, filters);
  // `-word` holds for semantic hits too: those whose text has an excluded word go. And a
  // query of identifiers alone (`1.5.4`, `ZSTD_CLEVEL`) asks for them: a document by meaning
  // is one that holds one as written (the model's neighbours of `1.5.4` held `0.5` and `1.0.5`:
  // a trial).
  const identifiers = exactTerms(parsed);
  const onlyIdentifiers = allExact(parsed, identifiers);
  const kept = async (all: FoundEntry[]) => {
    const excluded = s.db.read(() => excludedEntries(s.db, parsed, all.map((f) => f.entry_id)));
    const left = excluded.size ? all.filter((f) => !excluded.has(f.entry_id)) : all;
    if (!onlyIdentifiers || left.length === 0) return left;
    const holding = await holdingIdentifiers(s, parsed, q, identifiers, left);
    return left.filter((f) => holding.has(f.entry_id));
  };
  // Collapsed, each list holds a document once, at its first entry (its ranks count documents).
  const one = (xs: FoundEntry[]) => (q.collapse ? onePerDocument(xs, (f) => f.doc_id) : xs);
  const found = one(await kept(semantic.found));
  const passageIn = (chunks: typeof semantic.chunks) => (f: FoundEntry) => {
    const c = chunks.get(f.doc_id);
    return c ? { passage: { start: c.start, end: c.end } } : {};
  };
  const passage = passageIn(semantic.chunks);
  if (mode === 'semantic') {
    const ranked = found.map((f, i) => ({ f, extra: { matched: ['semantic'] as SearchHit['matched'], semantic: { rank: i + 1, score: f.score } }, ...passage(f) }));
    return finish(s, parsed, q, ranked, semantic.notEmbedded);
  }
  // Each side fuses its first `window` hits: entries, or collapsed documents (documentsFound).
  let kw = await documentsFound((n) => keywordFound(s, parsed, q, n, 0), window, q.collapse);
  // Keyword's side finding nothing as typed has its misspelt words read again (typos.ts; the
  // semantic side embeds the question as typed).
  if (kw.found.length === 0 && q.typos) {
    const read = withTyposRead(vocabulary(s), parsed);
    if (read !== parsed) {
      const shown = await typosShown(s, read);
      kw = await documentsFound((n) => keywordFound(s, (parsed = shown), q, n, 0), window, q.collapse);
    }
  } else if (q.typos) parsed = await noticingTypos(s, parsed);
  if (!q.pathPrefixes) parsed = sayingExcluded(s, parsed); // (as keywordSearch: the whole index's)
  const keyword = kw.found;
  // The third list: the matches that hold one of the question's identifiers as written, in
  // the question's BM25 order (exactQuery: the question AND an identifier), read and checked
  // when one is joined (the index's word is a one-word identifier: nothing to read). A
  // question of identifiers alone has its keyword list for that: nothing more is fused.
  const exact = exactTerms(parsed);
  const joined = exact.some((x) => x.joined);
  const held = exact.length === 0 || allExact(parsed, exact) ? [] : one(await kept((await documentsFound((n) => keywordFound(s, exactQuery(parsed, exact), q, n, 0, { check: joined ? holdsAny(exact) : null, checks: n }), window, q.collapse)).found));
  // Fused by entry, or collapsed by document: a document's first entry in keyword's list,
  // else semantic's, else exact's, stands for it (the lists may name different paths of it).
  const key = (f: FoundEntry) => (q.collapse ? f.doc_id : f.entry_id);
  const byId = new Map<number, FoundEntry>();
  for (const f of [...keyword, ...found, ...held]) if (!byId.has(key(f))) byId.set(key(f), f);
  const weights = { ...q.weights, keyword: q.weights.keyword ?? keywordWeight(parsed.text) };
  // (Keyword's and exact's scores are FTS5's bm25(), lower is better: negated to fuse.)
  const lists = [
    { items: keyword.map(key), scores: keyword.map((f) => -f.score), weight: weights.keyword },
    { items: found.map(key), scores: found.map((f) => f.score), weight: weights.semantic },
    { items: held.map(key), scores: held.map((f) => -f.score), weight: weights.exact },
  ];
  const fused = q.fusion === 'ranks' ? fuseRanks(lists, q.rrfK) : fuseScores(lists);
  const ranked = fused.map((x) => {
    const f = { ...byId.get(x.item)!, score: x.score };
    const [kr, sr, er] = x.ranks;
    return {
      f,
      extra: {
        matched: [...(kr ? ['keyword'] : []), ...(sr ? ['semantic'] : []), ...(er ? ['exact'] : [])] as SearchHit['matched'],
        ...(kr ? { keyword: { rank: kr, score: keyword[kr - 1]!.score } } : {}),
        ...(sr ? { semantic: { rank: sr, score: found[sr - 1]!.score } } : {}),
        ...(er ? { exact: { rank: er, score: held[er - 1]!.score } } : {}),
      },
      ...(sr && !kr ? passage(f) : {}),
    };
  });
  // (Asked when a page reaches past the fused list and a side may have more: keyword's filters
  // are in its query, semantic's window is counted before them — path, tag, time, `-word` —
  // so it may have more when its index gave a whole window. A short list of both costs no
  // second look: asked always, hybrid's p99 at 100,000 chunks doubled.)
  const need = q.offset + q.limit - ranked.length;
  if (need > 0 && (kw.more || semantic.full)) {
    ranked.push(...(await beyondWindow(s, parsed, { ...q, weights }, { read: kw.read, keyword: new Set(keyword.map(key)), need, key, seen: new Set(byId.keys()), last: ranked.at(-1)?.f.score, more: async (n) => {
      const wider = await s.semantic.entries(text, q, n, filters);
      return { found: await kept(wider.found), passage: passageIn(wider.chunks) };
    } })));
  }
  return finish(s, parsed, q, ranked, semantic.notEmbedded);
}

/**
 * The first `want` documents of a ranked list asked from the top (`ask(n)`: its first `n`
 * hits, and whether it has no more), each at its first hit — twice as many asked again while
 * documents repeat and there may be more (one ask when none repeats). `read`: the hits those
 * documents span (where a later look goes on); `more`: the list may hold more.
 */
async function firstDocuments<T>(ask: (n: number) => Promise<{ hits: T[]; exhausted: boolean }>, doc: (x: T) => number, want: number): Promise<{ hits: T[]; read: number; more: boolean }> {
  for (let n = want; ; n *= 2) {
    const r = await ask(n);
    const seen = new Set<number>();
    const hits: T[] = [];
    let read = r.hits.length;
    for (const [i, x] of r.hits.entries()) {
      if (seen.has(doc(x))) continue;
      if (hits.length === want) {
        read = i; // the next document begins here
        break;
      }
      seen.add(doc(x));
      hits.push(x);
    }
    if (hits.length === want || r.exhausted) return { hits, read, more: !r.exhausted };
  }
}

/**
 * A side's first `docs` hits for hybrid's fusion (`find(limit)`: its first entries, best first):
 * its first `docs` entries, or collapsed its first `docs` documents (firstDocuments).
 */
async function documentsFound(find: (limit: number) => Promise<FoundEntry[]>, docs: number, collapse: boolean): Promise<{ found: FoundEntry[]; read: number; more: boolean }> {
  if (!collapse) {
    const found = await find(docs);
    return { found, read: found.length, more: found.length === docs };
  }
  const first = await firstDocuments(async (n) => {
    const hits = await find(n);
    return { hits, exhausted: hits.length < n };
  }, (f) => f.doc_id, docs);
  return { found: first.hits, read: first.read, more: first.more };
}

/**
 * Hybrid's candidates past its fused window, for a page that reaches beyond them: keyword's
 * matches after those it fused (BM25 order, from entry `read`), then semantic's (similarity
 * order), each not fused already (`key`: an entry, or collapsed its document) — so that paging
 * on reaches every match, and every page is cut from one order. Ranks count a side's hits
 * (entries, or documents); scores go on down from the last fused one (a side's own reciprocal
 * rank, at most).
 */
async function beyondWindow(
  s: Searcher,
  parsed: ParsedQuery,
  q: Query & { weights: { keyword: number } },
  o: {
    /** Keyword's entries fused (the tail's keyword matches begin after them), and its hits there. */
    read: number;
    keyword: Set<number>;
    need: number;
    /** What a hit is (an entry, or collapsed its document), and those placed already. */
    key: (f: FoundEntry) => number;
    seen: Set<number>;
    last: number | undefined;
    more: (n: number) => Promise<{ found: FoundEntry[]; passage: (f: FoundEntry) => { passage?: { start: number; end: number } } }>;
  },
): Promise<Ranked[]> {
  const { need, key, seen } = o;
  let last = o.last ?? Infinity;
  const tail: Ranked[] = [];
  const add = (f: FoundEntry, rank: number, side: 'keyword' | 'semantic', extra: object = {}) => {
    seen.add(key(f));
    last = Math.min(last, q.weights[side] / (q.rrfK + rank));
    tail.push({ f: { ...f, score: last }, extra: { matched: [side] as SearchHit['matched'], [side]: { rank, score: f.score } }, ...extra });
  };
  // Keyword's next matches, a batch at a time until the page is full or they end: its hits
  // placed already (fused by another side, or copies of a document) are passed over, and a
  // batch of only those must not end the look (collapsed, a LICENSE at 300 paths was).
  const hits = o.keyword; // keyword's hits so far, for its ranks
  for (let at = o.read, batch = need + q.window; ; at += batch, batch *= 2) {
    const found = await keywordFound(s, parsed, q, batch, at);
    for (const f of found) {
      if (hits.has(key(f))) continue;
      hits.add(key(f));
      if (!seen.has(key(f))) add(f, hits.size, 'keyword');
      if (tail.length === need) return tail;
    }
    if (found.length < batch) break; // every keyword match is placed
  }
  // Semantic's next, those not placed already, in its order. (Not "past its window": its
  // window was taken before the filters, so entries the first call filtered out of its top
  // let deeper ones into the filtered list, unfused — found in review.)
  const semantic = await o.more(q.window + need + seen.size);
  const ranks = new Set<number>();
  for (const f of semantic.found) {
    if (ranks.has(key(f))) continue;
    ranks.add(key(f));
    if (!seen.has(key(f))) add(f, ranks.size, 'semantic', semantic.passage(f));
    if (tail.length === need) break;
  }
  return tail;
}
