/**
 * The first bytes of documents just put, kept for the search index (indexer.ts): an ingest
 * worker had them in hand, and reading them back means decompressing and checking them again —
 * a fifth of a close after a bulk add of text went there. Text-like heads only, up to
 * HEADS_BUDGET bytes in all (the oldest go first); the indexer forgets each once it has it.
 * They are the bytes the worker hashed into the document's digest, so they are its content.
 *
 * Of a binary document only that it is one: its head showed no text and no extractor (PDF,
 * DOCX, HTML) by its content, so the index takes it by name, and by its entry's media type,
 * without reading it back (a blob store's binary bodies were each read back and decoded in
 * part: 52 µs of the index's CPU a 1 KB document, 18 without).
 */
import { BoundedBytes } from '../bounded-bytes.js';
import { KIND_HEAD, extractKind } from '../extract/kind.js';
import { SNIFF_BYTES, looksLikeText } from './text.js';

/** Bytes of heads kept at most. */
export const HEADS_BUDGET = 64 << 20;
/** Binary documents remembered at most (the oldest go first). */
export const BINARY_MARKS = 1 << 16;
const MARK = { length: 1 };
/** Copies of heads up to this size are packed into shared slabs of SLAB bytes. */
const SLAB = 256 * 1024;
const SLABBED_MAX = 16 * 1024;

export class TextHeads {
  readonly #heads: BoundedBytes<Uint8Array>;
  readonly #binary = new BoundedBytes<typeof MARK>(BINARY_MARKS);
  /**
   * Where small copies go: an ArrayBuffer of its own cost a 1 KB put ~1 µs (its allocation
   * and V8's accounting of it), a place in a slab ~0.1. A slab lives while a head in it is
   * kept; heads are forgotten about in the order they came, and all at once when the index's
   * queue is empty.
   */
  #slab = new Uint8Array(0);
  #slabAt = 0;

  constructor(budget: number = HEADS_BUDGET) {
    this.#heads = new BoundedBytes(budget);
  }

  /**
   * Keeps the first bytes `head` of the document `digest` of `size` bytes, or that it is binary.
   * `copy`: the bytes are the caller's (a put of its array): a text head kept is a copy.
   */
  keep(digest: string, head: Uint8Array, size: number, copy = false): void {
    if (looksLikeText(head.subarray(0, SNIFF_BYTES))) this.#heads.add(digest, copy ? this.#copy(head) : head);
    // (What the index would read back to tell: KIND_HEAD bytes, or the whole of a smaller one.)
    else if (head.length >= Math.min(size, KIND_HEAD) && !extractKind(head.subarray(0, KIND_HEAD), null)) this.#binary.add(digest, MARK);
  }

  /** A copy of `bytes` (a Buffer's slice() would be a view of them). */
  #copy(bytes: Uint8Array): Uint8Array {
    if (bytes.length > SLABBED_MAX) return new Uint8Array(bytes);
    if (this.#slabAt + bytes.length > this.#slab.length) {
      this.#slab = new Uint8Array(SLAB);
      this.#slabAt = 0;
    }
    const out = this.#slab.subarray(this.#slabAt, (this.#slabAt += bytes.length));
    out.set(bytes);
    return out;
  }

  /** Whether the document `digest` was put as binary, with no extractor by its content. */
  binary(digest: string): boolean {
    return this.#binary.get(digest) !== undefined;
  }

  /** The first `n` bytes of the document `digest`, when kept and at least that long. */
  head(digest: string, n: number): Uint8Array | undefined {
    const h = this.#heads.get(digest);
    return h && h.length >= n ? h.subarray(0, n) : undefined;
  }

  forget(digest: string): void {
    this.#heads.delete(digest);
    this.#binary.delete(digest);
  }

  clear(): void {
    this.#heads.clear();
    this.#binary.clear();
  }

  get bytes(): number {
    return this.#heads.bytes;
  }
}
