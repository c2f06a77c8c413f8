/**
 * Document metadata that arrives beside a raw body: query parameters first, `x-kura-*`
 * headers as the alternative (percent-encoded where they carry text), and the request's
 * Content-Type as the media type when nothing more specific is given.
 */
import type { PutMeta } from '@kura/store';
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

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
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

/** PutMeta (with the expected digest) from the query and headers of a raw-body request. */
export function putMetaFrom(request: FastifyRequest, q: PutQuery): PutMeta {
  const m: PutMeta = {};
  const path = q.path ?? (header(request, 'x-kura-path') !== undefined ? decode(header(request, 'x-kura-path')!, 'x-kura-path') : undefined);
  if (path !== undefined) {
    const r = SafePath.safeParse(path);
    if (!r.success) throw new HttpError('INVALID_INPUT', `path: ${r.error.issues[0]!.message}`, { field: 'path' });
    m.path = path;
  }
  const contentType = header(request, 'content-type');
  const type = q.type ?? (contentType && !/^application\/octet-stream\b/i.test(contentType) ? contentType : undefined);
  if (type !== undefined) m.mediaType = type;
  const tags = q.tag !== undefined ? [q.tag].flat() : header(request, 'x-kura-tags')?.split(',').map((t) => decode(t.trim(), 'x-kura-tags')).filter(Boolean);
  if (tags?.length) m.tags = tags;
  const meta = q.meta ?? header(request, 'x-kura-meta');
  if (meta !== undefined) m.meta = metaObject(meta, q.meta !== undefined ? 'meta' : 'x-kura-meta');
  const digest = expectedDigest(q.digest ?? header(request, 'x-kura-sha256'), q.digest !== undefined ? 'digest' : 'x-kura-sha256');
  if (digest) m.expectDigest = digest;
  return m;
}
