/**
 * The first bytes of documents just put, kept for the search index (indexer.ts): an ingest
 * worker had them in hand, and reading them back means decompressing and checking them again —
 * a fifth of a close after a bulk add of text went there. Text-like heads only, up to
 * HEADS_BUDGET bytes in all (the oldest go first); the indexer forgets each once it has it.
 * They are the bytes the worker hashed into the document's digest, so they are its content.
 *
 * Of a binary document only that it is one: its head showed no text and no extractor (PDF,
 * DOCX, HTML) by its content, so the index takes it by name, and by its entry's media type,
 * without reading it back.
 */
import { BoundedBytes } from '../bounded-bytes.js';
import { KIND_HEAD, extractKind } from '../extract/kind.js';
import { SNIFF_BYTES, looksLikeText } from './text.js';

/** Bytes of heads kept at most. */
export const HEADS_BUDGET = 64 << 20;
/** Binary documents remembered at most (the oldest go first). */
export const BINARY_MARKS = 1 << 16;
const MARK = { length: 1 };

export class TextHeads {
  readonly #heads: BoundedBytes<Uint8Array>;
  readonly #binary = new BoundedBytes<typeof MARK>(BINARY_MARKS);

  constructor(budget: number = HEADS_BUDGET) {
    this.#heads = new BoundedBytes(budget);
  }

  /**
   * Keeps the first bytes `head` of the document `digest` of `size` bytes (an ingest worker's),
   * or that it is binary. (Puts of arrays on this thread keep nothing: holding their heads, or
   * only a mark, until the index took them cost a 1 KB put 5-7 µs — the collector's work on
   * what a put left behind — for 33-37 µs of the index's later: measured, decision 0064.)
   */
  keep(digest: string, head: Uint8Array, size: number): void {
    if (looksLikeText(head.subarray(0, SNIFF_BYTES))) this.#heads.add(digest, head);
    else this.#mark(digest, head, size);
  }

  /** Marks a document whose head is not text, when it shows no extractor either. */
  #mark(digest: string, head: Uint8Array, size: number): void {
    // (What the index would read back to tell: KIND_HEAD bytes, or the whole of a smaller one.)
    if (head.length >= Math.min(size, KIND_HEAD) && !extractKind(head.subarray(0, KIND_HEAD), null)) this.#binary.add(digest, MARK);
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
