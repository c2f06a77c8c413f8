/**
 * Chunk keys the store is known to hold, shared with the ingest workers through a
 * SharedArrayBuffer, so they compress only chunks the store lacks: deduplication before
 * compression (decision 0018). The store's thread adds keys (each chunk a put found stored, and
 * each chunk a commit made reachable); workers only look keys up.
 *
 * Entries are 64-bit fingerprints (a key's first 8 bytes) in an open-addressing table that
 * grows. Every wrong answer is harmless by construction:
 * - "known" for a chunk the store lacks (a fingerprint collision, a key left stale by GC, a
 *   read racing a write): the worker sends the chunk raw and the store keeps it raw — a valid
 *   record (FORMAT.md §8) that takes more room, never a lost or wrong byte;
 * - "unknown" for a stored chunk (not added yet, table full, a torn read): a wasted compression.
 */
import type { Statements } from '../catalog/statements.js';

export class KnownChunks {
  /**
   * Slots (powers of two): a table starts small and grows by 4x when half full, up to MAX_SLOTS
   * (8 MiB), so a store with few chunks does not touch 8 MiB of fresh shared memory: measured,
   * the page faults of 10,000 adds into a new 8 MiB table cost ~5 µs each on this project's
   * machines (~57 ms per 10,000-file snapshot into a new store).
   */
  static readonly INITIAL_SLOTS = 1 << 16;
  static readonly MAX_SLOTS = 1 << 20;
  static readonly MAX_PROBES = 32;

  #buffer: SharedArrayBuffer;
  /** [count, unused, then per slot: hi, lo]; a slot with both words 0 is empty. */
  #words: Int32Array;
  #mask: number;

  /** A new table, or (a worker) a view of the store's table as it was when sent. */
  constructor(buffer?: SharedArrayBuffer) {
    this.#buffer = buffer ?? KnownChunks.#allocate(KnownChunks.INITIAL_SLOTS);
    this.#words = new Int32Array(this.#buffer);
    this.#mask = (this.#words.length - 2) / 2 - 1;
  }

  static #allocate(slots: number): SharedArrayBuffer {
    return new SharedArrayBuffer(8 + 8 * slots);
  }

  /** Whether SharedArrayBuffer exists here (browsers without cross-origin isolation lack it). */
  static available(): boolean {
    return typeof SharedArrayBuffer === 'function';
  }

  /**
   * The current table, to send with each request: after it grows, workers holding an older one
   * miss only the keys added since (a wasted compression, never a wrong byte).
   */
  get buffer(): SharedArrayBuffer {
    return this.#buffer;
  }

  get size(): number {
    return Atomics.load(this.#words, 0);
  }

  /** Adds a 64-hex chunk key (store's thread only). Does nothing once the table is full. */
  add(key: string): void {
    this.#add(...fingerprint(parseInt(key.slice(0, 8), 16), parseInt(key.slice(8, 16), 16)));
  }

  /** Adds a key given as its 32 bytes. */
  addBytes(key: Uint8Array): void {
    const word = (i: number) => (key[i]! << 24) | (key[i + 1]! << 16) | (key[i + 2]! << 8) | key[i + 3]!;
    this.#add(...fingerprint(word(0), word(4)));
  }

  /** Holding MAX_SLOTS / 2 keys: it takes no more. */
  get full(): boolean {
    return this.size >= KnownChunks.MAX_SLOTS / 2;
  }

  has(key: string): boolean {
    const [hi, lo] = fingerprint(parseInt(key.slice(0, 8), 16), parseInt(key.slice(8, 16), 16));
    const at = this.#probe(hi, lo);
    return at >= 0 && Atomics.load(this.#words, at) === hi && Atomics.load(this.#words, at + 1) === lo;
  }

  #add(hi: number, lo: number): void {
    if (this.size >= (this.#mask + 1) / 2) {
      if (this.#mask + 1 >= KnownChunks.MAX_SLOTS) return;
      this.#grow();
    }
    const w = this.#words;
    const at = this.#probe(hi, lo);
    if (at < 0 || Atomics.load(w, at) !== 0 || Atomics.load(w, at + 1) !== 0) return; // no room near, or there already
    // lo first: a reader that sees the new hi sees its lo too (Atomics are ordered).
    Atomics.store(w, at + 1, lo);
    Atomics.store(w, at, hi);
    Atomics.add(w, 0, 1);
  }

  /** A table 4x larger holding the same keys; the old one stays valid for workers that hold it. */
  #grow(): void {
    const old = this.#words;
    this.#buffer = KnownChunks.#allocate(Math.min(KnownChunks.MAX_SLOTS, (this.#mask + 1) * 4));
    this.#words = new Int32Array(this.#buffer);
    this.#mask = (this.#words.length - 2) / 2 - 1;
    for (let at = 2; at < old.length; at += 2) {
      const hi = old[at]!;
      const lo = old[at + 1]!;
      if (hi !== 0 || lo !== 0) this.#add(hi, lo);
    }
  }

  /** The word index of the slot holding (hi, lo), or of the empty slot where it would go; -1 if neither is within MAX_PROBES. */
  #probe(hi: number, lo: number): number {
    const w = this.#words;
    for (let i = 0, slot = lo & this.#mask; i < KnownChunks.MAX_PROBES; i++, slot = (slot + 1) & this.#mask) {
      const at = 2 + 2 * slot;
      const h = Atomics.load(w, at);
      const l = Atomics.load(w, at + 1);
      if ((h === hi && l === lo) || (h === 0 && l === 0)) return at;
    }
    return -1;
  }

  /**
   * Forgets every key (after GC deleted chunks; store's thread only): a new small table, so a
   * worker still holding the old one can only be wrong the harmless way.
   */
  clear(): void {
    this.#buffer = KnownChunks.#allocate(KnownChunks.INITIAL_SLOTS);
    this.#words = new Int32Array(this.#buffer);
    this.#mask = KnownChunks.INITIAL_SLOTS - 1;
  }
}

/** A key's first 8 bytes as two int32 words; never both 0 (that marks an empty slot). */
function fingerprint(hiWord: number, loWord: number): [number, number] {
  const hi = hiWord | 0;
  const lo = loWord | 0;
  return [hi, hi === 0 && lo === 0 ? 1 : lo];
}

/**
 * Loads the keys a store already holds into `known`, a page per event-loop turn (puts go on
 * meanwhile), so a new process re-adding files compresses only what changed. Measured: ~8,192
 * keys in a few milliseconds; stops when the table is full or `wanted` says no more.
 */
export function preloadKnown(known: KnownChunks, st: Pick<Statements, 'chunkKeysAfter'>, wanted: () => boolean): void {
  const PAGE = 8192;
  let after: Uint8Array = new Uint8Array(0); // sorts before every key
  const step = () => {
    if (!wanted() || known.full) return;
    let rows: { key: Uint8Array }[];
    try {
      rows = st.chunkKeysAfter.all(after, PAGE);
    } catch {
      return; // a failing disk shows in the puts themselves; the table is only a shortcut
    }
    for (const r of rows) known.addBytes(r.key);
    if (rows.length === PAGE) {
      after = rows[PAGE - 1]!.key;
      setTimeout(step, 0);
    }
  };
  setTimeout(step, 0);
}
