/**
 * The store the API serves, as `app.store`: one embedded store per server, opened (or created,
 * the first time) in the configured directory, closed when the server closes, after the last
 * request. A store passed in by the caller is left open for the caller to close.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DB_FILE, Store } from '@kura/store';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    store: Store;
  }
}

export async function openOrCreate(dir: string): Promise<Store> {
  return existsSync(join(dir, DB_FILE)) ? Store.open(dir) : Store.init(dir);
}

export default fp(
  async (app: FastifyInstance, opts: { dir: string; store?: Store | undefined }) => {
    const store = opts.store ?? (await openOrCreate(opts.dir));
    app.decorate('store', store);
    if (!opts.store) app.addHook('onClose', async () => store.close());
  },
  { name: 'kura-store' },
);
