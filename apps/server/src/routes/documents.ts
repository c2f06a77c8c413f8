/** Documents: upload (raw, streamed), download (ETag, Range), list, delete, metadata. */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { acceptRawBodies, bodySource } from '../http/body.js';
import { digestParam } from '../http/digest.js';
import { FilterQuery, filtersOf } from '../http/filters.js';
import { PutQuery, putMetaFrom, withDetectedType } from '../http/meta.js';
import { sendDocument } from '../http/send.js';
import { DigestParams, DocumentInfo, ListResult, MetaChange, PutResult, SafePath, errors, putAnswer } from '../schemas.js';

export const ListQuery = z
  .object({
    ...FilterQuery,
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    cursor: z.string().optional().describe('nextCursor of the previous page'),
  })
  .strict();

export default async function documents(app: FastifyInstance, opts: { maxDocumentSize: number }) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  await r.register(async (raw) => {
    acceptRawBodies(raw);
    raw.withTypeProvider<ZodTypeProvider>().post('/v1/documents', {
      config: { scope: 'write' },
      schema: {
        summary: 'Store a document from the raw request body (streamed, any size up to the limit)',
        description:
          'Metadata from the query (path, type, tag, meta) or headers (x-kura-path, x-kura-tags, x-kura-meta); media type defaults to Content-Type, and is detected from the path and the first bytes when that is absent, application/octet-stream or application/x-www-form-urlencoded (curl\'s default). An expected digest in x-kura-sha256 or ?digest= makes a mismatch fail with DIGEST_MISMATCH and store nothing reachable.',
        querystring: PutQuery,
        response: { 201: PutResult, ...errors(400, 401, 403, 413, 429) },
      },
      handler: async (request, reply) => {
        const { meta, body } = await withDetectedType(putMetaFrom(request, request.query), await bodySource(request, opts.maxDocumentSize));
        const result = await request.store.put(body, meta);
        return reply.code(201).header('location', `/v1/documents/${result.digest}`).send(putAnswer(result, request.access?.scopes));
      },
    });
  });

  r.get('/v1/documents', {
    config: { scope: 'read' },
    schema: { summary: 'List entries (paths, and uploads without one), filtered, one page at a time', querystring: ListQuery, response: { 200: ListResult, ...errors(400, 401, 403) } },
    handler: async (request) => {
      const q = request.query;
      return request.store.list({ limit: q.limit, ...(q.cursor !== undefined ? { cursor: q.cursor } : {}), ...filtersOf(q) });
    },
  });

  for (const method of ['GET', 'HEAD'] as const) {
    r.route({
      method,
      url: '/v1/documents/:digest',
      exposeHeadRoute: false,
      config: { scope: 'read' },
      schema: {
        summary: method === 'GET' ? 'Download a document (streamed; ETag, If-None-Match, Range)' : 'Length, type and ETag of a document',
        params: DigestParams,
        response: errors(400, 401, 403, 404, 416),
      },
      handler: async (request, reply) => sendDocument(request, reply, request.store, app.bytesCache, digestParam(request.params.digest)),
    });
  }

  r.delete('/v1/documents/:digest', {
    config: { scope: 'delete' },
    schema: { summary: 'Delete this content from every path and version naming it (its chunks become garbage unless shared)', params: DigestParams, response: { 204: z.null(), ...errors(400, 401, 403, 404) } },
    handler: async (request, reply) => {
      const digest = digestParam(request.params.digest);
      if (!(await request.store.delete(digest))) await request.store.stat(digest); // NOT_FOUND
      app.bytesCache.delete(digest);
      return reply.code(204).send(null);
    },
  });

  r.get('/v1/documents/:digest/meta', {
    config: { scope: 'read' },
    schema: {
      summary: 'The entry this content names: its path, tags and metadata (AMBIGUOUS when several paths show it)',
      params: DigestParams,
      response: { 200: DocumentInfo, ...errors(400, 401, 403, 404, 409) },
    },
    handler: async (request) => request.store.stat(digestParam(request.params.digest)),
  });

  r.patch('/v1/documents/:digest/meta', {
    config: { scope: 'write' },
    schema: {
      summary: 'Change the media type, tags or key/value metadata of the entry this content names',
      description:
        'The digest names the document\'s upload without a path, else the one path showing it; when several paths show it the call fails with AMBIGUOUS (409, `paths` lists them) and nothing changes: use PATCH /v1/entry?path= instead.',
      params: DigestParams,
      body: MetaChange,
      response: { 200: DocumentInfo, 204: z.null(), ...errors(400, 401, 403, 404, 409) },
    },
    handler: async (request, reply) => {
      const digest = digestParam(request.params.digest);
      await request.store.updateMeta([{ digest, ...request.body }]);
      // The updated entry is an answer to read: a write-only token (an append-only client) gets 204.
      if (request.access && !request.access.scopes.has('read')) return reply.code(204).send(null);
      return request.store.stat(digest);
    },
  });

  r.post('/v1/meta::batch', {
    config: { scope: 'write' },
    schema: {
      summary: 'Up to 1,000 metadata changes in one transaction: all or none',
      description: 'Each update names its entry by `path` or by `digest` (as PATCH /v1/documents/{digest}/meta does).',
      body: z.object({ updates: z.array(MetaChange.extend({ digest: z.string().optional(), path: SafePath.optional() })).min(1).max(1000) }).strict(),
      response: { 200: z.object({ updated: z.number().int() }), ...errors(400, 401, 403, 404, 409) },
    },
    handler: async (request) => {
      return request.store.updateMeta(request.body.updates); // checked there: one of digest and path, as updates[i].digest
    },
  });
}
