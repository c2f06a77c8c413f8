/**
 * Server configuration: flags and `KURA_*` environment variables, validated with zod into one
 * object. Anything wrong is a ConfigError naming the setting, before the server starts.
 */
import { basename, delimiter, resolve } from 'node:path';
import { z } from 'zod';
import { SCOPES, isObjectLocation, isPathPrefix, type Scope } from '@kura/store';

// The scopes are the store's words (tokens kept in the store carry them too): decision 0060.
export { SCOPES, type Scope };

export const Token = z.object({
  /** At least 16 characters: a shorter bearer token is guessable. */
  token: z.string().min(16, 'tokens must be at least 16 characters').max(512).regex(/^[\x21-\x7e]+$/, 'tokens are printable ASCII without spaces'),
  scopes: z.array(z.enum(SCOPES)).min(1),
  /** Shown in logs instead of the token. */
  name: z.string().max(64).optional(),
  /** The path prefixes the token reaches (decision 0060); absent: every path. */
  prefixes: z.array(z.string().min(1).max(4096).refine(isPathPrefix, 'a prefix begins a path: relative, without empty, "." or ".." segments')).min(1).max(64).optional(),
});
export type Token = z.infer<typeof Token>;

const size = z.number().int().positive();

export const ServerConfig = z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8787),
    /** The embedded store's directory; created when absent. */
    store: z.string().min(1).default('.kura'),
    tokens: z.array(Token).default([]),
    /** Serve without authentication (local use); the server says so in its log. */
    noAuth: z.boolean().default(false),
    maxDocumentSize: size.default(64 * 2 ** 30),
    /** JSON bodies (all but the manifest commit, which may name up to 1,000,000 chunks). */
    maxJsonBody: size.default(1 << 20),
    /** Requests per client (token, or address without one) per `rateWindowMs`; 0 turns the limit off. */
    rateLimit: z.number().int().min(0).default(600_000),
    rateWindowMs: size.default(60_000),
    /** Memory for the bytes of recently read small documents (checked before caching); 0: none. */
    cacheBytes: z.number().int().min(0).default(64 << 20),
    /**
     * GC's margin (FORMAT.md §9, decision 0041): while other writers are alive — on object
     * storage, always — a chunk goes only once unreferenced this long, a dropped pack's object
     * this long after its drop. Default (absent): one hour.
     */
    gcMarginMs: z.number().int().min(0).max(30 * 24 * 3600 * 1000).optional(),
    logRetentionMs: z.number().int().min(60 * 60 * 1000).max(365 * 24 * 3600 * 1000).optional(),
    /** Resumable uploads untouched this long are deleted. */
    uploadTtlMs: size.default(24 * 60 * 60 * 1000),
    /** Where resumable uploads are staged (default `<store>/uploads`); a store on object storage stages them in its bucket (decision 0042). */
    uploadDir: z.string().min(1).optional(),
    /** A connection with no bytes moving for this long is closed (a stalled upload frees its lock). */
    idleTimeoutMs: z.number().int().min(1000).default(60_000),
    /** How long SIGTERM waits for requests in flight before cutting them off. */
    shutdownTimeoutMs: z.number().int().min(0).default(10_000),
    /**
     * Semantic and hybrid search with the local model (decision 0036): `on` loads it (the
     * server does not start without it), `auto` when installed, `off` (default, for now) keyword only.
     */
    semantic: z.enum(['on', 'auto', 'off']).default('auto'),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /**
     * `pretty`: one coloured line per request, for people (logging.ts); `json`: pino's JSON
     * lines, for machines; `auto` (default): pretty when stdout is a terminal.
     */
    logFormat: z.enum(['auto', 'pretty', 'json']).default('auto'),
    /** Origins whose pages may call the API from a browser (CORS); `*` for any. None by default. */
    corsOrigins: z.array(z.union([z.literal('*'), z.url().transform((u) => new URL(u).origin)])).default([]),
    /**
     * Host names (without port) clients may reach `/mcp` by, besides the loopback names and
     * `host` itself: DNS-rebinding protection (decision 0057). `*` for any.
     */
    allowedHosts: z.array(z.string().min(1).max(253).transform((h) => h.toLowerCase())).default([]),
    /** How often the retention policies kept in the store are applied, then GC run (decision 0058); 0: never. */
    retentionIntervalMs: z.number().int().min(0).default(60 * 60 * 1000),
    /** Folders kept in the store as `kura watch` keeps them, each under its own name (decision 0059). */
    watch: z.array(z.string().min(1)).default([]),
    /** The built browser demo, served at `/` when the directory exists. */
    webRoot: z.string().min(1).optional(),
  })
  .strict();
export type ServerConfig = z.output<typeof ServerConfig>;
export type ServerConfigInput = z.input<typeof ServerConfig>;

export class ConfigError extends Error {
  readonly code = 'INVALID_CONFIG';
  constructor(
    message: string,
    readonly setting: string,
  ) {
    super(message);
  }
}

export function parseConfig(input: ServerConfigInput): ServerConfig {
  const r = ServerConfig.safeParse(input);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const setting = issue.path.join('.') || 'config';
    throw new ConfigError(`${setting}: ${issue.message}`, setting);
  }
  const c = r.data;
  if (!isObjectLocation(c.store)) c.store = resolve(c.store);
  c.watch = c.watch.map((d) => resolve(d));
  const names = c.watch.map((d) => basename(d));
  if (new Set(names).size < names.length) throw new ConfigError('watch: two folders have the same name (each goes under its name in the store): watch one of them with kura watch --prefix', 'watch');
  if (c.uploadDir) c.uploadDir = resolve(c.uploadDir);
  return c;
}

/**
 * `KURA_TOKENS`: entries separated by `;` or whitespace, each `[name=]token:scope[,scope]`,
 * limited to path prefixes by `:prefix[,prefix]` after the scopes, e.g.
 * `ci=0123456789abcdef0123:read,write:builds/; ops=…:admin`.
 */
export function parseTokens(spec: string): Token[] {
  const tokens = spec
    .split(/[;\s]+/)
    .filter(Boolean)
    .map((entry, i) => {
      const m = /^(?:([\w.-]+)=)?([^:]+):([a-z,]+)(?::(.+))?$/.exec(entry);
      if (!m) throw new ConfigError(`KURA_TOKENS entry ${i + 1} is not [name=]token:scope[,scope][:prefix[,prefix]]`, 'tokens');
      const t = Token.safeParse({ token: m[2], scopes: m[3]!.split(','), ...(m[1] ? { name: m[1] } : {}), ...(m[4] ? { prefixes: m[4].split(',') } : {}) });
      if (!t.success) throw new ConfigError(`KURA_TOKENS entry ${i + 1}: ${t.error.issues[0]!.message}`, 'tokens');
      return t.data;
    });
  // One secret, two entries: the first would win silently (a read token where admin was meant,
  // or the reverse); one name, two entries: logs and the token list could not tell them apart.
  for (const [i, t] of tokens.entries()) {
    const j = tokens.findIndex((u) => u.token === t.token);
    if (j < i) throw new ConfigError(`KURA_TOKENS entries ${j + 1} and ${i + 1} have the same token: give each its own`, 'tokens');
    const k = t.name === undefined ? -1 : tokens.findIndex((u) => u.name === t.name);
    if (k >= 0 && k < i) throw new ConfigError(`KURA_TOKENS entries ${k + 1} and ${i + 1} have the same name ${t.name}: give each its own`, 'tokens');
  }
  return tokens;
}

const int = (name: string, v: string): number => {
  if (!/^[0-9]+$/.test(v)) throw new ConfigError(`${name} must be a whole number, not ${JSON.stringify(v)}`, name);
  return Number(v);
};

/** The settings `KURA_*` variables give (flags given to `kura serve` override them). */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ServerConfigInput {
  const c: ServerConfigInput = {};
  if (env.KURA_HOST) c.host = env.KURA_HOST;
  if (env.KURA_PORT) c.port = int('KURA_PORT', env.KURA_PORT);
  if (env.KURA_STORE) c.store = env.KURA_STORE;
  if (env.KURA_TOKENS) c.tokens = parseTokens(env.KURA_TOKENS);
  if (env.KURA_NO_AUTH) c.noAuth = env.KURA_NO_AUTH === '1' || env.KURA_NO_AUTH === 'true';
  if (env.KURA_MAX_DOCUMENT_SIZE) c.maxDocumentSize = int('KURA_MAX_DOCUMENT_SIZE', env.KURA_MAX_DOCUMENT_SIZE);
  if (env.KURA_RATE_LIMIT) c.rateLimit = int('KURA_RATE_LIMIT', env.KURA_RATE_LIMIT);
  if (env.KURA_CACHE_BYTES) c.cacheBytes = int('KURA_CACHE_BYTES', env.KURA_CACHE_BYTES);
  if (env.KURA_GC_MARGIN_MS) c.gcMarginMs = int('KURA_GC_MARGIN_MS', env.KURA_GC_MARGIN_MS);
  if (env.KURA_LOG_RETENTION_MS) c.logRetentionMs = int('KURA_LOG_RETENTION_MS', env.KURA_LOG_RETENTION_MS);
  if (env.KURA_UPLOAD_TTL_MS) c.uploadTtlMs = int('KURA_UPLOAD_TTL_MS', env.KURA_UPLOAD_TTL_MS);
  if (env.KURA_IDLE_TIMEOUT_MS) c.idleTimeoutMs = int('KURA_IDLE_TIMEOUT_MS', env.KURA_IDLE_TIMEOUT_MS);
  if (env.KURA_SHUTDOWN_TIMEOUT_MS) c.shutdownTimeoutMs = int('KURA_SHUTDOWN_TIMEOUT_MS', env.KURA_SHUTDOWN_TIMEOUT_MS);
  if (env.KURA_SEMANTIC) c.semantic = env.KURA_SEMANTIC as ServerConfigInput['semantic'];
  if (env.KURA_LOG_LEVEL) c.logLevel = env.KURA_LOG_LEVEL as ServerConfigInput['logLevel'];
  if (env.KURA_LOG_FORMAT) c.logFormat = env.KURA_LOG_FORMAT as ServerConfigInput['logFormat'];
  if (env.KURA_WEB_ROOT) c.webRoot = env.KURA_WEB_ROOT;
  if (env.KURA_RETENTION_INTERVAL_MS) c.retentionIntervalMs = int('KURA_RETENTION_INTERVAL_MS', env.KURA_RETENTION_INTERVAL_MS);
  if (env.KURA_WATCH) c.watch = env.KURA_WATCH.split(delimiter).filter(Boolean);
  if (env.KURA_ALLOWED_HOSTS) c.allowedHosts = env.KURA_ALLOWED_HOSTS.split(',').map((h) => h.trim()).filter(Boolean);
  if (env.KURA_CORS_ORIGINS) c.corsOrigins = env.KURA_CORS_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean);
  return c;
}
