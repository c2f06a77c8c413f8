/**
 * Values with a length in bytes, kept under a budget: once over it, the oldest go first —
 * oldest by insertion, or by use where the owner `touch`es what it reads (least recently
 * used). The search index's text heads (search/text-heads.ts) and the HTTP server's cache of
 * small documents' bytes keep theirs here.
 */
export class BoundedBytes<V extends { length: number }> {
  readonly #entries = new Map<string, V>();
  #bytes = 0;
  /**
   * Where eviction goes on: the oldest entry not yet let go is its next. Every entry it has
   * passed was let go (touched ones moved behind it). An iterator begun anew for each
   * eviction walked past every entry deleted at the front, which a Map keeps until it is
   * rehashed: an add at the budget took 15-20 µs with 65,536 entries.
   */
  #oldest: MapIterator<[string, V]> | undefined;

  /** `maxBytes`: the budget (0 keeps nothing). */
  constructor(readonly maxBytes: number) {}

  get(key: string): V | undefined {
    return this.#entries.get(key);
  }

  /** `get`, and the entry counts as the newest (least recently used goes first). */
  touch(key: string): V | undefined {
    const hit = this.#entries.get(key);
    if (hit) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
    }
    return hit;
  }

  /** Keeps `value` unless the key is kept already or it alone is over the budget; the oldest make room. */
  add(key: string, value: V): void {
    if (value.length > this.maxBytes || this.#entries.has(key)) return;
    this.#entries.set(key, value);
    this.#bytes += value.length;
    while (this.#bytes > this.maxBytes) {
      let next = this.#oldest?.next();
      if (!next || next.done) next = (this.#oldest = this.#entries.entries()).next();
      if (next.done) break;
      const [k, v] = next.value;
      this.#entries.delete(k);
      this.#bytes -= v.length;
    }
  }

  delete(key: string): void {
    const v = this.#entries.get(key);
    if (!v) return;
    this.#entries.delete(key);
    this.#bytes -= v.length;
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get count(): number {
    return this.#entries.size;
  }
}
