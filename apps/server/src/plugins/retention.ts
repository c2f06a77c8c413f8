/**
 * The server applies the retention policies kept in its store on a schedule (decision 0058):
 * every `retentionIntervalMs`, when the store has policies, it applies them and then runs GC,
 * as POST /v1/gc does. Several servers of one store on a bucket may each do so: a removal a
 * policy already made is skipped by the next (the operations are marked `policy`), and GC runs
 * on one server at a time under its lease (decision 0041).
 */
import { removedCounts } from '@kura/store';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export default fp(
  async (app: FastifyInstance, opts: { intervalMs: number }) => {
    const log = app.log.child({ component: 'retention' });
    let running: Promise<void> | undefined;
    const run = async () => {
      if ((await app.store.policies()).length === 0) return;
      const forgotten = removedCounts(await app.store.applyPolicies());
      const gc = await app.store.gc();
      log.info({ ...forgotten, bytesFreed: gc.bytesFreed }, `retention: ${forgotten.snapshots} snapshots and ${forgotten.versions} versions removed, ${gc.bytesFreed} bytes freed`);
    };
    const timer = setInterval(() => {
      running ??= run()
        .catch((e: Error) => log.error({ err: e }, `retention failed: ${e.message}`))
        .finally(() => (running = undefined));
    }, opts.intervalMs);
    timer.unref();
    app.addHook('preClose', async () => {
      clearInterval(timer);
      await running;
    });
  },
  { name: 'kura-retention', dependencies: ['kura-store'] },
);
