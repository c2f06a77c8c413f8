/** The byte sources every streaming API accepts, normalised to one async iteration. */
import { assertBytes, describe } from './bytes.js';
import { InvalidInputError } from './errors.js';

/**
 * A whole buffer, a sync or async iterable of buffers (Node `Readable` streams are async
 * iterables of Buffers), or a web `ReadableStream`.
 */
export type ByteSource =
  | Uint8Array
  | Iterable<Uint8Array>
  | AsyncIterable<Uint8Array>
  | ReadableStream<Uint8Array>;

export async function* pieces(source: ByteSource): AsyncGenerator<Uint8Array, void, undefined> {
  if (source instanceof Uint8Array) {
    yield source;
    return;
  }
  if (typeof ReadableStream !== 'undefined' && source instanceof ReadableStream) {
    // getReader() rather than async iteration: older browsers lack ReadableStream[asyncIterator].
    const reader = source.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        assertBytes(value, 'stream piece');
        yield value;
      }
    } finally {
      reader.releaseLock();
    }
  }
  if (source !== null && typeof source === 'object' && (Symbol.asyncIterator in source || Symbol.iterator in source)) {
    for await (const piece of source as AsyncIterable<Uint8Array>) {
      assertBytes(piece, 'stream piece');
      yield piece;
    }
    return;
  }
  throw new InvalidInputError(
    `source must be a Uint8Array, an iterable or async iterable of Uint8Array, or a ReadableStream; got ${describe(source)}`,
    'source',
  );
}
