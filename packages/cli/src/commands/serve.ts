/**
 * `kura serve [--host H] [--port N] [--no-auth]`: the HTTP API (apps/server) with this
 * store embedded, and MCP over HTTP at /mcp. Settings come from KURA_* variables (docs/HTTP.md), flags override them;
 * the store is the global one (--store, $KURA_STORE, ./.kura), created when absent. Runs until
 * SIGTERM or Ctrl-C, then finishes requests in flight and closes the store.
 */
import type { Command } from 'commander';
import { wholeNumber } from '../args.js';
import { usage } from '../exit.js';
import { storeDir } from '../store.js';
import { passwordConfigured, storePassword } from '../password.js';

interface ServeOptions {
  host?: string;
  port?: string;
  auth: boolean;
  logLevel?: string;
  logFormat?: string;
  maxDocumentSize?: string;
  rateLimit?: string;
  corsOrigin?: string[];
  allowedHost?: string[];
  watch?: string[];
  semantic?: string;
}

export function register(program: Command): void {
  program
    .command('serve')
    .description('run the HTTP API on this store (created if absent); tokens from $KURA_TOKENS and kura token add')
    .option('--host <host>', 'address to listen on (default: $KURA_HOST, else 127.0.0.1)')
    .option('--port <n>', 'port (default: $KURA_PORT, else 8787; 0 picks a free one)')
    .option('--no-auth', 'serve without authentication (local use only; the log says so)')
    .option('--log-level <level>', 'fatal, error, warn, info (default), debug, trace or silent')
    .option('--log-format <format>', 'pretty (a line per request, for people), json (for machines) or auto (default: pretty on a terminal)')
    .option('--max-document-size <bytes>', 'largest document accepted (default 64 GiB)')
    .option('--rate-limit <n>', 'requests per client per minute (0: no limit; default 600000)')
    .option('--cors-origin <origin...>', 'let pages on these origins call the API (e.g. http://localhost:5173; * for any)')
    .option('--watch <dir...>', 'keep these folders in the store as kura watch does, each under its name (default: $KURA_WATCH, :-separated)')
    .option('--allowed-host <name...>', 'names this server is reached by, besides localhost, IP addresses and --host (* for any): checked on /mcp, and on every route with --no-auth')
    .option('--semantic <when>', 'semantic and hybrid search with the local model (or KURA_EMBED_URL\'s endpoint): on (required), auto (when it loads) or off (default: $KURA_SEMANTIC, else auto)')
    .addHelpText('after', '\nWithout tokens or --no-auth, an admin token is generated for the run and printed.\nAI assistants reach the store over MCP at http://HOST:PORT/mcp (Streamable HTTP) with a bearer token: a read token sees the read-only tools alone.')
    .action(async (opts: ServeOptions, cmd: Command) => {
      // Loaded here so that the other verbs never load fastify.
      const { ConfigError, configFromEnv, serve } = await import('@kura/server');
      let input: ReturnType<typeof configFromEnv>;
      try {
        input = configFromEnv();
      } catch (e) {
        throw usage(e instanceof Error ? e.message : String(e));
      }
      input.store = storeDir(cmd);
      if (opts.host !== undefined) input.host = opts.host;
      if (opts.port !== undefined) input.port = wholeNumber(opts.port, '--port');
      if (!opts.auth) input.noAuth = true;
      if (opts.logLevel !== undefined) input.logLevel = opts.logLevel as never;
      if (opts.logFormat !== undefined) input.logFormat = opts.logFormat as never; // checked by serve(): a usage error
      if (opts.maxDocumentSize !== undefined) input.maxDocumentSize = wholeNumber(opts.maxDocumentSize, '--max-document-size');
      if (opts.rateLimit !== undefined) input.rateLimit = wholeNumber(opts.rateLimit, '--rate-limit');
      if (opts.corsOrigin !== undefined) input.corsOrigins = opts.corsOrigin;
      if (opts.allowedHost !== undefined) input.allowedHosts = opts.allowedHost;
      if (opts.watch !== undefined) input.watch = opts.watch;
      if (opts.semantic !== undefined) input.semantic = opts.semantic as never; // checked by serve(): a usage error
      try {
        // An encrypted store's password (password.ts), asked for only when the store is one.
        // With a password configured the store must be an encrypted one (password.ts).
        await serve(input, { password: () => storePassword(cmd), ...(passwordConfigured(cmd) ? { requireEncryption: true } : {}) });
      } catch (e) {
        if (e instanceof ConfigError) throw usage(`invalid setting ${e.message}`);
        throw e;
      }
      await new Promise<never>(() => undefined); // serve() exits the process on SIGTERM/SIGINT
    });
}
