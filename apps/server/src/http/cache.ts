/**
 * Verified bytes of small documents, least recently used first out. The bytes at a digest
 * never change, so an entry can only go stale by the document being deleted — and every read
 * looks the document up first (a deleted one is 404 before the cache is asked). Entries are
 * only ever bytes that passed the store's whole-document SHA-256 check.
 */
export class BytesCache {
  readonly #entries = new Map<string, Buffer>();
  #bytes = 0;

  constructor(
    /** Total budget; 0 turns the cache off. */
    readonly maxBytes: number,
    /** Larger documents are never cached. */
    readonly maxEntry: number,
  ) {}

  get(digest: string): Buffer | undefined {
    const hit = this.#entries.get(digest);
    if (hit) {
      this.#entries.delete(digest); // re-insert: most recently used last
      this.#entries.set(digest, hit);
    }
    return hit;
  }

  set(digest: string, bytes: Buffer): void {
    if (bytes.length > this.maxEntry || bytes.length > this.maxBytes || this.#entries.has(digest)) return;
    this.#entries.set(digest, bytes);
    this.#bytes += bytes.length;
    for (const [d, b] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(d);
      this.#bytes -= b.length;
    }
  }

  delete(digest: string): void {
    const b = this.#entries.get(digest);
    if (b) {
      this.#entries.delete(digest);
      this.#bytes -= b.length;
    }
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.#entries.size, bytes: this.#bytes };
  }
}
