/**
 * Sends a stored document: ETag (= digest), If-None-Match -> 304, one Range -> 206 with
 * Content-Range, unsatisfiable -> 416, HEAD without reading a byte. Large bodies stream from
 * the store chunk by chunk, each chunk checked against its key before it leaves; damage found
 * mid-stream cuts the connection, so a client never takes a short body for the document.
 */
import { Readable } from 'node:stream';
import type { Store } from '@kura/store';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../errors.js';
import type { BytesCache } from './cache.js';
import { etagOf } from './digest.js';

/** Documents up to this size are read whole and sent in one write; larger ones stream. */
export const BUFFER_MAX = 1 << 20;
/** Media types a browser runs scripts in, when navigated to: HTML, XHTML, SVG and XML (XSLT). */
/** What an HTTP header value may hold (as Node checks it): tab, printable ASCII, and bytes past 0x7f. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const ACTIVE = /^\s*(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|text\/xsl|application\/xml|[^;]*\+xml)\s*(;|$)/i;
import { etagMatches, parseRange } from './range.js';

declare module 'fastify' {
  interface FastifyReply {
    /** Body bytes sent (metrics). */
    bytesOut: number;
  }
}

function counted(reply: FastifyReply, source: AsyncIterable<Uint8Array>): Readable {
  return Readable.from(
    (async function* () {
      for await (const piece of source) {
        reply.bytesOut += piece.length;
        yield piece;
      }
    })(),
    { objectMode: false },
  );
}

export async function sendDocument(
  request: FastifyRequest,
  reply: FastifyReply,
  store: Store,
  cache: BytesCache,
  digest: string,
  headers: Record<string, string> = {},
  /** Also a document only snapshots keep (a snapshot's file, named by the route that found it). */
  unlisted = false,
): Promise<FastifyReply> {
  const info = await store.document(digest, unlisted ? { unlisted: true } : {});
  const etag = etagOf(info.digest);
  // A route that knows which entry it serves gives that entry's type (the path route). A type
  // no header can carry — stored before puts refused one (`text/plain; x=一`) — is sent as
  // bytes: Node threw on it, and every read of the document answered 500 (a trial).
  const given = headers['content-type'] ?? info.mediaType ?? 'application/octet-stream';
  const type = HEADER_VALUE.test(given) ? given : 'application/octet-stream';
  headers = { ...headers, 'content-type': type };
  reply.headers({
    etag,
    'accept-ranges': 'bytes',
    // Content-addressed: the bytes at this digest never change (a delete only removes them).
    'cache-control': 'private, max-age=31536000, immutable',
    'content-type': type,
    // Stored bytes are anyone's: never sniffed into a type that runs, and a type that runs
    // (a page, an SVG) runs sandboxed — without scripts, in no origin — never as this API's.
    'x-content-type-options': 'nosniff',
    ...(ACTIVE.test(type) ? { 'content-security-policy': 'sandbox' } : {}),
    ...headers,
  });
  if (etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send();
  const ifRange = request.headers['if-range'];
  const range = ifRange !== undefined && ifRange !== etag ? { kind: 'full' as const } : parseRange(request.headers.range, info.size);
  if (range.kind === 'unsatisfiable') {
    throw new HttpError('RANGE_NOT_SATISFIABLE', `the range is outside the document's ${info.size} bytes`, { size: info.size }, { 'content-range': `bytes */${info.size}` });
  }
  const head = request.method === 'HEAD';
  // Small: one buffer, checked against the digest as a whole before any byte leaves — so damage
  // is a 500 CORRUPT_DATA, not a 206 or 200 cut short — and sent in one write; a range of it is
  // sliced from it (a range read streamed, and damage cut the connection mid-body: a trial).
  // Large: streamed, each chunk checked against its key.
  const whole = async (): Promise<Buffer> => {
    let bytes = cache.get(info.digest);
    if (!bytes) {
      const b = await info.bytes();
      bytes = Buffer.from(b.buffer, b.byteOffset, b.length);
      cache.set(info.digest, bytes);
    }
    return bytes;
  };
  // HEAD answers as GET would: a small document is read and checked (into the cache GET takes it
  // from) — a damaged one was 200 to HEAD and 500 to GET (a trial; RFC 9110 §9.3.2).
  if (head && info.size <= BUFFER_MAX) await whole();
  if (range.kind === 'partial') {
    const part = !head && info.size <= BUFFER_MAX ? (await whole()).subarray(range.start, range.end) : undefined;
    reply.code(206).header('content-range', `bytes ${range.start}-${range.end - 1}/${info.size}`).header('content-length', range.end - range.start);
    if (head) return reply.send();
    if (part) {
      reply.bytesOut += part.length;
      return reply.send(part);
    }
    return reply.send(counted(reply, info.range(range.start, range.end)));
  }
  reply.header('content-length', info.size);
  if (head) return reply.send();
  if (info.size <= BUFFER_MAX) {
    const bytes = await whole();
    reply.bytesOut += bytes.length;
    return reply.send(bytes);
  }
  return reply.send(counted(reply, info.stream()));
}
