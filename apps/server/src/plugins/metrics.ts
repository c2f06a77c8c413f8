/**
 * `/metrics` in the Prometheus text format: requests by route, method and status, a latency
 * histogram, body bytes in and out, and the store's size and dedup ratio (read at scrape time).
 * Each app has its own registry, so several servers in one process do not mix their counts.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { HttpError } from '../errors.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

declare module 'fastify' {
  interface FastifyRequest {
    startedAt: bigint;
  }
}

export default fp(
  async (app: FastifyInstance) => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: 'kura_' });
    const labels = ['method', 'route', 'status'] as const;
    const requests = new Counter({ name: 'kura_http_requests_total', help: 'HTTP requests', labelNames: labels, registers: [registry] });
    const latency = new Histogram({
      name: 'kura_http_request_duration_seconds',
      help: 'HTTP request latency',
      labelNames: ['method', 'route'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [registry],
    });
    const bytesIn = new Counter({ name: 'kura_http_request_body_bytes_total', help: 'Request body bytes received', registers: [registry] });
    const bytesOut = new Counter({ name: 'kura_http_response_body_bytes_total', help: 'Response body bytes sent', registers: [registry] });
    const store = (name: string, help: string, read: (s: Awaited<ReturnType<typeof app.store.stats>>) => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        async collect() {
          this.set(read(await app.store.stats()));
        },
      });
    store('kura_store_documents', 'Documents in the store', (s) => s.documents);
    store('kura_store_logical_bytes', 'Sum of document sizes', (s) => s.logicalBytes);
    store('kura_store_stored_bytes', 'Bytes live chunks take in packs', (s) => s.storedBytes);
    store('kura_store_pack_bytes', 'Bytes of all pack files (garbage included)', (s) => s.packBytes);
    store('kura_store_dedup_ratio', 'Logical bytes per unique chunk byte', (s) => s.dedupRatio);
    store('kura_store_compression_ratio', 'Unique chunk bytes per stored byte', (s) => s.compressionRatio);

    app.decorateRequest('startedAt', 0n);
    app.decorateRequest('bytesIn', 0);
    app.decorateReply('bytesOut', 0);
    app.addHook('onRequest', async (request) => {
      request.startedAt = process.hrtime.bigint();
    });
    app.addHook('onSend', async (_request, reply, payload) => {
      if (typeof payload === 'string') reply.bytesOut += Buffer.byteLength(payload);
      else if (Buffer.isBuffer(payload)) reply.bytesOut += payload.length;
      return payload;
    });
    app.addHook('onResponse', async (request, reply) => {
      // The route as clients write it: fastify's pattern escapes a literal colon as `::`.
      const route = request.routeOptions.url?.replaceAll('::', ':') ?? 'unmatched';
      const seconds = Number(process.hrtime.bigint() - request.startedAt) / 1e9;
      requests.inc({ method: request.method, route, status: String(reply.statusCode) });
      latency.observe({ method: request.method, route }, seconds);
      if (request.bytesIn) bytesIn.inc(request.bytesIn);
      if (reply.bytesOut) bytesOut.inc(reply.bytesOut);
    });

    app.get('/metrics', { config: { scope: 'read' }, schema: { hide: true } }, async (request, reply) => {
      // The store's figures and every route's traffic: store-wide (decision 0060).
      if (request.access?.prefixes) throw new HttpError('FORBIDDEN', 'metrics are store-wide: a token limited to prefixes cannot read them', { prefixes: [...request.access.prefixes] });
      return reply.type(registry.contentType).send(await registry.metrics());
    });
  },
  { name: 'kura-metrics' },
);
