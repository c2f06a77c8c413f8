/**
 * serve(): builds the app, listens, and shuts down gracefully on SIGTERM/SIGINT: stop
 * accepting, let requests in flight finish (up to `shutdownTimeoutMs`, then cut them), close
 * the store cleanly. A request cut off was never acknowledged, so nothing acknowledged is lost.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { build, type BuildOptions } from './app.js';
import { parseConfig, type ServerConfigInput } from './config.js';

export interface Running {
  app: FastifyInstance;
  /** The address it listens on, e.g. http://127.0.0.1:8787 */
  url: string;
  /** Graceful shutdown (what SIGTERM does); resolves when the store is closed. */
  shutdown(reason?: string): Promise<void>;
}

export async function serve(input: ServerConfigInput, options: Omit<BuildOptions, 'config'> & { signals?: boolean } = {}): Promise<Running> {
  const config = parseConfig(input);
  let generated: string | undefined;
  if (!config.noAuth && config.tokens.length === 0) {
    // Secure by default, usable at once: a token for this run, printed once (Jupyter's model),
    // unless the store keeps tokens (checked once it is open, below). Made before the app so
    // that its logger redacts it.
    generated = randomBytes(24).toString('base64url');
    config.tokens = [{ token: generated, scopes: ['admin'], name: 'generated' }];
  }
  const app = await build({ ...options, config });
  if (generated && (await app.store.tokens()).length > 0) {
    // The store keeps tokens (kura token add): those are the ones to use, not a generated one.
    config.tokens.length = 0;
    generated = undefined;
  }
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (e) {
    await app.close();
    throw e;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  app.log.info({ store: config.store, url, docs: `${url}/docs` }, 'kura server listening');
  if (generated) {
    process.stderr.write(`\nkura: no tokens configured (KURA_TOKENS); this run's admin token is:\n\n    ${generated}\n\n  curl -H 'Authorization: Bearer ${generated}' ${url}/v1/stats\n\n`);
  }

  let closing: Promise<void> | undefined;
  const shutdown = (reason = 'shutdown') =>
    (closing ??= (async () => {
      app.log.info({ reason, timeoutMs: config.shutdownTimeoutMs }, 'shutting down: finishing requests in flight');
      const timer = setTimeout(() => {
        app.log.warn('shutdown timeout: cutting off the requests still in flight');
        app.server.closeAllConnections();
      }, config.shutdownTimeoutMs);
      try {
        await app.close(); // stops accepting, waits for requests, then closes the store (onClose)
      } finally {
        clearTimeout(timer);
      }
      app.log.info('store closed; bye');
    })());

  if (options.signals !== false) {
    const onSignal = (signal: NodeJS.Signals) => {
      shutdown(signal).then(
        () => process.exit(0),
        (err: unknown) => {
          app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }
  return { app, url, shutdown };
}
