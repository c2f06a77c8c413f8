/** Store-wide reads (stats, parameters) and the admin operations (gc, verify, tokens). */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { GcReport, Stats, VerifyReport, errors } from '../schemas.js';
import { SCOPES, removedCounts } from '@kura/store';
import { HttpError } from '../errors.js';

const TokenInfo = z.object({
  name: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  prefixes: z.array(z.string()).optional().describe('the path prefixes it reaches; absent: every path'),
  createdAt: z.string(),
});

const Config = z.object({
  formatVersion: z.number().int(),
  storeId: z.string(),
  chunking: z
    .object({ min: z.number().int(), avg: z.number().int(), max: z.number().int(), seed: z.string().optional().describe("decimal; XOR-ed into the gear table (absent: an encrypted store's, which is secret)") })
    .describe('FastCDC 2020 parameters: chunk locally with these to sync'),
  compression: z.union([z.number().int(), z.literal(false)]),
  encrypted: z.boolean().describe('an encrypted store (FORMAT.md §17): its chunk names are keyed, so chunk sync from outside it does not apply'),
  maxDocumentSize: z.number().int(),
});

export default async function admin(app: FastifyInstance, opts: { maxDocumentSize: number; configuredNames?: string[] }) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get('/v1/stats', {
    config: { scope: 'read' },
    schema: { summary: 'Documents, bytes, dedup and compression ratios', response: { 200: Stats, ...errors(401, 403) } },
    handler: async (request) => request.store.stats(),
  });

  r.get('/v1/config', {
    config: { scope: 'read' },
    schema: { summary: 'The store’s chunking parameters and the server’s limits', response: { 200: Config, ...errors(401, 403) } },
    handler: async () => {
      const c = app.store.config;
      return {
        formatVersion: c.formatVersion,
        storeId: c.storeId,
        chunking: { min: c.chunking.min, avg: c.chunking.avg, max: c.chunking.max, ...(c.encrypted ? {} : { seed: c.chunking.seed.toString() }) },
        compression: c.compression,
        encrypted: c.encrypted,
        maxDocumentSize: opts.maxDocumentSize,
      };
    },
  });

  r.post('/v1/gc', {
    config: { scope: 'admin' },
    schema: {
      summary: 'Apply the retention policies kept in the store, then reclaim unreferenced chunks and compact packs',
      querystring: z.object({ policies: z.enum(['true', 'false']).default('true').describe('false: leave the policies for later') }).strict(),
      response: { 200: GcReport.extend({ forgotten: z.object({ snapshots: z.number().int(), versions: z.number().int() }) }), ...errors(400, 401, 403) },
    },
    handler: async (request) => {
      const forgotten = removedCounts(request.query.policies === 'true' ? await request.store.applyPolicies() : []);
      return { forgotten, ...(await request.store.gc()) };
    },
  });

  r.post('/v1/refresh', {
    config: { scope: 'read' },
    schema: {
      summary: "Apply what other servers committed (a store on object storage); the log's newest seq",
      response: { 200: z.object({ commits: z.number().int().optional().describe('commits applied now'), seq: z.number().int().optional().describe('the newest commit this server has applied') }).describe('both left out for a token limited to prefixes: they count the whole store\'s commits'), ...errors(401, 403) },
    },
    handler: async (request) => request.store.refresh(),
  });

  r.post('/v1/verify', {
    config: { scope: 'admin' },
    schema: {
      summary: 'Check the store; report damage',
      description: 'readData=1: re-read and re-hash every chunk and document (the default on a local store); readData=0: the packs, their sizes and indexes against the catalog (the default on object storage).',
      querystring: z.object({ readData: z.enum(['0', '1', 'true', 'false']).optional() }).strict(),
      response: { 200: VerifyReport, ...errors(400, 401, 403) },
    },
    handler: async (request) => {
      const q = request.query.readData;
      return request.store.verify(undefined, q === undefined ? {} : { readData: q === '1' || q === 'true' });
    },
  });

  r.get('/v1/tokens', {
    config: { scope: 'admin' },
    schema: { summary: 'The access tokens kept in the store (never their secrets)', response: { 200: z.object({ tokens: z.array(TokenInfo) }), ...errors(401, 403) } },
    handler: async (request) => ({ tokens: await request.store.tokens() }),
  });

  r.post('/v1/tokens', {
    config: { scope: 'admin' },
    schema: {
      summary: 'Make an access token kept in the store; its secret is in this answer only',
      description: 'Scopes: read, write (adds, never removes), delete, admin (includes the others). `prefixes`: the paths it reaches (absent: every path). Every server of the store accepts it once it has read the log that far.',
      body: z.object({ name: z.string(), scopes: z.array(z.enum(SCOPES)).min(1), prefixes: z.array(z.string()).min(1).max(64).optional() }).strict(),
      response: { 201: z.object({ token: TokenInfo, secret: z.string() }), ...errors(400, 401, 403) },
    },
    handler: async (request, reply) => {
      // A name the server's own configuration gives a token too: logs and answers that name a
      // token could not tell the two apart.
      if (opts.configuredNames?.includes(request.body.name)) throw new HttpError('INVALID_INPUT', `a token named ${request.body.name} is configured on this server (KURA_TOKENS): give another name`, { field: 'name' });
      return reply.code(201).send(await request.store.addToken(request.body));
    },
  });

  r.delete('/v1/tokens/:name', {
    config: { scope: 'admin' },
    schema: { summary: 'Revoke an access token kept in the store', params: z.object({ name: z.string() }), response: { 204: z.null(), ...errors(400, 401, 403, 404) } },
    handler: async (request, reply) => {
      if (!(await request.store.revokeToken(request.params.name))) throw new HttpError('NOT_FOUND', `no token named ${request.params.name}`);
      return reply.code(204).send(null);
    },
  });
}
