/**
 * Verified bytes of small documents, least recently used first out. The bytes at a digest
 * never change, so an entry can only go stale by the document being deleted — and every read
 * looks the document up first (a deleted one is 404 before the cache is asked). Entries are
 * only ever bytes that passed the store's whole-document SHA-256 check.
 */
import { BoundedBytes } from '@kura/store';

export class BytesCache {
  readonly #entries: BoundedBytes<Buffer>;

  constructor(
    /** Total budget; 0 turns the cache off. */
    readonly maxBytes: number,
    /** Larger documents are never cached. */
    readonly maxEntry: number,
  ) {
    this.#entries = new BoundedBytes(maxBytes);
  }

  get(digest: string): Buffer | undefined {
    return this.#entries.touch(digest);
  }

  set(digest: string, bytes: Buffer): void {
    if (bytes.length <= this.maxEntry) this.#entries.add(digest, bytes);
  }

  delete(digest: string): void {
    this.#entries.delete(digest);
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.#entries.count, bytes: this.#entries.bytes };
  }
}
