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
    const [hi, lo] = fingerprint(key);
    this.#add(hi, lo);
  }

  /** Adds a key given as its 32 bytes. */
  addBytes(key: Uint8Array): void {
    const hi = ((key[0]! << 24) | (key[1]! << 16) | (key[2]! << 8) | key[3]!) | 0;
    const lo = ((key[4]! << 24) | (key[5]! << 16) | (key[6]! << 8) | key[7]!) | 0;
    this.#add(hi, hi === 0 && lo === 0 ? 1 : lo);
  }

  get full(): boolean {
    return Atomics.load(this.#words, 0) >= KnownChunks.SLOTS / 2;
  }

  #add(hi: number, lo: number): void {
    const w = this.#words;
    if (Atomics.load(w, 0) >= KnownChunks.SLOTS / 2) return;
    for (let i = 0, slot = lo & (KnownChunks.SLOTS - 1); i < KnownChunks.MAX_PROBES; i++, slot = (slot + 1) & (KnownChunks.SLOTS - 1)) {
      const at = 2 + 2 * slot;
      const h = Atomics.load(w, at);
      const l = Atomics.load(w, at + 1);
      if (h === hi && l === lo) return;
      if (h === 0 && l === 0) {
        // lo first: a reader that sees the new hi sees its lo too (Atomics are ordered).
        Atomics.store(w, at + 1, lo);
        Atomics.store(w, at, hi);
        Atomics.add(w, 0, 1);
        return;
      }
    }
  }

  has(key: string): boolean {
    const [hi, lo] = fingerprint(key);
    const w = this.#words;
    for (let i = 0, slot = lo & (KnownChunks.SLOTS - 1); i < KnownChunks.MAX_PROBES; i++, slot = (slot + 1) & (KnownChunks.SLOTS - 1)) {
      const at = 2 + 2 * slot;
      const h = Atomics.load(w, at);
      const l = Atomics.load(w, at + 1);
      if (h === hi && l === lo) return true;
      if (h === 0 && l === 0) return false;
    }
    return false;
  }

  /** Forgets every key (after GC deleted chunks; store's thread only). */
  clear(): void {
    this.#words.fill(0);
  }
}

/** The key's first 8 bytes as two int32 words; never both 0 (that marks an empty slot). */
function fingerprint(key: string): [number, number] {
  const hi = parseInt(key.slice(0, 8), 16) | 0;
  const lo = parseInt(key.slice(8, 16), 16) | 0;
  return [hi, hi === 0 && lo === 0 ? 1 : lo];
}
