/** Store-wide reads (stats, parameters) and the admin operations (gc, verify). */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { GcReport, Stats, VerifyReport, errors } from '../schemas.js';
import { removedCounts } from '@kura/store';

const Config = z.object({
  formatVersion: z.number().int(),
  storeId: z.string(),
  chunking: z
    .object({ min: z.number().int(), avg: z.number().int(), max: z.number().int(), seed: z.string().describe('decimal; XOR-ed into the gear table') })
    .describe('FastCDC 2020 parameters: chunk locally with these to sync'),
  compression: z.union([z.number().int(), z.literal(false)]),
  maxDocumentSize: z.number().int(),
});

export default async function admin(app: FastifyInstance, opts: { maxDocumentSize: number }) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get('/v1/stats', {
    config: { scope: 'read' },
    schema: { summary: 'Documents, bytes, dedup and compression ratios', response: { 200: Stats, ...errors(401, 403) } },
    handler: async () => app.store.stats(),
  });

  r.get('/v1/config', {
    config: { scope: 'read' },
    schema: { summary: 'The store’s chunking parameters and the server’s limits', response: { 200: Config, ...errors(401, 403) } },
    handler: async () => {
      const c = app.store.config;
      return {
        formatVersion: c.formatVersion,
        storeId: c.storeId,
        chunking: { min: c.chunking.min, avg: c.chunking.avg, max: c.chunking.max, seed: c.chunking.seed.toString() },
        compression: c.compression,
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
      const forgotten = removedCounts(request.query.policies === 'true' ? await app.store.applyPolicies() : []);
      return { forgotten, ...(await app.store.gc()) };
    },
  });

  r.post('/v1/refresh', {
    config: { scope: 'read' },
    schema: {
      summary: "Apply what other servers committed (a store on object storage); the log's newest seq",
      response: { 200: z.object({ commits: z.number().int().describe('commits applied now'), seq: z.number().int().describe('the newest commit this server has applied') }), ...errors(401, 403) },
    },
    handler: async () => app.store.refresh(),
  });

  r.post('/v1/verify', {
    config: { scope: 'admin' },
    schema: {
      summary: 'Check the store; report damage',
      description: 'readData=1: re-read and re-hash every chunk and document (the default on a local store); readData=0: the packs, their sizes and indexes against the catalog (the default on object storage).',
      querystring: z.object({ readData: z.enum(['0', '1', 'true', 'false']).optional() }),
      response: { 200: VerifyReport, ...errors(400, 401, 403) },
    },
    handler: async (request) => {
      const q = request.query.readData;
      return app.store.verify(undefined, q === undefined ? {} : { readData: q === '1' || q === 'true' });
    },
  });
}
