/**
 * What a search is asked (SearchQuery: the filters of a listing, paging, the mode and its
 * fusion, how long to wait for embedding) and what it answers (SearchHit, SearchHits).
 */
import { z } from 'zod';
import { ListQuery } from '../options.js';
import type { RerankReport } from './modes.js';


export const SearchQuery = ListQuery.omit({ cursor: true, limit: true })
  .extend({
    limit: z.number().int().min(1).max(1000).default(20),
    offset: z.number().int().min(0).max(100_000).default(0),
    /** keyword (BM25), semantic (vectors), hybrid (both, fused); default hybrid when a model is in use. */
    mode: z.enum(['keyword', 'semantic', 'hybrid']).optional(),
    /**
     * Hybrid's fusion (fusion.ts, decision 0071) of keyword's list, semantic's and — for a
     * question with identifiers (`6.17.0`, `ERR_REQUIRE_ESM`; exact-terms.ts) — the documents
     * holding them as written: by `scores` (each list's scores scaled to [0, 1] over its window,
     * times its weight, summed; the default) or by `ranks` (reciprocal rank fusion, with `rrfK`);
     * each list's weight, and how many hits of each list it fuses (`window`). Keyword's weight,
     * unless given: 1 for a query of three words or fewer (stop words aside), else 0.6
     * (fusion.ts `keywordWeight`, decision 0071 amended).
     */
    fusion: z.enum(['scores', 'ranks']).default('scores'),
    rrfK: z.number().min(0).max(10_000).default(60),
    weights: z
      .object({ keyword: z.number().min(0).max(100).optional(), semantic: z.number().min(0).max(100).default(1), exact: z.number().min(0).max(100).default(1) })
      .strict()
      .default({ semantic: 1, exact: 1 }),
    window: z.number().int().min(1).max(1000).default(100),
    /**
     * A query whose keyword match finds nothing has its misspelt words read as the nearest
     * the index holds (typos.ts; default true). False: as typed — a token limited to path
     * prefixes searches so, for the index's words are the whole store's (a trial: the reading
     * said a word only a document outside its prefixes held).
     */
    typos: z.boolean().default(true),
    /**
     * One hit per document (decision 0072, default true): the same bytes at several paths —
     * copies, a LICENSE in every package, gzip(1)/gunzip(1)/zcat(1) — are one hit, at its best
     * ranked path, the others in `alsoAt`; pages count documents. False: a hit per path.
     * Searches through history (`allVersions`, `snapshot`) are by version and never collapse.
     */
    collapse: z.boolean().default(true),
    /**
     * Semantic and hybrid: the least cosine similarity a semantic hit needs (floor.ts). Default:
     * the floor calibrated for the store's model (none for a model not calibrated here).
     */
    minScore: z.number().min(-1).max(1).optional(),
    /** With a reranker in use (Store.useReranker): whether to rerank (default true), how many of the first hits, and within how long (ms). */
    rerank: z.boolean().optional(),
    rerankTop: z.number().int().min(1).max(100).default(20),
    rerankMs: z.number().int().min(1).max(60_000).default(3_000),
    /** Every version of each path, not only the latest (history-search.ts): hits carry `version`. */
    allVersions: z.boolean().default(false),
    /** The files of this snapshot (an id or a unique prefix of one): hits name the file's path in it. */
    snapshot: z.string().min(1).max(64).optional(),
    /**
     * Semantic and hybrid: how long to wait for documents still to embed (milliseconds); past
     * it the semantic side answers from what is embedded and the hits say how many it could
     * not see (SearchHits.notEmbedded). Default: no limit, every committed document first.
     */
    waitMs: z.number().int().min(0).max(24 * 3_600_000).optional(),
  })
  .strict();
export type SearchQuery = z.input<typeof SearchQuery>;

/**
 * Hits, best first. `parsedAs`: how the query was read (grammar.ts, in its canonical form);
 * `fallbacks`: operator syntax that was not well formed and was read as words instead, or
 * left out (an `OR` beside a filter), and parentheses that did not group.
 * `reranked`: how a rerank went, when a reranker is in use (applied, or why not).
 * `notEmbedded`: a semantic or hybrid search whose `waitMs` ran out — how many documents were
 * still to embed, which its semantic side could not find (keyword search sees every committed
 * change, but for a store opened read-only: `notIndexed`). `mode`: which ranked them (the default is hybrid where a model is in use,
 * else keyword; a search through history is by words).
 */
export type SearchHits = SearchHit[] & {
  parsedAs: string;
  fallbacks?: string[];
  notEmbedded?: number;
  /**
   * A store opened read-only, which cannot bring its indexes up to date: how many entries a
   * writer changed and has not indexed yet (its keyword index), or, searching through history,
   * how many documents (older versions, snapshots' files) its history index lacks — which this
   * search could not find.
   */
  notIndexed?: number;
  reranked?: RerankReport;
  mode?: 'keyword' | 'semantic' | 'hybrid';
};

/**
 * The `waitMs` a caller who answers people uses (the HTTP server, MCP): a search right after a
 * large upload would otherwise wait for all of it to embed — minutes on the local model — past
 * an HTTP connection's idle timeout or an assistant's patience. A second embeds ~50 documents
 * of prose here: one just put is always in; a bulk upload's backlog is left to the background.
 */
export const SEARCH_WAIT_MS = 1_000;
export type SearchMode = 'keyword' | 'semantic' | 'hybrid';

export interface SearchHit {
  digest: `sha256:${string}`;
  path: string | null;
  mediaType: string | null;
  size: number;
  /**
   * Hits come best first. Keyword mode: BM25 (lower is better, as SQLite reports it);
   * semantic: the cosine similarity of the best chunk; hybrid: the fused score (higher is better).
   */
  score: number;
  /** Best-matching passage, matched terms between `<mark>` and `</mark>`. */
  snippet: string;
  /** The document's bytes failed their check (CORRUPT_DATA) when its text was read for the snippet: the message. Run verify. */
  damaged?: string;
  /** A search through versions (`allVersions`): the version of `path` that matched. */
  version?: number;
  /** Reranked (a reranker in use): this hit's rank among the candidates reranked, and its score. */
  rerank?: { rank: number; score: number };
  /**
   * Which sides found this hit: keyword (its terms), semantic (its meaning, above the floor),
   * exact (it holds the question's identifiers as written: exact-terms.ts), or several.
   */
  matched: ('keyword' | 'semantic' | 'exact')[];
  /** This hit's rank (from 1) and score on each side that found it (exact's: among the matches of the query AND an identifier, and their BM25). */
  keyword?: { rank: number; score: number };
  semantic?: { rank: number; score: number };
  exact?: { rank: number; score: number };
  /**
   * Collapsed (the default): the other paths holding the same bytes that the search's filters
   * keep, in path order, ALSO_AT_MAX at most; `alsoAtMore` counts those left out.
   */
  alsoAt?: string[];
  alsoAtMore?: number;
}
