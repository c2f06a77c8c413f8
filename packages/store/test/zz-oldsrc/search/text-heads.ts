/**
 * The first bytes of documents just put, kept for the search index (indexer.ts): an ingest
 * worker had them in hand, and reading them back means decompressing and checking them again —
 * a fifth of a close after a bulk add of text went there. Text-like heads only, up to
 * HEADS_BUDGET bytes in all (the oldest go first); the indexer forgets each once it has it.
 * They are the bytes the worker hashed into the document's digest, so they are its content.
 */
import { BoundedBytes } from '../bounded-bytes.js';
import { SNIFF_BYTES, looksLikeText } from './text.js';

/** Bytes of heads kept at most. */
export const HEADS_BUDGET = 64 << 20;

export class TextHeads {
  readonly #heads: BoundedBytes<Uint8Array>;

  constructor(budget: number = HEADS_BUDGET) {
    this.#heads = new BoundedBytes(budget);
  }

  /** Keeps the first bytes of the document `digest` (binary ones are not kept). */
  keep(digest: string, head: Uint8Array): void {
    if (looksLikeText(head.subarray(0, SNIFF_BYTES))) this.#heads.add(digest, head);
  }

  /** The first `n` bytes of the document `digest`, when kept and at least that long. */
  head(digest: string, n: number): Uint8Array | undefined {
    const h = this.#heads.get(digest);
    return h && h.length >= n ? h.subarray(0, n) : undefined;
  }

  forget(digest: string): void {
    this.#heads.delete(digest);
  }

  clear(): void {
    this.#heads.clear();
  }

  get bytes(): number {
    return this.#heads.bytes;
  }
}
