/**
 * A search, whole (FORMAT.md §10): the query parsed once (grammar.ts) — never refused — then
 * answered by keyword search (BM25 over the FTS5 index), semantic search (the embedder's
 * vectors, semantic/semantic-side.ts) or both fused (hybrid), and made into hits with snippets.
 */
import { InvalidInputError } from '@kura/core';
import type { SqlDatabase } from '../backend/sql.js';
import type { Reader } from '../bytes/read.js';
import type { Statements } from '../catalog/statements.js';
import { parse } from '../options.js';
import type { SemanticSearch } from '../semantic/semantic-side.js';
import { fuseRanks } from '../semantic/vectors.js';
import { parseQuery, type ParsedQuery } from './grammar.js';
import { allFilters, excludedEntries, keywordEntries, toHits, type FoundEntry } from './keyword.js';
import { SearchQuery, type SearchHit, type SearchHits } from './search-query.js';
import { syncHistory, type HistorySource } from './history.js';
import { allVersionsFound, historyMode, snapshotFound, type HistoryFound } from './history-search.js';
import { breather } from '../breather.js';

const breathe = breather();

/** Characters of a query the embedder is given at most: the local model reads 254 tokens. */
export const QUERY_EMBED_CHARS = 8192;

export interface Searcher {
  db: SqlDatabase;
  st: Statements;
  reader: Reader;
  semantic: SemanticSearch | undefined;
}

/**
 * The hits, with how the query was read. `parsedAs` and `fallbacks` are not enumerable: the
 * array's own entries are the hits, so `hits` compares, spreads and serialises as the list it is.
 */
function answer(hits: SearchHit[], parsed: ParsedQuery, notEmbedded?: number): SearchHits {
  Object.defineProperty(hits, 'parsedAs', { value: parsed.parsedAs, writable: true, configurable: true });
  if (parsed.fallbacks.length) Object.defineProperty(hits, 'fallbacks', { value: parsed.fallbacks, writable: true, configurable: true });
  const out = hits as SearchHits;
  if (notEmbedded) out.notEmbedded = notEmbedded;
  return out;
}

/** Keyword search alone (the index drained first by the caller). */
export async function keywordSearch(s: Searcher, query: string, options: SearchQuery): Promise<SearchHits> {
  if (typeof query !== 'string') throw new InvalidInputError('query must be a string', 'query');
  const q = parse(SearchQuery, options, 'search options');
  const parsed = parseQuery(query);
  const found = s.db.read(() => keywordEntries(s.db, parsed, q, q.limit, q.offset));
  const hits = await toHits(s.db, s.st, s.reader, parsed, found, (f) => ({ matched: ['keyword'], keyword: { rank: q.offset + found.indexOf(f) + 1, score: f.score } }));
  return answer(hits, parsed);
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
  if (s.writable) await syncHistory(s.history, async () => void (await breathe()));
  const window = q.offset + q.limit;
  const found = q.snapshot !== undefined ? snapshotFound(s.history, q.snapshot, parsed, q, window) : allVersionsFound(s.history, parsed, q, window);
  const page = found.slice(q.offset, q.offset + q.limit);
  const hits = await toHits(s.db, s.st, s.reader, parsed, page, (f) => ({
    matched: ['keyword'],
    keyword: { rank: q.offset + page.indexOf(f) + 1, score: f.score },
    ...((f as HistoryFound).version !== undefined ? { version: (f as HistoryFound).version } : {}),
  }));
  return answer(hits, parsed);
}

/** Semantic or hybrid hits for `query` (the keyword index drained first by the caller). */
export async function semanticSearch(s: Searcher & { semantic: SemanticSearch }, query: string, options: SearchQuery, mode: 'semantic' | 'hybrid'): Promise<SearchHits> {
  if (typeof query !== 'string') throw new InvalidInputError('query must be a string', 'query');
  const q = parse(SearchQuery, options, 'search options');
  const parsed = parseQuery(query);
  if (!parsed.expr) return answer([], parsed);
  const window = Math.max(q.window, q.offset + q.limit);
  const filters = allFilters(parsed, q);
  const semantic = await s.semantic.entries(parsed.text.slice(0, QUERY_EMBED_CHARS), q, window, filters);
  // `-word` holds for semantic hits too: those whose text has an excluded word go.
  const excluded = s.db.read(() => excludedEntries(s.db, parsed, semantic.found.map((f) => f.entry_id)));
  const found = excluded.size ? semantic.found.filter((f) => !excluded.has(f.entry_id)) : semantic.found;
  const passage = (f: FoundEntry) => {
    const c = semantic.chunks.get(f.doc_id);
    return c ? { passage: { start: c.start, end: c.end } } : {};
  };
  if (mode === 'semantic') {
    const page = found.slice(q.offset, q.offset + q.limit);
    const hits = await toHits(s.db, s.st, s.reader, parsed, page, (f) => ({ ...passage(f), matched: ['semantic'], semantic: { rank: found.indexOf(f) + 1, score: f.score } }));
    return answer(hits, parsed, semantic.notEmbedded);
  }
  const keyword = s.db.read(() => keywordEntries(s.db, parsed, q, window, 0));
  const byId = new Map<number, FoundEntry>();
  for (const f of [...keyword, ...found]) if (!byId.has(f.entry_id)) byId.set(f.entry_id, f);
  const fused = fuseRanks(
    [
      { items: keyword.map((f) => f.entry_id), weight: q.weights.keyword },
      { items: found.map((f) => f.entry_id), weight: q.weights.semantic },
    ],
    q.rrfK,
  ).slice(q.offset, q.offset + q.limit);
  const sides = new Map(fused.map((f) => [f.item, f]));
  const page = fused.map((f) => ({ ...byId.get(f.item)!, score: f.score }));
  const hits = await toHits(s.db, s.st, s.reader, parsed, page, (f) => {
    const [kr, sr] = sides.get(f.entry_id)!.ranks;
    return {
      matched: kr && sr ? ['keyword', 'semantic'] : kr ? ['keyword'] : ['semantic'],
      ...(kr ? { keyword: { rank: kr, score: keyword[kr - 1]!.score } } : {}),
      ...(sr ? { semantic: { rank: sr, score: found[sr - 1]!.score }, ...(kr ? {} : passage(f)) } : {}),
    };
  });
  return answer(hits, parsed, semantic.notEmbedded);
}
