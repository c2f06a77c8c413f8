/**
 * Bearer tokens never reach the log. Fastify logs no headers (its request serializer keeps the
 * method, URL, host and address), yet a token can still land on a log line: in the URL when a
 * client puts it in a query string or a path, as the request id (a client may choose its own
 * x-request-id), or echoed by a refusal ("… is not a digest"). So:
 * - each configured token, in every form it takes on a log line (as sent, JSON-escaped once or
 *   twice, percent-encoded), is replaced by [redacted] in each line before it is written;
 * - so is anything of the form of a secret kept in the store (`kura_` and 43 base64url
 *   characters, which no escaping changes): the server knows only their hashes;
 * - the values of query parameters named like credentials (access_token, api_key…) are left out
 *   of the logged URL, whether or not they are tokens this server knows.
 * apps/server/test/auth-scopes.test.ts sends tokens everywhere and scans every line.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import pretty from 'pino-pretty';
import { SECRET_PATTERN } from '@kura/store';
import type { Token } from './config.js';

const REDACTED = '[redacted]';
const CREDENTIAL_PARAM = /^(?:access[_-]?token|token|id[_-]?token|refresh[_-]?token|api[_-]?key|key|secret|client[_-]?secret|password|passwd|auth|authorization|bearer|sig|signature)$/i;

/** A URL with the values of its credential-like query parameters replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name);
      } catch {
        // left as it came
      }
      return CREDENTIAL_PARAM.test(name) ? `${pair.slice(0, eq)}=${REDACTED}` : pair;
    });
  return `${url.slice(0, q + 1)}${params.join('&')}`;
}

/** Fastify's request serializer, with the URL redacted. */
function req(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrl(request.url),
    version: request.headers?.['accept-version'],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/**
 * Every form a token can take in a serialized log line, longest first: as sent, and through up
 * to two of JSON escaping and percent-encoding (a URL's query holding JSON, a message quoting a
 * value that pino escapes again).
 */
function formsOf(token: string): string[] {
  const esc = (s: string) => JSON.stringify(s).slice(1, -1);
  const ways = [esc, encodeURIComponent];
  const once = ways.map((f) => f(token));
  const twice = ways.flatMap((f) => once.map((s) => f(s)));
  return [...new Set([token, ...once, ...twice])].sort((a, b) => b.length - a.length);
}

/** Logger options that keep `tokens` (and credential-like query values) out of every line. */
export function redactingLogger(tokens: Token[], base: Record<string, unknown>): Record<string, unknown> {
  const forms = tokens.flatMap((t) => formsOf(t.token));
  return {
    ...base,
    serializers: { ...(base.serializers as object | undefined), req },
    hooks: {
      ...(base.hooks as object | undefined),
      streamWrite: (line: string) => {
        for (const f of forms) if (line.includes(f)) line = line.split(f).join(REDACTED);
        if (line.includes('kura_')) line = line.replace(SECRET_PATTERN, REDACTED);
        return line;
      },
    },
  };
}

/** Whether log lines are for people: `pretty`, or `auto` with stdout a terminal. */
export function isPretty(format: 'auto' | 'pretty' | 'json', stdoutIsTty = process.stdout.isTTY === true): boolean {
  return format === 'pretty' || (format === 'auto' && stdoutIsTty);
}

/**
 * Pino options that print lines for people (pino-pretty: time, level, message, colours on a
 * terminal) instead of JSON. The stream gets each line after `redactingLogger` has redacted it.
 */
export function prettyLogger(base: Record<string, unknown>, colorize = process.stdout.isTTY === true): Record<string, unknown> {
  return {
    ...base,
    stream: pretty({ colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,reqId,req,res,responseTime', singleLine: true, sync: true }),
  };
}

/**
 * One line per request instead of fastify's two (for `pretty` logs): method, URL (redacted),
 * status, time, and the request id to quote.
 */
export function logRequestsInOneLine(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    const ms = reply.elapsedTime.toFixed(1);
    const line = `${request.method} ${redactUrl(request.url)} ${reply.statusCode} ${ms} ms (${request.id}${request.principal ? `, token ${request.principal}` : ''})`;
    if (reply.statusCode >= 500) request.log.error(line);
    else request.log.info(line);
  });
}
