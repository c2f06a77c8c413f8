/**
 * Document metadata that arrives beside a raw body: query parameters first, `x-kura-*`
 * headers as the alternative (percent-encoded where they carry text), and the request's
 * Content-Type as the media type when nothing more specific is given and it says something
 * about the bytes (else `withDetectedType` detects one).
 */
import { SNIFF_HEAD, detectMediaType, type PutMeta } from '@kura/store';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { HttpError } from '../errors.js';
import { SafePath } from '../schemas.js';
import { expectedDigest } from './digest.js';

export const PutQuery = z
  .object({
    path: SafePath.optional(),
    type: z.string().max(255).optional(),
    tag: z.union([z.string(), z.array(z.string())]).optional(),
    /** Key/value metadata as a JSON object of strings. */
    meta: z.string().max(1 << 20).optional(),
    digest: z.string().optional(),
  })
  .strict();
export type PutQuery = z.infer<typeof PutQuery>;

/** Content types that do not describe a body's bytes. */
const SAYS_NOTHING = /^\s*(application\/octet-stream|application\/x-www-form-urlencoded)\s*(;|$)/i;

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  const value = Array.isArray(v) ? v[0] : v;
  // Headers are ASCII (text in them percent-encoded); raw UTF-8 arrives as Latin-1 characters
  // and is read back as the UTF-8 it was, or refused (it was stored as mojibake: "hÃ©").
  if (value === undefined || !/[^\x00-\x7f]/.test(value)) return value;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(value, 'latin1'));
  } catch {
    // (x-kura-meta is JSON as it is, never percent-decoded: its text goes in as UTF-8 or \u escapes.)
    const how = name === 'x-kura-meta' ? 'send its JSON as UTF-8, or write characters past ASCII as \\u escapes' : 'percent-encode its text';
    throw new HttpError('INVALID_INPUT', `${name} is not ASCII or UTF-8: ${how}`, { field: name });
  }
}

function decode(value: string, field: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw new HttpError('INVALID_INPUT', `${field} is not valid percent-encoding`, { field });
  }
}

function metaObject(json: string, field: string): Record<string, string> {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw new HttpError('INVALID_INPUT', `${field} must be a JSON object of strings`, { field });
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v) || !Object.values(v).every((x) => typeof x === 'string')) {
    throw new HttpError('INVALID_INPUT', `${field} must be a JSON object of strings`, { field });
  }
  return v as Record<string, string>;
}

/**
 * A value the query and a header may both give: the one given, or — given twice — the two must
 * agree (a client that names an expected digest twice, differently, has a bug worth hearing of:
 * one of them used to be dropped without a word, its check with it).
 */
function either<T>(fromQuery: T | undefined, fromHeader: T | undefined, field: string, headerName: string, same: (a: T, b: T) => boolean = (a, b) => a === b): T | undefined {
  if (fromQuery !== undefined && fromHeader !== undefined && !same(fromQuery, fromHeader)) {
    throw new HttpError('INVALID_INPUT', `${field} is given twice and differently: in the query and in ${headerName}`, { field });
  }
  return fromQuery ?? fromHeader;
}

/** A media type without its parameters, lower case: `text/plain; charset=utf-8` is `text/plain`. */
const essence = (t: string) => t.split(';')[0]!.trim().toLowerCase();
/** Tags are a set: the same ones in another order (or repeated) are the same tags (`b, a` was refused beside `tag=a&tag=b`). */
const sameSet = (a: string[], b: string[]) => new Set(a).size === new Set(b).size && a.every((x) => b.includes(x));
const sameJson = (a: Record<string, string>, b: Record<string, string>) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

/** PutMeta (with the expected digest) from the query and headers of a raw-body request. */
export function putMetaFrom(request: FastifyRequest, q: PutQuery): PutMeta {
  const m: PutMeta = {};
  const pathHeader = header(request, 'x-kura-path');
  const path = either(q.path, pathHeader !== undefined ? decode(pathHeader, 'x-kura-path') : undefined, 'path', 'x-kura-path');
  if (path !== undefined) {
    const r = SafePath.safeParse(path);
    if (!r.success) throw new HttpError('INVALID_INPUT', `path: ${r.error.issues[0]!.message}`, { field: 'path' });
    m.path = path;
  }
  const contentType = header(request, 'content-type');
  // No type, octet-stream, or the form type curl sends by default with --data-binary say
  // nothing about the bytes: the route detects the type from the path and the first bytes.
  const said = contentType && !SAYS_NOTHING.test(contentType) ? contentType : undefined;
  // Given in both places, the type must be the same (parameters aside): one was dropped.
  const type = either(q.type, said, 'type', 'Content-Type', (a, b) => essence(a) === essence(b));
  if (type !== undefined) m.mediaType = type;
  const tagHeader = header(request, 'x-kura-tags')?.split(',').map((t) => decode(t.trim(), 'x-kura-tags')).filter(Boolean);
  const tags = either(q.tag !== undefined ? [q.tag].flat() : undefined, tagHeader, 'tags', 'x-kura-tags', sameSet);
  if (tags?.length) m.tags = tags;
  const metaHeader = header(request, 'x-kura-meta');
  const meta = either(q.meta !== undefined ? metaObject(q.meta, 'meta') : undefined, metaHeader !== undefined ? metaObject(metaHeader, 'x-kura-meta') : undefined, 'meta', 'x-kura-meta', sameJson);
  if (meta !== undefined) m.meta = meta;
  const digest = either(expectedDigest(q.digest, 'digest'), expectedDigest(header(request, 'x-kura-sha256'), 'x-kura-sha256'), 'digest', 'x-kura-sha256');
  if (digest) m.expectDigest = digest;
  return m;
}

/**
 * The put's media type when the request gave none: detected from its path and its first bytes
 * (the same detection as `kura add`, @kura/store media-types.ts). Returns the body to put,
 * whole: the head read from a stream is put back in front of the rest.
 */
export async function withDetectedType(
  meta: PutMeta,
  body: Uint8Array | AsyncIterable<Uint8Array>,
): Promise<{ meta: PutMeta; body: Uint8Array | AsyncIterable<Uint8Array> }> {
  if (meta.mediaType !== undefined) return { meta, body };
  if (body instanceof Uint8Array) return { meta: typed(meta, detectMediaType(meta.path, body.subarray(0, SNIFF_HEAD))), body };
  const it = body[Symbol.asyncIterator]();
  const head: Uint8Array[] = [];
  let have = 0;
  let done = false;
  while (have < SNIFF_HEAD) {
    const r = await it.next();
    if (r.done) {
      done = true;
      break;
    }
    head.push(r.value);
    have += r.value.length;
  }
  const joined = Buffer.concat(head);
  const rest = (async function* () {
    if (joined.length) yield joined;
    if (done) return;
    for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
  })();
  return { meta: typed(meta, detectMediaType(meta.path, joined.subarray(0, SNIFF_HEAD))), body: rest };
}

function typed(meta: PutMeta, mediaType: string | undefined): PutMeta {
  return mediaType === undefined ? meta : { ...meta, mediaType };
}
