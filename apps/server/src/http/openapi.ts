/**
 * What the OpenAPI document (`/docs/json`) cannot learn from the routes' zod schemas: routes
 * whose bodies are raw bytes (parsed by no schema: http/body.ts), the document reads' success
 * answers (sent by http/send.ts, not serialised), the `x-kura-*` headers, and a name for the
 * URL wildcard. A client generated from the document could not send a document, nor name the
 * `{*}` parameter, before these.
 */

type Json = Record<string, unknown>;
type Operation = { parameters?: Json[]; responses?: Record<string, unknown>; requestBody?: unknown };

const BYTES = { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } };
const RAW_BODY = { required: true, description: 'the raw bytes (streamed)', content: BYTES };

const header = (name: string, description: string, required = false) => ({ in: 'header', name, required, description, schema: { type: 'string' } });

/** Headers of a put with a raw body, besides its query (http/meta.ts). */
const PUT_HEADERS = [
  header('x-kura-path', 'the path (percent-encoded UTF-8); or ?path='),
  header('x-kura-tags', 'tags, comma-separated (each percent-encoded); or ?tag='),
  header('x-kura-meta', 'key/value metadata as a JSON object of strings; or ?meta='),
  header('x-kura-sha256', 'the digest the bytes must have (sha256:<hex> or hex): else 400 DIGEST_MISMATCH, nothing stored; or ?digest='),
];

/** Headers of a document read (http/send.ts). */
const READ_HEADERS = [
  header('range', 'one range of bytes: bytes=a-b, a-, -n'),
  header('if-none-match', 'an ETag (the digest, quoted): 304 when it matches'),
  header('if-range', 'an ETag: the range only while it still matches'),
];

const READ_RESPONSES = {
  '200': { description: 'the bytes (ETag = the digest; Accept-Ranges: bytes)', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } },
  '206': { description: 'the range asked for (Content-Range)', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } },
  '304': { description: 'If-None-Match matched: not modified' },
};

/** Routes with a raw body: the body, and headers where they take any. */
const RAW: Record<string, { method: string; headers?: Json[]; extra?: Record<string, unknown> }[]> = {
  '/v1/documents': [{ method: 'post', headers: PUT_HEADERS, extra: { '415': { description: 'a Content-Encoding other than identity' } } }],
  '/v1/uploads/{id}': [
    { method: 'patch', headers: [header('content-range', 'where the bytes go: bytes a-b/* (or bytes a-b/total)')] },
    { method: 'put', headers: [...PUT_HEADERS, header('content-range', 'the last bytes, when the body has any')] },
  ],
  '/v1/chunks/{key}': [{ method: 'put' }],
};

/** Routes that answer a document's bytes. */
const READS = ['/v1/documents/{digest}', '/v1/paths/{path}', '/v1/snapshots/{id}/files/{path}'];

/** The OpenAPI document with what the schemas could not say (@fastify/swagger's transformObject). */
export function completeOpenApi<T extends { paths?: Record<string, Record<string, Operation>> }>(doc: T): T {
  const paths: Record<string, Record<string, Operation>> = {};
  for (const [path, methods] of Object.entries(doc.paths ?? {})) {
    // `{*}` is fastify's wildcard: named `path`, which code generators accept.
    const named = path.replace('{*}', '{path}');
    for (const op of Object.values(methods)) {
      for (const p of op.parameters ?? []) if (p.in === 'path' && p.name === '*') Object.assign(p, { name: 'path', description: 'the path, / included (percent-encoded once)' });
    }
    paths[named] = methods;
  }
  for (const [path, ops] of Object.entries(RAW)) {
    for (const { method, headers, extra } of ops) {
      const op = paths[path]?.[method];
      if (!op) continue;
      op.requestBody = RAW_BODY;
      if (headers) op.parameters = [...(op.parameters ?? []), ...headers];
      if (extra) op.responses = { ...op.responses, ...extra };
    }
  }
  for (const path of READS) {
    const op = paths[path]?.get;
    if (!op) continue;
    op.parameters = [...(op.parameters ?? []), ...READ_HEADERS];
    op.responses = { ...READ_RESPONSES, ...op.responses };
  }
  const grep = paths['/v1/grep']?.get;
  if (grep) grep.responses = { '200': { description: 'NDJSON events, as found: begin, match, context, end, error, summary (docs/HTTP.md)', content: { 'application/x-ndjson': { schema: { type: 'string' } } } }, ...grep.responses };
  return { ...doc, paths };
}
