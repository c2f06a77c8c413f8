/**
 * Chunk keys the store is known to hold, shared with the ingest workers through a
 * SharedArrayBuffer, so they compress only chunks the store lacks: deduplication before
 * compression (decision 0018). The store's thread adds keys (each chunk a put found stored, and
 * each chunk a commit made reachable); workers only look keys up.
 *
 * Entries are 64-bit fingerprints (a key's first 8 bytes) in an open-addressing table. Every
 * wrong answer is harmless by construction:
 * - "known" for a chunk the store lacks (a fingerprint collision, a key left stale by GC, a
 *   read racing a write): the worker sends the chunk raw and the store keeps it raw — a valid
 *   record (FORMAT.md §8) that takes more room, never a lost or wrong byte;
 * - "unknown" for a stored chunk (not added yet, table full, a torn read): a wasted compression.
 */
export class KnownChunks {
  /** Slots (power of two): 8 MiB; at most half are filled so probes stay short. */
  static readonly SLOTS = 1 << 20;
  static readonly MAX_PROBES = 32;

  readonly buffer: SharedArrayBuffer;
  /** [count, unused, then per slot: hi, lo]; a slot with both words 0 is empty. */
  readonly #words: Int32Array;

  constructor(buffer?: SharedArrayBuffer) {
    this.buffer = buffer ?? new SharedArrayBuffer(8 + 8 * KnownChunks.SLOTS);
    this.#words = new Int32Array(this.buffer);
  }

  /** Whether SharedArrayBuffer exists here (browsers without cross-origin isolation lack it). */
  static available(): boolean {
    return typeof SharedArrayBuffer === 'function';
  }

  get size(): number {
    return Atomics.load(this.#words, 0);
  }

  /** Adds a 64-hex chunk key (store's thread only). Does nothing once the table is half full. */
  add(key: string): void {
    this.#add(...fingerprint(parseInt(key.slice(0, 8), 16), parseInt(key.slice(8, 16), 16)));
  }

  /** Adds a key given as its 32 bytes. */
  addBytes(key: Uint8Array): void {
    const word = (i: number) => (key[i]! << 24) | (key[i + 1]! << 16) | (key[i + 2]! << 8) | key[i + 3]!;
    this.#add(...fingerprint(word(0), word(4)));
  }

  get full(): boolean {
    return Atomics.load(this.#words, 0) >= KnownChunks.SLOTS / 2;
  }

  has(key: string): boolean {
    const [hi, lo] = fingerprint(parseInt(key.slice(0, 8), 16), parseInt(key.slice(8, 16), 16));
    const at = this.#probe(hi, lo);
    return at >= 0 && Atomics.load(this.#words, at) === hi && Atomics.load(this.#words, at + 1) === lo;
  }

  #add(hi: number, lo: number): void {
    const w = this.#words;
    if (this.full) return;
    const at = this.#probe(hi, lo);
    if (at < 0 || Atomics.load(w, at) !== 0 || Atomics.load(w, at + 1) !== 0) return; // no room near, or there already
    // lo first: a reader that sees the new hi sees its lo too (Atomics are ordered).
    Atomics.store(w, at + 1, lo);
    Atomics.store(w, at, hi);
    Atomics.add(w, 0, 1);
  }

  /** The word index of the slot holding (hi, lo), or of the empty slot where it would go; -1 if neither is within MAX_PROBES. */
  #probe(hi: number, lo: number): number {
    const w = this.#words;
    for (let i = 0, slot = lo & (KnownChunks.SLOTS - 1); i < KnownChunks.MAX_PROBES; i++, slot = (slot + 1) & (KnownChunks.SLOTS - 1)) {
      const at = 2 + 2 * slot;
      const h = Atomics.load(w, at);
      const l = Atomics.load(w, at + 1);
      if ((h === hi && l === lo) || (h === 0 && l === 0)) return at;
    }
    return -1;
  }

  /** Forgets every key (after GC deleted chunks; store's thread only). */
  clear(): void {
    this.#words.fill(0);
  }
}

/** A key's first 8 bytes as two int32 words; never both 0 (that marks an empty slot). */
function fingerprint(hiWord: number, loWord: number): [number, number] {
  const hi = hiWord | 0;
  const lo = loWord | 0;
  return [hi, hi === 0 && lo === 0 ? 1 : lo];
}
