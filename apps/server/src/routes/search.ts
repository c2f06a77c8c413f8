/** Search over paths, tags, metadata and text (keyword, semantic, hybrid), and the index's status. */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { IndexStatus, SearchHit, errors } from '../schemas.js';
import { SEARCH_WAIT_MS, type Store } from '@kura/store';
import { FilterQuery, filtersOf } from '../http/filters.js';

/** Characters of a query accepted: a pasted page, many times over (a GET's URL is bounded by the server's header limit first: POST for long ones). */
export const QUERY_CHARS_MAX = 65_536;

const QUERY_DESCRIPTION =
  'Any text is a query: its words, any of them (BM25 ranks documents matching more and rarer words first; English words match by their stem, stop words are left out). Operators are honoured where well formed: "a phrase", prefix*, AND, OR, NOT (capitals), -word, path:P, tag:T, type:M; malformed operator syntax is read as words and `fallbacks` says so. Nothing is refused: a query with nothing to search for has no hits.';

const SearchFields = {
  q: z.string().max(QUERY_CHARS_MAX).describe('the query (docs/HTTP.md "Query language"); may be empty: no hits'),
  mode: z.enum(['keyword', 'semantic', 'hybrid']).optional().describe('default: hybrid when the server has a model (KURA_SEMANTIC), else keyword'),
  ...FilterQuery,
};

/** One hit per document (decision 0072), or a hit per path. */
const collapse = z.enum(['true', 'false']).default('true').describe('one hit per document (default): the same bytes at several paths are one hit, the others in alsoAt; false: a hit per path');

const history = {
  allVersions: z.enum(['true', 'false']).default('false').describe('every version of each path (by words): hits carry `version`'),
  snapshot: z.string().min(1).max(64).optional().describe("the files of this snapshot, by id or its first digits (by words): hits name the file's path in it"),
};

const rerankFields = {
  rerank: z.enum(['true', 'false']).optional().describe('with a reranker configured: false skips it for this search'),
  rerankTop: z.coerce.number().int().min(1).max(100).default(20).describe('with a reranker configured: how many of the first hits it reorders'),
  rerankMs: z.coerce.number().int().min(1).max(50_000).default(3_000).describe('with a reranker configured: how long to wait for it; then the hits keep their own order, and reranked says so'),
};

const minScore = z.coerce.number().min(-1).max(1).optional().describe('semantic and hybrid: the least cosine similarity of a semantic hit (default: the floor calibrated for the model)');

const SearchAnswer = z.object({
  hits: z.array(SearchHit),
  mode: z.enum(['keyword', 'semantic', 'hybrid']).optional().describe('which mode ranked the hits (the default: hybrid where a model is in use, else keyword)'),
  parsedAs: z.string().describe('how the query was read, in the query language\'s canonical form'),
  fallbacks: z.array(z.string()).optional().describe('operator syntax that was not well formed and was read as words instead'),
  notEmbedded: z.number().int().optional().describe('documents still to embed when waitMs ran out: the semantic side could not find them'),
  reranked: z
    .object({ model: z.string(), applied: z.boolean(), candidates: z.number().int(), ms: z.number(), reason: z.string().optional() })
    .optional()
    .describe('with a reranker configured (KURA_RERANK_URL): whether the first hits were reranked, or why the fused order was kept'),
});

const waitMs = z.coerce
  .number()
  .int()
  .min(0)
  .max(50_000)
  .default(SEARCH_WAIT_MS)
  .describe('semantic and hybrid: how long to wait for documents still to embed; then the answer leaves them out and says how many (notEmbedded)');

type SearchArgs = {
  q: string;
  mode?: 'keyword' | 'semantic' | 'hybrid' | undefined;
  limit: number;
  offset: number;
  waitMs: number;
  minScore?: number | undefined;
  allVersions?: boolean | 'true' | 'false';
  collapse?: boolean | 'true' | 'false';
  rerank?: boolean | 'true' | 'false' | undefined;
  rerankTop: number;
  rerankMs: number;
  snapshot?: string | undefined;
} & Parameters<typeof filtersOf>[0];

export default async function search(app: FastifyInstance) {
  const answer = async (store: Store, a: SearchArgs) => {
    const hits = await store.search(a.q, { limit: a.limit, offset: a.offset, waitMs: a.waitMs, ...(a.mode ? { mode: a.mode } : {}), ...(a.minScore !== undefined ? { minScore: a.minScore } : {}), ...(a.allVersions === true || a.allVersions === 'true' ? { allVersions: true } : {}), ...(a.collapse === false || a.collapse === 'false' ? { collapse: false } : {}), ...(a.snapshot !== undefined ? { snapshot: a.snapshot } : {}), ...(a.rerank !== undefined ? { rerank: a.rerank === true || a.rerank === 'true' } : {}), rerankTop: a.rerankTop, rerankMs: a.rerankMs, ...filtersOf(a) });
    return { hits: [...hits], ...(hits.mode ? { mode: hits.mode } : {}), parsedAs: hits.parsedAs, ...(hits.fallbacks ? { fallbacks: hits.fallbacks } : {}), ...(hits.notEmbedded ? { notEmbedded: hits.notEmbedded } : {}), ...(hits.reranked ? { reranked: hits.reranked } : {}) };
  };

  app.withTypeProvider<ZodTypeProvider>().get('/v1/search', {
    config: { scope: 'read' },
    schema: {
      summary: 'Ranked search with highlighted snippets',
      description: QUERY_DESCRIPTION,
      querystring: z
        .object({
          ...SearchFields,
          limit: z.coerce.number().int().min(1).max(1000).default(20),
          offset: z.coerce.number().int().min(0).max(100_000).default(0),
          waitMs,
          minScore,
          ...history,
          collapse,
          ...rerankFields,
        })
        .strict(),
      response: { 200: SearchAnswer, ...errors(400, 401, 403, 404, 503) },
    },
    handler: async (request) => answer(request.store, request.query),
  });

  app.withTypeProvider<ZodTypeProvider>().post('/v1/search', {
    config: { scope: 'read' },
    schema: {
      summary: 'Ranked search, the query in a JSON body (for queries longer than a URL holds)',
      description: `The same search as GET /v1/search, its parameters as a JSON object. ${QUERY_DESCRIPTION}`,
      body: z
        .object({
          ...SearchFields,
          limit: z.number().int().min(1).max(1000).default(20),
          offset: z.number().int().min(0).max(100_000).default(0),
          waitMs,
          minScore,
          allVersions: z.boolean().default(false),
          collapse: z.boolean().default(true),
          snapshot: history.snapshot,
          rerank: z.boolean().optional(),
          rerankTop: z.number().int().min(1).max(100).default(20),
          rerankMs: z.number().int().min(1).max(50_000).default(3_000),
        })
        .strict(),
      response: { 200: SearchAnswer, ...errors(400, 401, 403, 404, 413, 503) },
    },
    handler: async (request) => answer(request.store, request.body),
  });

  app.withTypeProvider<ZodTypeProvider>().get('/v1/index', {
    config: { scope: 'read' },
    schema: {
      summary: 'What the search index has still to do; documents whose text could not be extracted',
      description: '`wait=true` finishes pending indexing, text extraction and embedding first.',
      querystring: z.object({ wait: z.enum(['true', 'false']).default('false') }).strict(),
      response: { 200: IndexStatus, ...errors(400, 401, 403) },
    },
    handler: async (request) => request.store.indexStatus({ wait: request.query.wait === 'true' }),
  });
}
