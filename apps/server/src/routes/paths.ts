/** Logical paths and their versions. */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError } from '../errors.js';
import { detectMediaType } from '@kura/store';
import { sendDocument } from '../http/send.js';
import { DocumentInfo, MetaChange, PathQuery, SafePath, VersionInfo, errors, pathParam } from '../schemas.js';
import { timeOf } from '../http/filters.js';

const Which = z
  .object({
    version: z.coerce.number().int().min(1).optional(),
    at: z.string().optional().describe('the version that was latest at this time (ISO 8601 or milliseconds)'),
  })
  .strict();


export default async function paths(app: FastifyInstance) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  for (const method of ['GET', 'HEAD'] as const) {
    r.route({
      method,
      url: '/v1/paths/*',
      exposeHeadRoute: false,
      config: { scope: 'read' },
      schema: {
        summary: 'The document at a path: its latest version, ?version=N, or the one latest ?at= a time',
        params: z.object({ '*': z.string() }),
        querystring: Which,
        response: errors(400, 401, 403, 404, 416),
      },
      handler: async (request, reply) => {
        const path = pathParam(request.params['*']);
        const q = request.query;
        if (q.version !== undefined && q.at !== undefined) throw new HttpError('INVALID_INPUT', 'give version or at, not both', { field: 'version' });
        const v = await request.store.pathVersion(path, { ...(q.version !== undefined ? { version: q.version } : {}), ...(q.at !== undefined ? { at: timeOf(q.at) } : {}) });
        // The path's own media type (entries hold types: decision 0025), not the one the digest
        // finds on whichever entry shows the same bytes — that answered another path's type, and
        // told a limited token that its bytes were stored outside its prefixes. A path deleted
        // with its versions kept has no entry: typed by its name.
        const entry = await request.store.stat(path).catch(() => undefined);
        return sendDocument(request, reply, request.store, app.bytesCache, v.digest, {
          'content-type': (entry ? entry.mediaType : detectMediaType(path)) ?? 'application/octet-stream',
          'x-kura-version': String(v.version),
          'content-location': `/v1/documents/${v.digest}`,
          // A version's bytes never change; the latest (or the one at a time) does: revalidated
          // by its ETag on every use.
          ...(q.version === undefined ? { 'cache-control': 'private, no-cache' } : {}),
        });
      },
    });
  }

  r.get('/v1/entry', {
    config: { scope: 'read' },
    schema: { summary: 'A path\'s entry: its latest version, media type, tags and metadata', querystring: PathQuery, response: { 200: DocumentInfo, ...errors(400, 401, 403, 404) } },
    handler: async (request) => request.store.stat(pathParam(request.query.path)),
  });

  r.patch('/v1/entry', {
    config: { scope: 'write' },
    schema: {
      summary: 'Change a path\'s media type, tags or key/value metadata (every version keeps them)',
      querystring: PathQuery,
      body: MetaChange,
      response: { 200: DocumentInfo, 204: z.null(), ...errors(400, 401, 403, 404) },
    },
    handler: async (request, reply) => {
      const path = pathParam(request.query.path);
      await request.store.updateMeta([{ path, ...request.body }]);
      // The updated entry is an answer to read: a write-only token (an append-only client) gets 204.
      if (request.access && !request.access.scopes.has('read')) return reply.code(204).send(null);
      return request.store.stat(path);
    },
  });

  r.delete('/v1/entry', {
    config: { scope: 'delete' },
    schema: { summary: 'Delete a path with all its versions', querystring: PathQuery, response: { 204: z.null(), ...errors(400, 401, 403, 404) } },
    handler: async (request, reply) => {
      const path = pathParam(request.query.path);
      if (!(await request.store.deletePath(path))) throw new HttpError('NOT_FOUND', `no path ${path}`);
      return reply.code(204).send(null);
    },
  });

  r.get('/v1/versions', {
    config: { scope: 'read' },
    schema: {
      summary: 'The versions of a path, oldest first',
      querystring: z.object({ path: z.string() }).strict(),
      response: { 200: z.object({ versions: z.array(VersionInfo) }), ...errors(400, 401, 403, 404) },
    },
    handler: async (request) => {
      const path = pathParam(request.query.path);
      const versions = await request.store.versions(path);
      // A path never stored is 404, as `kura versions` and MCP's kura_versions say: an empty
      // list read as "no versions yet" by a client that then waits for one.
      if (versions.length === 0) throw new HttpError('NOT_FOUND', `no versions of ${path}: nothing is stored at that path (never stored, or deleted with its versions)`);
      return { versions };
    },
  });
}
