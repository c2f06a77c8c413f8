/**
 * A pack writer's appends gathered in memory and written in one call when the buffer fills or
 * on `drain()` (the PackWriter contract, packs.ts): each write into a file costs a fixed price
 * per call (Node: a syscall, ~10 µs; OPFS: ~70 µs), which one write per chunk record paid
 * thousands of times per pack (decisions 0014, 0017).
 */
export class GatheredAppends {
  readonly #buffer: Uint8Array;
  /** Writes all of `parts`, contiguously, at `position`, or throws. */
  readonly #write: (parts: Uint8Array[], position: number) => void;
  /** Bytes appended so far; the last `#gathered` of them are still in the buffer. */
  #size = 0;
  #gathered = 0;

  constructor(capacity: number, write: (parts: Uint8Array[], position: number) => void) {
    this.#buffer = new Uint8Array(capacity);
    this.#write = write;
  }

  get size(): number {
    return this.#size;
  }

  /** Appends the parts contiguously; returns the offset of the first. */
  append(parts: Uint8Array[]): number {
    const at = this.#size;
    const total = parts.reduce((n, p) => n + p.length, 0);
    if (this.#gathered + total > this.#buffer.length) this.drain();
    if (total > this.#buffer.length) this.#write(parts, at); // a large record: written as it is
    else {
      for (const p of parts) {
        this.#buffer.set(p, this.#gathered);
        this.#gathered += p.length;
      }
    }
    this.#size += total;
    return at;
  }

  /** Writes the gathered bytes; after a failure they stay gathered, so a retry writes them at the same offsets. */
  drain(): void {
    if (this.#gathered === 0) return;
    this.#write([this.#buffer.subarray(0, this.#gathered)], this.#size - this.#gathered);
    this.#gathered = 0;
  }

  /** Drops the gathered bytes (a pack given up after a failed write); answers how many bytes were written. */
  discard(): number {
    this.#size -= this.#gathered;
    this.#gathered = 0;
    return this.#size;
  }
}

/**
 * Runs every drain, even after one fails (a store closing lets go of every file all the same),
 * and answers the first failure, if any: `{ e }`, so that a thrown `undefined` still counts.
 */
export function drainAll(drains: Iterable<() => void>): { e: unknown } | undefined {
  let failed: { e: unknown } | undefined;
  for (const drain of drains) {
    try {
      drain();
    } catch (e) {
      failed ??= { e };
    }
  }
  return failed;
}
