/** Full-text search over paths, tags, metadata and text. */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { IndexStatus, SearchHit, errors } from '../schemas.js';
import { SEARCH_WAIT_MS } from '@kura/store';
import { FilterQuery, filtersOf } from '../http/filters.js';

export default async function search(app: FastifyInstance) {
  app.withTypeProvider<ZodTypeProvider>().get('/v1/search', {
    config: { scope: 'read' },
    schema: {
      summary: 'Ranked full-text search with highlighted snippets',
      description: 'Plain words match as words, any of them (BM25 ranks documents matching more and rarer words first); FTS5 syntax (AND, OR, NOT, "phrases", prefix*) is accepted. A malformed query is INVALID_QUERY.',
      querystring: z
        .object({
          q: z.string().min(1).max(4096),
          mode: z.enum(['keyword', 'semantic', 'hybrid']).optional().describe('default: hybrid when the server has a model (KURA_SEMANTIC), else keyword'),
          ...FilterQuery,
          limit: z.coerce.number().int().min(1).max(1000).default(20),
          offset: z.coerce.number().int().min(0).max(100_000).default(0),
          waitMs: z.coerce
            .number()
            .int()
            .min(0)
            .max(50_000)
            .default(SEARCH_WAIT_MS)
            .describe('semantic and hybrid: how long to wait for documents still to embed; then the answer leaves them out and says how many (notEmbedded)'),
        })
        .strict(),
      response: {
        200: z.object({
          hits: z.array(SearchHit),
          notEmbedded: z.number().int().optional().describe('documents still to embed when waitMs ran out: the semantic side could not find them'),
        }),
        ...errors(400, 401, 403, 503),
      },
    },
    handler: async (request) => {
      const q = request.query;
      const hits = await app.store.search(q.q, { limit: q.limit, offset: q.offset, waitMs: q.waitMs, ...(q.mode ? { mode: q.mode } : {}), ...filtersOf(q) });
      return { hits: [...hits], ...(hits.notEmbedded ? { notEmbedded: hits.notEmbedded } : {}) };
    },
  });

  app.withTypeProvider<ZodTypeProvider>().get('/v1/index', {
    config: { scope: 'read' },
    schema: {
      summary: 'What the search index has still to do; documents whose text could not be extracted',
      description: '`wait=true` finishes pending indexing, text extraction and embedding first.',
      querystring: z.object({ wait: z.enum(['true', 'false']).default('false') }).strict(),
      response: { 200: IndexStatus, ...errors(400, 401, 403) },
    },
    handler: async (request) => app.store.indexStatus({ wait: request.query.wait === 'true' }),
  });
}
