/**
 * Sends a stored document: ETag (= digest), If-None-Match -> 304, one Range -> 206 with
 * Content-Range, unsatisfiable -> 416, HEAD without reading a byte. Bodies stream from the
 * store chunk by chunk, each chunk checked against its key before it leaves; damage found
 * mid-stream cuts the connection, so a client never takes a short body for the document.
 */
import { Readable } from 'node:stream';
import type { Store } from '@kura/store';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../errors.js';
import { etagOf } from './digest.js';
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

export async function sendDocument(request: FastifyRequest, reply: FastifyReply, store: Store, digest: string, headers: Record<string, string> = {}): Promise<FastifyReply> {
  const info = await store.stat(digest);
  const etag = etagOf(info.digest);
  reply.headers({
    etag,
    'accept-ranges': 'bytes',
    // Content-addressed: the bytes at this digest never change (a delete only removes them).
    'cache-control': 'private, max-age=31536000, immutable',
    'content-type': info.mediaType ?? 'application/octet-stream',
    ...headers,
  });
  if (etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send();
  const ifRange = request.headers['if-range'];
  const range = ifRange !== undefined && ifRange !== etag ? { kind: 'full' as const } : parseRange(request.headers.range, info.size);
  if (range.kind === 'unsatisfiable') {
    throw new HttpError('RANGE_NOT_SATISFIABLE', `the range is outside the document's ${info.size} bytes`, { size: info.size }, { 'content-range': `bytes */${info.size}` });
  }
  const head = request.method === 'HEAD';
  if (range.kind === 'partial') {
    reply.code(206).header('content-range', `bytes ${range.start}-${range.end - 1}/${info.size}`).header('content-length', range.end - range.start);
    return head ? reply.send() : reply.send(counted(reply, store.getRangeStream(info.digest, range.start, range.end)));
  }
  reply.header('content-length', info.size);
  return head ? reply.send() : reply.send(counted(reply, store.get(info.digest)));
}
