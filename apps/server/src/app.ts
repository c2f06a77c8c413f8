/**
 * build(): the Kura HTTP API as a fastify instance, not yet listening (main.ts listens).
 * Plugins in order: errors, rate limit, auth, metrics, store, OpenAPI; then the routes.
 */
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import fastifyStatic from '@fastify/static';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { completeOpenApi } from './http/openapi.js';
import { responseSerializerCompiler } from './http/serialize.js';
import { MINILM, MODEL_PATH, defaultCacheDir, defaultModelDir, isObjectLocation, openObjectLocation, type PasswordSource, type Store } from '@kura/store';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { z } from 'zod';
import { jsonSchemaTransform, validatorCompiler } from 'fastify-type-provider-zod';
import { parseConfig, type ServerConfig, type ServerConfigInput } from './config.js';
import { HttpError } from './errors.js';
import { isPretty, logRequestsInOneLine, prettyLogger, redactingLogger } from './logging.js';
import auth, { verifier } from './plugins/auth.js';
import { rebindingPolicy, refusal } from './access/rebinding.js';
import errors, { clientError, sendError } from './plugins/errors.js';
import metrics from './plugins/metrics.js';
import storePlugin from './plugins/store.js';
import watchPlugin from './plugins/watch.js';
import retentionPlugin from './plugins/retention.js';
import admin from './routes/admin.js';
import chunks from './routes/chunks.js';
import documents from './routes/documents.js';
import paths from './routes/paths.js';
import snapshots from './routes/snapshots.js';
import search from './routes/search.js';
import grep from './routes/grep.js';
import mcp from './routes/mcp.js';
import retention from './routes/retention.js';
import uploads from './routes/uploads.js';
import { FileStaging } from './uploads/file-staging.js';
import { ObjectStaging } from './uploads/object-staging.js';
import type { UploadStaging } from './uploads/staging.js';
import { BytesCache } from './http/cache.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Verified bytes of small, recently read documents. */
    bytesCache: BytesCache;
  }
}

/** UTF-8 that refuses what is not (a JSON body's bytes). */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Documents up to this size are cached after a read. */
export const CACHE_MAX_ENTRY = 256 * 1024;

export interface BuildOptions {
  config?: ServerConfigInput | ServerConfig;
  /** Serve this open store instead of opening `config.store` (the caller closes it). */
  store?: Store;
  /** A pino logger configuration (default: from `config.logLevel`); tokens are redacted either way. */
  logger?: unknown;
  /** An encrypted store's password (FORMAT.md §17), asked for only when `config.store` is one. */
  password?: PasswordSource;
  /** `config.store` must be encrypted: a plain store there is refused, none is made (KeyOptions.requireEncryption). */
  requireEncryption?: boolean;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;
const here = dirname(fileURLToPath(import.meta.url));
/** The demo's build output beside this package in the repository (apps/web/dist). */
export const DEFAULT_WEB_ROOT = resolve(here, '../../web/dist');

export const API_VERSION = '1.0.0';
/** Bytes of a request line and headers at most (HEADERS_TOO_LARGE past them). */
export const HEADERS_MAX = 64 * 1024;

export async function build(options: BuildOptions = {}): Promise<FastifyInstance> {
  const config = parseConfig((options.config ?? {}) as ServerConfigInput);
  const pretty = options.logger === undefined && isPretty(config.logFormat);
  const base = (options.logger as Record<string, unknown> | undefined) ?? { level: config.logLevel };
  const app = Fastify({
    // No token reaches the log, wherever a client put it (logging.ts); people on a terminal
    // get lines for people, one per request (config.logFormat).
    logger: redactingLogger(config.tokens, pretty ? prettyLogger(base) : base),
    ...(pretty ? { logController: new LogController({ disableRequestLogging: true }) } : {}),
    // A client's own request id is kept when it is a sane token; otherwise one is made.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength: 8192 },
    // A path of 4,096 characters of a script UTF-8 writes in 3 bytes is ~36 KiB percent-encoded:
    // under Node's 16 KiB such a path, stored, could not be read by path again (431: a trial).
    // A missing Host is refused here, in the API's shape (Node's own 400 had no body, no id).
    // A request line and headers that stop arriving are answered 408 (HTTP.md) before the idle
    // timeout closes the connection without a word (both were 60 s: the silent close came first,
    // a trial). Node checks its timeouts every connectionsCheckingInterval.
    http: { maxHeaderSize: HEADERS_MAX, requireHostHeader: false, headersTimeout: Math.floor(config.idleTimeoutMs / 2), connectionsCheckingInterval: Math.min(5_000, Math.floor(config.idleTimeoutMs / 4)) },
    // Opening the store is a plugin (plugins/store.ts) and takes what it takes: a new server on
    // a bucket replays the log after the newest checkpoint, through retries when the storage
    // falters. fastify's 10 s default stopped such a server with "Plugin did not start in
    // time" instead of the open's own outcome (the S3 client's timeouts bound a dead endpoint).
    pluginTimeout: 0,
    bodyLimit: config.maxJsonBody,
    // While draining, fastify would answer requests that still reach it (on connections kept
    // open, pipelined) with a 503 in its own body shape; the hook below answers UNAVAILABLE
    // in the API's error shape instead (fastify still adds Connection: close).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // A connection with no bytes moving for this long is closed: a client that stalls mid-upload
    // (a network drop without FIN or RST) would otherwise hold its upload busy forever.
    connectionTimeout: config.idleTimeoutMs,
    // ...and so is a kept-alive one between requests (Node's default kept it 72 s whatever the
    // idle timeout said: a trial).
    keepAliveTimeout: config.idleTimeoutMs,
    // Errors fastify raises before routing (a malformed URL) get the API's error shape too.
    frameworkErrors: (err, request, reply) => void sendError(request, reply, err),
    // And those Node raises before fastify sees a request (unparsable, too large, too slow).
    clientErrorHandler: clientError,
  });
  // JSON routes take JSON alone: fastify's text/plain parser handed them a string, refused as
  // "expected object" (400) where ERRORS.md says another Content-Type is 415 — and a text/plain
  // POST is one a page elsewhere may send without asking. (Routes that take any body raw set
  // their own parsers: http/body.ts.)
  app.removeContentTypeParser('text/plain');
  // `Expect: 100-continue` is answered once the request has passed the checks made before its
  // body (the token and its scope, the route, the body's type): Node answered it on arrival, so
  // a refused client sent its body for nothing (curl sent 2.6 MB of a 10 MB put before its 401:
  // a trial). Another expectation is 417 in the API's error shape (Node's had no body, no id).
  app.server.on('checkContinue', (req, res) => app.server.emit('request', req, res));
  app.server.on('checkExpectation', (req, res) => {
    const requestId = randomUUID();
    const body = JSON.stringify({ error: { code: 'EXPECTATION_FAILED', message: `Expect: ${String(req.headers.expect).slice(0, 64)} is not one this server meets (only 100-continue)`, requestId } });
    res.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'x-request-id': requestId, connection: 'close' }).end(body);
  });
  app.addHook('preParsing', async (request, reply, payload) => {
    const expect = request.headers.expect;
    if (typeof expect === 'string' && expect.toLowerCase() === '100-continue' && !reply.raw.headersSent) {
      // (A body of a type the route does not take is refused before it is read: 415, no 100.)
      const type = request.headers['content-type'];
      if (type === undefined || request.server.hasContentTypeParser(type.split(';')[0]!.trim().toLowerCase()) || request.server.hasContentTypeParser('*')) reply.raw.writeContinue();
    }
    return payload;
  });
  // JSON is read as UTF-8 or refused: fastify's parser made invalid bytes U+FFFD, so two paths
  // differing in a Latin-1 byte (`caf\xe9`, `caf\xe8`) became one path with two versions, and
  // a tag `Z\xfcrich` was stored as `Z\ufffdrich` (a trial). Query strings and headers were
  // refused so already.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = STRICT_UTF8.decode(body as Buffer);
    } catch {
      done(new HttpError('INVALID_INPUT', 'the body is not UTF-8: send JSON as UTF-8 (RFC 8259 §8.1), characters outside ASCII as their UTF-8 bytes or as \\u escapes', { field: 'body' }), undefined);
      return;
    }
    parseJson(request, text, done);
  });
  if (pretty) logRequestsInOneLine(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(responseSerializerCompiler);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (closing) throw new HttpError('UNAVAILABLE', 'the server is shutting down; retry shortly', {}, { 'retry-after': '1' });
    if (request.headers.host === undefined && request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1) {
      throw new HttpError('INVALID_INPUT', 'an HTTP/1.1 request names the server in a Host header (RFC 9112 §3.2)', { field: 'host' });
    }
    // A request without a body may still say its type (clients that set Content-Type:
    // application/json on every call): fastify refused such a DELETE, "Body cannot be empty".
    if (request.headers['content-type'] !== undefined && request.headers['transfer-encoding'] === undefined && (request.headers['content-length'] ?? '0') === '0' && ['GET', 'HEAD', 'DELETE'].includes(request.method)) {
      delete request.headers['content-type'];
    }
  });

  await app.register(errors);
  // A query whose escapes are not UTF-8 percent-encoding (`%ZZ`, `%FF%FE`): its parser keeps
  // such a value as typed, so `?path=%FF%FE.txt` stored a path named by its escapes.
  app.addHook('onRequest', async (request) => {
    const at = request.url.indexOf('?');
    if (at < 0 || !request.url.includes('%', at)) return;
    for (const pair of request.url.slice(at + 1).split('&')) {
      const name = pair.split('=', 1)[0]!;
      try {
        decodeURIComponent(pair.replace(/\+/g, ' '));
      } catch {
        throw new HttpError('INVALID_INPUT', `the query's ${JSON.stringify(name.slice(0, 64))} is not valid percent-encoding (UTF-8 bytes as %XX; a % itself as %25)`, { field: name.slice(0, 64) });
      }
    }
  });
  // A write with a precondition (If-Match, If-None-Match, If-Unmodified-Since) is refused, not
  // done regardless of it: a client sending one means "only if no one else wrote", which no
  // write here can promise (a put's check and its commit are not one step across writers), and
  // it was done silently (RFC 9110 §13.1: a server that evaluates none must not imply it did;
  // a trial). Versions keep every write: GET /v1/versions shows another writer's.
  app.addHook('onRequest', async (request) => {
    if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return;
    const condition = ['if-match', 'if-none-match', 'if-unmodified-since'].find((h) => request.headers[h] !== undefined);
    if (condition !== undefined) throw new HttpError('INVALID_INPUT', `${condition} is not taken on a write: writes here are not conditional (every write makes a version; GET /v1/versions shows who wrote since)`, { field: condition });
  });
  // A body in a content coding (`Content-Encoding: gzip`) would be stored or parsed as its
  // coded bytes — a gzip file where the client meant its text. Refused, changing nothing
  // (RFC 9110 §8.4.1: 415 for a coding the server does not take).
  app.addHook('onRequest', async (request) => {
    const coding = request.headers['content-encoding'];
    if (coding === undefined || coding.split(',').every((c) => ['', 'identity'].includes(c.trim().toLowerCase()))) return;
    throw new HttpError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${JSON.stringify(coding)} is not taken: send the body as it is (identity)`, { field: 'content-encoding' });
  });
  if (config.noAuth) {
    // Without tokens, nothing else stands between a page the user visits and the store: a
    // form's cross-site POST or DELETE needs no CORS, and a name the page rebinds to
    // 127.0.0.1 reads and writes as if local. Every route takes /mcp's Host and Origin checks.
    // (An Origin must be this server's own, port included: a page another local server serves
    // is as foreign as any. /healthz answers probes whatever name they use: it tells nothing.)
    const policy = rebindingPolicy(config);
    app.addHook('onRequest', async (request) => {
      if (request.url === '/healthz') return;
      const origin = request.headers.origin;
      const why = refusal(policy, request.headers.host, typeof origin === 'string' ? origin : undefined, true);
      if (why) throw new HttpError('FORBIDDEN', why, {});
    });
  }
  if (config.corsOrigins.length) {
    // Browsers on these origins (a Kura page elsewhere pushing to this server) may call the
    // API. Off by default: with --no-auth, any page the user visits could otherwise read the
    // store. Credentials are bearer tokens, never cookies, so none are allowed.
    await app.register(cors, {
      origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      exposedHeaders: ['etag', 'content-range', 'content-location', 'x-kura-version', 'x-request-id', 'retry-after', 'location', 'range', 'www-authenticate', 'x-kura-upload-offset', 'x-kura-upload-expires'],
      maxAge: 600,
    });
  }
  if (config.rateLimit > 0) {
    const principal = verifier(config.tokens);
    // Before auth, so failed logins count too. Per valid token (clients behind one proxy do not
    // share a budget); per address otherwise (a guessed token does not get a fresh budget).
    await app.register(rateLimit, {
      max: config.rateLimit,
      timeWindow: config.rateWindowMs,
      keyGenerator: (request) => {
        const who = principal(request.headers.authorization);
        return who ? `token:${who}` : `ip:${request.ip}`;
      },
      allowList: (request) => request.url === '/healthz',
      errorResponseBuilder: (_request, context) =>
        // (`context.after` is the time left to wait, not the window: "per 59 seconds" was wrong.)
        new HttpError('RATE_LIMITED', `rate limit of ${context.max} requests per ${windowText(config.rateWindowMs)} exceeded; retry in ${Math.ceil(context.ttl / 1000)} s`, {}, {
          'retry-after': String(Math.ceil(context.ttl / 1000)),
        }),
    });
  }
  // Auth after the rate limiter (see plugins/auth.ts) and before every route, /metrics included.
  await app.register(auth, { tokens: config.tokens, noAuth: config.noAuth });
  await app.register(metrics);
  await app.register(storePlugin, {
    dir: config.store,
    store: options.store,
    semantic: config.semantic,
    settings: {
      gcMarginMs: config.gcMarginMs,
      logRetentionMs: config.logRetentionMs,
      ...(options.password ? { password: options.password } : {}),
      ...(options.requireEncryption ? { requireEncryption: true } : {}),
    },
  });
  if (config.watch.length) await app.register(watchPlugin, { dirs: config.watch });
  if (config.retentionIntervalMs > 0) await app.register(retentionPlugin, { intervalMs: config.retentionIntervalMs });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Kura', description: 'Content-addressable, deduplicating document store (docs/HTTP.md)', version: API_VERSION },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: config.noAuth ? [] : [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    // Raw bodies, document reads' answers, headers, the wildcard's name (http/openapi.ts).
    transformObject: (d) => completeOpenApi(('openapiObject' in d ? d.openapiObject : d.swaggerObject) as Parameters<typeof completeOpenApi>[0]) as never,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  app.decorate('bytesCache', new BytesCache(config.cacheBytes, CACHE_MAX_ENTRY));
  // Staged uploads: beside a directory store (this server's own), or in an object store's
  // bucket, where every server of the store reaches them (decision 0042). An encrypted store's
  // are plaintext: in this server's cache, never in the store's directory or bucket (FORMAT.md
  // §17.6; a resumable upload then continues on the server that began it).
  const staging: UploadStaging = app.store.config.encrypted
    ? new FileStaging(config.uploadDir ?? join(defaultCacheDir(isObjectLocation(config.store) ? config.store : resolve(config.store)), 'uploads'), config.uploadTtlMs)
    : isObjectLocation(config.store)
      ? new ObjectStaging(await openObjectLocation(config.store), config.uploadTtlMs)
      : new FileStaging(config.uploadDir ?? join(config.store, 'uploads'), config.uploadTtlMs);
  app.addHook('onClose', async () => staging.close());

  // A route of the API that takes no query parameters refuses any, as the routes that take
  // some refuse the ones they do not know: a misspelt `?readdata=0` or `?limit=5` on a route
  // without one was silently ignored on some routes and a 400 on others.
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/v1/') || route.schema?.querystring) return;
    route.schema = { ...route.schema, querystring: z.object({}).strict() };
  });
  await app.register(documents, { maxDocumentSize: config.maxDocumentSize });
  await app.register(paths);
  await app.register(search);
  await app.register(grep);
  await app.register(chunks, { maxDocumentSize: config.maxDocumentSize });
  await app.register(uploads, { staging, maxDocumentSize: config.maxDocumentSize });
  await app.register(snapshots);
  await app.register(retention);
  await app.register(admin, { maxDocumentSize: config.maxDocumentSize, configuredNames: config.tokens.flatMap((t) => (t.name ? [t.name] : [])) });
  await app.register(mcp, { config });

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  const webRoot = config.webRoot ?? DEFAULT_WEB_ROOT;
  if (existsSync(join(webRoot, 'index.html'))) {
    await app.register(fastifyStatic, { root: webRoot, prefix: '/', index: 'index.html' });
    // The demo's store embeds in the browser, from the same model files (hash-checked there too).
    const modelDir = defaultModelDir();
    if (existsSync(join(modelDir, 'model.onnx'))) {
      const files = new Set(Object.keys(MINILM.files).map((f) => `/${f}`));
      await app.register(fastifyStatic, { root: modelDir, prefix: MODEL_PATH, decorateReply: false, index: false, allowedPath: (path) => files.has(path) });
    }
  } else {
    app.get('/', { schema: { hide: true } }, async (_request, reply) =>
      reply
        .type('text/html; charset=utf-8')
        .send('<!doctype html><title>Kura</title><h1>Kura</h1><p>The HTTP API is under <code>/v1</code>; its reference is at <a href="/docs">/docs</a>.</p>'),
    );
  }
  if (config.noAuth) app.log.warn('authentication is OFF (--no-auth): anyone who can reach this server can read, write and delete');
  return app;
}

/** A rate limit's window in words: "minute", "10 s", "2 minutes". */
function windowText(ms: number): string {
  if (ms % 60_000 === 0) return ms === 60_000 ? 'minute' : `${ms / 60_000} minutes`;
  return ms === 1000 ? 'second' : `${ms / 1000} s`;
}
