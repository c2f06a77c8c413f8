/**
 * `kura serve --watch DIR` (decision 0059): the server keeps folders in its store as
 * `kura watch` does — catching up, then storing each change as it settles — and logs what it
 * stores and deletes. The watches stop before the store closes.
 */
import { basename, resolve } from 'node:path';
import { InvalidInputError, type FileToPut, type PutMeta, type Store, type Watch } from '@kura/store';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** The store's puts (each with the argument its meta is), guarded: the routes and MCP reach them. */
const PUTS_WITH_META = { put: 1, putChunks: 1, link: 1, commitChunks: 1 } as const;

/**
 * The store as requests see it: a put at a path under a watched prefix is refused. The watch
 * owns its prefix (the folder is what the store shows there): a note an assistant added there
 * over MCP was deleted at the next catch-up, the server's restart (a trial). The watches
 * themselves put through the store they were made with, not this one.
 */
function guarded(store: Store, owned: { prefix: string; dir: string }[]): Store {
  const check = (path: unknown) => {
    if (typeof path !== 'string') return;
    const w = owned.find((o) => path.startsWith(o.prefix));
    if (w) throw new InvalidInputError(`${path} is under ${w.prefix}, which this server keeps from the folder ${w.dir} (serve --watch): put there, it would be deleted at the watch's next catch-up; save it as a file in that folder instead`, 'path');
  };
  return new Proxy(store, {
    get(target, key) {
      // (Read on the store itself: its getters use private fields, which a proxy lacks.)
      const value = Reflect.get(target, key) as unknown;
      if (typeof value !== 'function') return value;
      if (key in PUTS_WITH_META) {
        const at = PUTS_WITH_META[key as keyof typeof PUTS_WITH_META];
        return (...args: unknown[]) => {
          check((args[at] as PutMeta | undefined)?.path);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      if (key === 'putFiles') {
        return (files: Iterable<FileToPut> | AsyncIterable<FileToPut>, ...rest: unknown[]) => {
          // Each file checked as it is taken (putFiles takes async iterables too).
          async function* checked(): AsyncGenerator<FileToPut> {
            for await (const f of files) {
              check(f.meta?.path);
              yield f;
            }
          }
          return (value as (...a: unknown[]) => unknown).apply(target, [checked(), ...rest]);
        };
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

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
    // Requests see the store with the watched prefixes guarded (the watches keep the store itself).
    app.store = guarded(app.store, opts.dirs.map((dir) => ({ prefix: `${basename(resolve(dir))}/`, dir })));
    // A folder that cannot be watched is said in the log; the server serves on.
    for (const [i, w] of watches.entries()) w.ready.catch((e: Error) => log.error({ dir: opts.dirs[i] }, `cannot watch ${opts.dirs[i]}: ${e.message}`));
    app.addHook('preClose', async () => {
      await Promise.all(watches.map((w) => w.close()));
    });
  },
  { name: 'kura-watch', dependencies: ['kura-store'] },
);
