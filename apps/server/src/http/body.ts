/**
 * Raw request bodies: small ones are collected into one buffer (a put of a buffer is the fast
 * path, and large buffers go to the store's worker threads), large ones stream straight into
 * the store and are never held whole. Both count bytes against a limit, so an oversize body
 * fails with PAYLOAD_TOO_LARGE whether or not it declared its length.
 */
import type { FastifyRequest } from 'fastify';
import { HttpError } from '../errors.js';

/** Bodies up to this size are buffered; larger ones stream. */
export const BUFFER_MAX = 8 << 20;

declare module 'fastify' {
  interface FastifyRequest {
    /** Body bytes read so far (metrics). */
    bytesIn: number;
  }
}

export function tooLarge(limit: number, message = `the body exceeds this server's limit of ${limit} bytes`): HttpError {
  return new HttpError('PAYLOAD_TOO_LARGE', message, { limit }, { connection: 'close' });
}

export function declaredLength(request: FastifyRequest): number | undefined {
  const h = request.headers['content-length'];
  if (h === undefined) return undefined;
  if (!/^\d+$/.test(h)) throw new HttpError('INVALID_INPUT', 'Content-Length must be a whole number', { field: 'content-length' });
  return Number(h);
}

/** The body's pieces as they arrive, failing once more than `limit` bytes came. */
export async function* bodyPieces(request: FastifyRequest, limit: number, over: () => HttpError = () => tooLarge(limit)): AsyncGenerator<Uint8Array> {
  // A declared length over the limit is refused before a byte is read. Without this, a chunk
  // upload or a resumable append announcing 10^15 bytes waited for them until the idle timeout
  // cut the connection, with no answer (apps/server/test/hostile.test.ts).
  const length = declaredLength(request);
  if (length !== undefined && length > limit) throw over();
  for await (const piece of request.raw as AsyncIterable<Buffer>) {
    request.bytesIn += piece.length;
    if (request.bytesIn > limit) throw over();
    yield piece;
  }
}

export async function collect(request: FastifyRequest, limit: number): Promise<Uint8Array> {
  const parts: Buffer[] = [];
  for await (const p of bodyPieces(request, limit)) parts.push(p as Buffer);
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/** The body as bytes (small) or a stream of pieces (large), within `limit`. */
export async function bodySource(request: FastifyRequest, limit: number): Promise<Uint8Array | AsyncIterable<Uint8Array>> {
  const length = declaredLength(request);
  if (length !== undefined && length > limit) throw tooLarge(limit);
  if (length !== undefined && length <= BUFFER_MAX) return collect(request, limit);
  return bodyPieces(request, limit);
}

/**
 * Makes every route of this (encapsulated) instance take its body raw, whatever its
 * Content-Type: the handler reads `request.raw` itself, as a stream.
 */
export function acceptRawBodies(app: import('fastify').FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));
}
