/**
 * `kura serve --watch DIR` (decision 0059): the server keeps folders in its store as
 * `kura watch` does — catching up, then storing each change as it settles — and logs what it
 * stores and deletes. The watches stop before the store closes.
 */
import { basename, resolve } from 'node:path';
import type { Watch } from '@kura/store';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export default fp(
  async (app: FastifyInstance, opts: { dirs: string[] }) => {
    const log = app.log.child({ component: 'watch' });
    const watches: Watch[] = opts.dirs.map((dir) =>
      app.store.watch(dir, {
        prefix: `${basename(resolve(dir))}/`,
        onEvent: (e) => {
          if (e.type === 'error') log.warn({ path: e.path, code: e.code }, e.message);
          else if (e.type === 'scanning') log.warn(e.reason);
          else if (e.type === 'ready') log.info({ dir, stored: e.stored, deleted: e.deleted, unchanged: e.unchanged, ms: e.ms }, `watching ${dir}`);
          else log.info({ path: e.path, ...(e.type === 'stored' ? { digest: e.digest, size: e.size } : {}) }, `${e.type} ${e.path}`);
        },
      }),
    );
    // A folder that cannot be watched is said in the log; the server serves on.
    for (const [i, w] of watches.entries()) w.ready.catch((e: Error) => log.error({ dir: opts.dirs[i] }, `cannot watch ${opts.dirs[i]}: ${e.message}`));
    app.addHook('preClose', async () => {
      await Promise.all(watches.map((w) => w.close()));
    });
  },
  { name: 'kura-watch', dependencies: ['kura-store'] },
);
