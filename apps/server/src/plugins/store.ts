/**
 * The store the API serves, as `app.store`: one embedded store per server, opened (or created,
 * the first time) in the configured directory, closed when the server closes, after the last
 * request. A store passed in by the caller is left open for the caller to close.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { configuredReranker, configuredEmbedder, CONFIG_FILE, DB_FILE, isObjectLocation, ModelUnavailableError, NotFoundError, Store, type Embedder, type PasswordSource } from '@kura/store';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    store: Store;
  }
}

/** How the server opens its store (config.ts). */
export interface StoreSettings {
  gcMarginMs?: number | undefined;
  logRetentionMs?: number | undefined;
  /** An encrypted store's password (FORMAT.md §17). */
  password?: PasswordSource | undefined;
  /** The store must be encrypted: a plain one is refused, and none is made where there is none. */
  requireEncryption?: boolean | undefined;
}

export async function openOrCreate(dir: string, settings: StoreSettings = {}, created: () => void = () => {}): Promise<Store> {
  const options = {
    ...(settings.gcMarginMs === undefined ? {} : { gcMarginMs: settings.gcMarginMs }),
    ...(settings.logRetentionMs === undefined ? {} : { logRetentionMs: settings.logRetentionMs }),
    ...(settings.password === undefined ? {} : { password: settings.password }),
    ...(settings.requireEncryption ? { requireEncryption: true } : {}),
  };
  // A new store is made, then opened as an existing one would be (with this server's options).
  // Not where an encrypted one is expected: `kura init --encrypt` makes that (with its password).
  const create = async () => {
    if (settings.requireEncryption) throw new NotFoundError(`no Kura store at ${dir}: a password is configured, so the server makes no plain store; make an encrypted one with kura init --encrypt`);
    await (await Store.init(dir)).close();
    created();
    return Store.open(dir, options);
  };
  if (isObjectLocation(dir)) {
    // A bucket without a store gets one; any other failure (credentials, a dead endpoint) stops the server.
    try {
      return await Store.open(dir, options);
    } catch (e) {
      if ((e as { code?: unknown }).code !== 'NOT_FOUND') throw e;
      return create();
    }
  }
  return existsSync(join(dir, DB_FILE)) || existsSync(join(dir, CONFIG_FILE)) ? Store.open(dir, options) : create();
}

/**
 * The embedder for `semantic` (config.ts): KURA_EMBED_URL's endpoint, else the local model;
 * loaded for `on` (or the server does not start), for `auto` when it loads.
 */
async function embedder(semantic: 'on' | 'auto' | 'off', app: FastifyInstance): Promise<Embedder | undefined> {
  if (semantic === 'off') return undefined;
  try {
    return await configuredEmbedder();
  } catch (e) {
    if (semantic === 'auto' && e instanceof ModelUnavailableError) {
      app.log.warn({ err: e.message }, 'semantic search is off: no embedding model');
      return undefined;
    }
    throw e;
  }
}

export default fp(
  async (app: FastifyInstance, opts: { dir: string; store?: Store | undefined; semantic?: 'on' | 'auto' | 'off'; settings?: StoreSettings }) => {
    const model = await embedder(opts.semantic ?? 'off', app);
    let store: Store;
    try {
      // Said: on a shared bucket a mistyped prefix made an empty store without a word (a trial).
      store = opts.store ?? (await openOrCreate(opts.dir, opts.settings, () => app.log.warn({ store: opts.dir }, `no store was at ${opts.dir}: a new, empty one was made there`)));
    } catch (e) {
      await model?.close();
      throw e;
    }
    if (model) store.useEmbedder(model);
    // Reranking (decision 0054's amendment): only when KURA_RERANK_URL names an endpoint.
    const reranker = configuredReranker(process.env);
    if (reranker) {
      store.useReranker(reranker);
      app.log.info({ model: reranker.model }, 'search results are reranked');
    }
    app.decorate('store', store);
    // A read that asks for freshness sees every commit other servers made before it was sent
    // (a store on object storage refreshes by polling otherwise; decision 0040).
    app.addHook('preHandler', async (req) => {
      if (req.headers['x-kura-fresh'] === '1') await store.refresh();
    });
    app.addHook('onClose', async () => {
      if (!opts.store) await store.close();
      await model?.close();
    });
  },
  { name: 'kura-store' },
);
