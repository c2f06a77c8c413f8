/**
 * Chunk-level sync (docs/FORMAT.md §12): ask which chunks are missing, upload only those,
 * commit the document as its list of chunk keys. The server re-hashes everything.
 */
import type { FastifyInstance } from 'fastify';
import { isKuraError } from '@kura/core';
import { detectMediaType } from '@kura/store';
import { HttpError } from '../errors.js';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { acceptRawBodies, collect } from '../http/body.js';
import { expectedDigest, keyParam } from '../http/digest.js';
import { ChunkKey, PutResult, SafePath, errors } from '../schemas.js';

/** Keys per missing-chunks query (the limit; a client batches beyond it). */
export const MISSING_MAX_KEYS = 10_000;
/** A manifest of up to 1,000,000 keys (16 GiB at the default average chunk) fits in this. */
export const COMMIT_BODY_LIMIT = 72 << 20;

const Commit = z
  .object({
    chunks: z.array(z.string()).max(1_000_000).describe('chunk keys in document order'),
    digest: z.string().optional().describe('the SHA-256 the client computed: sha256:<hex> or hex'),
    path: SafePath.optional(),
    mediaType: z.string().optional(),
    tags: z.array(z.string()).max(1000).optional(),
    meta: z.record(z.string(), z.string()).optional(),
  })
  .strict();

export default async function chunks(app: FastifyInstance, opts: { maxDocumentSize: number }) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post('/v1/chunks::missing', {
    config: { scope: 'write' },
    schema: {
      summary: 'Which of these chunk keys the store lacks (up to 10,000 per request)',
      body: z.object({ keys: z.array(z.string()).max(MISSING_MAX_KEYS) }).strict(),
      response: { 200: z.object({ missing: z.array(ChunkKey) }), ...errors(400, 401, 403, 413) },
    },
    handler: async (request) => ({ missing: await request.store.missingChunks(request.body.keys) }),
  });

  await r.register(async (raw) => {
    acceptRawBodies(raw);
    raw.withTypeProvider<ZodTypeProvider>().put('/v1/chunks/:key', {
      config: { scope: 'write' },
      schema: {
        summary: 'Upload one chunk (raw bytes); the server re-hashes it and refuses a wrong key',
        params: z.object({ key: z.string() }),
        response: { 200: z.object({ key: ChunkKey, stored: z.literal(false) }), 201: z.object({ key: ChunkKey, stored: z.literal(true) }), ...errors(400, 401, 403, 413) },
      },
      handler: async (request, reply) => {
        const key = keyParam(request.params.key);
        const bytes = await collect(request, request.store.config.chunking.max);
        const result = await request.store.putChunk(bytes, { expectKey: key });
        return reply.code(result.stored ? 201 : 200).send(result);
      },
    });
  });

  r.post('/v1/documents::commit', {
    config: { scope: 'write' },
    bodyLimit: COMMIT_BODY_LIMIT,
    schema: {
      summary: 'Store a document made of stored chunks; the server hashes the reassembled bytes',
      description: 'Every chunk must be in the store, else 409 MISSING_CHUNKS lists the absent keys; a digest that differs from the bytes is 400 DIGEST_MISMATCH. Either way nothing is stored.',
      body: Commit,
      response: { 201: PutResult, ...errors(400, 401, 403, 409, 413) },
    },
    handler: async (request, reply) => {
      const b = request.body;
      const digest = expectedDigest(b.digest, 'digest');
      // Typed by its path's name when the client says nothing, as POST /v1/documents types it
      // (sync/a.txt was served as application/octet-stream: a trial).
      const mediaType = b.mediaType ?? (b.path !== undefined ? detectMediaType(b.path) : undefined);
      const meta = {
        ...(b.path !== undefined ? { path: b.path } : {}),
        ...(mediaType !== undefined ? { mediaType } : {}),
        ...(b.tags !== undefined ? { tags: b.tags } : {}),
        ...(b.meta !== undefined ? { meta: b.meta } : {}),
        ...(digest ? { expectDigest: digest } : {}),
      };
      // The document limit holds for documents made of chunks as for uploads.
      const result = await request.store.commitChunks(b.chunks, meta, { maxSize: opts.maxDocumentSize }).catch((e: unknown) => {
        if (isKuraError(e) && e.code === 'INVALID_INPUT' && (e as { field?: string }).field === 'size') throw new HttpError('PAYLOAD_TOO_LARGE', `the document would be over this server's limit of ${opts.maxDocumentSize} bytes`, { limit: opts.maxDocumentSize });
        throw e;
      });
      return reply.code(201).header('location', `/v1/documents/${result.digest}`).send(result);
    },
  });
}
