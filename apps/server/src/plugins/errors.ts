/**
 * One error handler for the whole API: store errors keep their codes, fastify's own errors
 * (validation, body parsing, sizes) get catalog codes, anything else is INTERNAL with no detail.
 */
import { KuraError, storageError } from '@kura/store';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { HttpError, STATUS_OF, detailsOf, forScopes, type ErrorBody, type ServerErrorCode } from '../errors.js';

const CODE_OF_STATUS: Record<number, string> = {
  400: 'INVALID_INPUT',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  416: 'RANGE_NOT_SATISFIABLE',
  429: 'RATE_LIMITED',
  503: 'UNAVAILABLE',
};

interface Mapped {
  status: number;
  code: string;
  message: string;
  details: Record<string, unknown>;
  headers: Record<string, string>;
}

function validationMessage(err: FastifyError): { message: string; field?: string } {
  if (hasZodFastifySchemaValidationErrors(err)) {
    const v = err.validation[0]!;
    const where = err.validationContext ?? 'request';
    const path = (v.instancePath || '').replace(/^\//, '').replace(/\//g, '.');
    const field = path ? `${where}.${path}` : where;
    return { message: `${field}: ${v.message}`, field };
  }
  return { message: err.message };
}

export function mapError(raw: unknown): Mapped {
  // Disk full and I/O errors from any file the server writes (the store's, staged uploads)
  // keep a code a client can act on: 507 STORAGE_FULL says "retry later / elsewhere".
  const err = storageError(raw);
  if (err instanceof HttpError) return { status: err.status, code: err.code, message: err.message, details: err.details, headers: err.headers };
  // Store errors in the catalog keep their code; INTERNAL and codes the catalog lacks are bugs,
  // whose text stays in the log.
  if (err instanceof KuraError && err.code === 'STORAGE_UNAVAILABLE') {
    return { status: 503, code: err.code, message: "the object store under this server refused the request (its credentials, bucket or policy): the server's log says why; an operator must act", details: {}, headers: {} };
  }
  if (err instanceof KuraError && err.code !== 'INTERNAL' && STATUS_OF[err.code] !== undefined) {
    return { status: STATUS_OF[err.code]!, code: err.code, message: err.message, details: detailsOf(err), headers: {} };
  }
  const fe = err as FastifyError;
  if (fe && fe.validation) {
    const v = validationMessage(fe);
    return { status: 400, code: 'INVALID_INPUT', message: v.message, details: v.field ? { field: v.field } : {}, headers: {} };
  }
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    const code = CODE_OF_STATUS[status] ?? 'INVALID_INPUT';
    // fastify's body errors say what is wrong without internals ("Unexpected token } in JSON…");
    // those about the body name it, as ERRORS.md's INVALID_INPUT promises a field.
    const body = typeof fe?.code === 'string' && fe.code.startsWith('FST_ERR_CTP_');
    // The JSON parser refuses `__proto__` and `constructor.prototype` keys (prototype pollution)
    // with the same error as broken JSON: said, as valid JSON was told it was not.
    const message = fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? 'the body is not valid JSON, or it has a "__proto__" or "constructor": {"prototype"} key, which is not accepted' : fe.message || code;
    return { status, code, message, details: body && code === 'INVALID_INPUT' ? { field: 'body' } : {}, headers: {} };
  }
  return { status: 500, code: 'INTERNAL', message: 'internal error', details: {}, headers: {} };
}

/**
 * A client that went away mid-body: Node fails the body's stream with "aborted" (ECONNRESET)
 * once the connection closed. Not a server failure, and nobody is left to answer.
 */
function clientGone(request: FastifyRequest, err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return request.raw.destroyed && !request.raw.complete && (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE');
}

export function sendError(request: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  // Without this, every upload cut mid-body was mapped to a 500 INTERNAL and logged at error
  // level as "request failed", as if it were a bug (apps/server/test/hostile.test.ts).
  if (clientGone(request, err)) {
    request.log.info({ code: (err as { code: string }).code }, 'client went away mid-request');
    reply.raw.destroy();
    return reply;
  }
  const m = mapError(forScopes(err, request.access?.scopes));
  // A query parameter given twice where it is taken once: said so (it was "expected string,
  // received array", or "expected number, received NaN" for `limit=2&limit=3`: a trial).
  const field = typeof m.details.field === 'string' && m.details.field.startsWith('querystring.') ? m.details.field.slice('querystring.'.length) : undefined;
  const given = field !== undefined ? (request.query as Record<string, unknown> | undefined)?.[field] : undefined;
  if (m.code === 'INVALID_INPUT' && Array.isArray(given)) m.message = `the query's ${JSON.stringify(field)} is given ${given.length} times: this request takes it once`;
  // A JSON body over its route's limit says the limit, as a document's or chunk's 413 does.
  if (m.code === 'PAYLOAD_TOO_LARGE' && m.details.limit === undefined && (err as FastifyError)?.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    const limit = request.routeOptions.bodyLimit;
    if (typeof limit === 'number') Object.assign(m, { message: `the body is larger than this request takes (${limit} bytes)`, details: { ...m.details, limit } });
  }
  if (m.status >= 500) request.log.error({ err }, 'request failed');
  else request.log.info({ code: m.code, message: m.message }, 'request refused');
  const body: ErrorBody = { error: { code: m.code, message: m.message, requestId: request.id, ...m.details } };
  // A response whose body already started cannot change status: cut it, so the client sees an
  // incomplete transfer rather than a short document that looks whole.
  if (reply.sent || reply.raw.headersSent) {
    reply.raw.destroy();
    return reply;
  }
  // Headers a route set for the success it was preparing (a document's ETag, its year-long
  // `immutable`, a Content-Range) do not describe an error: a damaged document's 500 was
  // cacheable for a year. The error's own headers (416's Content-Range) are set after.
  for (const name of SUCCESS_HEADERS) reply.removeHeader(name);
  return reply.code(m.status).header('x-request-id', request.id).headers(m.headers).type('application/json; charset=utf-8').send(body);
}

/** Headers of a successful read (http/send.ts, the path and snapshot routes), never of an error. */
const SUCCESS_HEADERS = ['etag', 'cache-control', 'content-range', 'accept-ranges', 'content-location', 'content-length', 'content-security-policy', 'x-kura-version', 'last-modified'];

/**
 * Node's answer to a request it cannot parse or that never arrives (fastify's
 * clientErrorHandler), in the API's error shape with a request id: it was fastify's own body
 * (`{"error":"Bad Request","message":"Client Error","statusCode":400}`) with neither.
 */
export function clientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy(err);
    return;
  }
  const [code, message]: [ServerErrorCode, string] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? ['HEADERS_TOO_LARGE', 'the request line and headers are larger than 64 KiB']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['REQUEST_TIMEOUT', 'the request did not arrive in time']
        : err.code === 'HPE_INVALID_URL'
          ? // (Raw UTF-8 in a query was told "not HTTP/1.1": a trial's `curl '…?q=été'`.)
            ['INVALID_INPUT', "the request's URL holds a character a URL cannot: percent-encode characters outside ASCII and spaces (é is %C3%A9, a space %20), as curl --data-urlencode or encodeURIComponent do"]
          : ['INVALID_INPUT', 'the request is not HTTP/1.1 the server can read'];
  const status = STATUS_OF[code]!;
  const requestId = randomUUID();
  const body = JSON.stringify({ error: { code, message, requestId } });
  const answer = () =>
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`);
  // Bytes past a request's body that are no request (a Content-Length that counted characters,
  // not bytes) arrive while that request is still answered: its response goes first. Answered
  // at once, the 400 ended the connection before it — a put the store had made was never
  // acknowledged (a trial). (`_httpMessage`: the response Node is writing on this socket, as
  // its own clientError handling reads it.)
  // (Only once that request's body is whole: an error while it still arrives — the client gone
  // mid-body — is about it, and ends the connection at once, as before: the handler then sees
  // its body cut and keeps what arrived, a resumable upload's bytes among them.)
  const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (pending && !pending.writableFinished && pending.req?.complete) {
    pending.once('finish', () => (socket.writable ? answer() : socket.destroy()));
    pending.once('close', () => !pending.writableFinished && socket.destroy());
    return;
  }
  answer();
}

/** A route's URL pattern as a test of concrete paths: `:param` one segment, `*` the rest, `::` a colon. */
function patternOf(url: string): RegExp {
  let re = '';
  for (let i = 0; i < url.length; i++) {
    const c = url[i]!;
    if (c === ':' && url[i + 1] === ':') {
      re += ':';
      i++;
    } else if (c === ':') {
      while (i + 1 < url.length && /[A-Za-z0-9_]/.test(url[i + 1]!)) i++;
      re += '[^/]+';
    } else if (c === '*') re += '.*';
    else re += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

export default fp(
  async (app: FastifyInstance) => {
    // Every route's methods by pattern: a path that has routes, asked with another method, is
    // 405 with Allow (ERRORS.md), not "no route".
    const routes: { pattern: RegExp; method: string }[] = [];
    app.addHook('onRoute', (route) => {
      // The API's routes only: the demo's files are served by a catch-all (`/*`) every path matches.
      if (!route.url.startsWith('/v1/') && route.url !== '/mcp') return;
      for (const method of [route.method].flat()) routes.push({ pattern: patternOf(route.url), method: String(method) });
    });
    app.setErrorHandler((err, request, reply) => sendError(request, reply, err));
    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?')[0]!;
      const allowed = [...new Set(routes.filter((r) => r.method !== request.method && r.pattern.test(path)).map((r) => r.method))].sort();
      if (allowed.length) {
        return sendError(request, reply, new HttpError('METHOD_NOT_ALLOWED', `${path} does not take ${request.method} (it takes ${allowed.join(', ')})`, {}, { allow: allowed.join(', ') }));
      }
      return sendError(request, reply, new HttpError('NOT_FOUND', `no route ${request.method} ${path}`));
    });
  },
  { name: 'kura-errors' },
);
