/**
 * Vectors as stored and searched (decision 0036): each chunk's L2-normalised vector quantized
 * to int8 with one scale per row (388 bytes for 384 dimensions instead of 1,536), and an
 * exact scan of every row in the wasm core (decision 0037): the same module, and so the same
 * ranking, in Node and in a browser.
 */
import { VectorRows } from '@kura/core';

/** int8 values and the scale that gives them back: v[i] ≈ q[i] * scale. */
export function quantize(v: Float32Array): { scale: number; q: Int8Array } {
  let max = 0;
  for (let i = 0; i < v.length; i++) max = Math.max(max, Math.abs(v[i]!));
  const scale = max > 0 ? max / 127 : 1;
  const q = new Int8Array(v.length);
  for (let i = 0; i < v.length; i++) q[i] = Math.round(v[i]! / scale);
  return { scale, q };
}

export interface ChunkHit {
  docId: number;
  /** The chunk's place in its document, and its characters in the document's text. */
  n: number;
  start: number;
  end: number;
  /** Cosine similarity to the query (approximate by the quantization: about 1e-3). */
  score: number;
}

/**
 * Rows held for scanning, grown as rows are added (by increasing row id): their values, scales
 * and documents in the wasm core (VectorRows: an exact integer scan, SIMD128, and each
 * document's best row chosen there — decision 0070), what each row is here.
 */
export class VectorIndex {
  #docs = new Int32Array(1024);
  #chunks = new Int32Array(1024 * 3); // n, start, end
  readonly #rows: VectorRows;
  /** Rows added since the last scan, handed to the core in one push before the next. */
  #pendingValues: Int8Array;
  #pendingScales = new Float32Array(256);
  #pending = 0;
  #count = 0;
  /** The highest row id loaded, and how many rows the table had then (a delete changes it). */
  lastRow = 0;
  count = 0;

  constructor(readonly dims: number) {
    this.#rows = new VectorRows(dims); // (refuses widths the core cannot scan)
    this.#pendingValues = new Int8Array(256 * dims);
  }

  get size(): number {
    return this.#count;
  }

  add(docId: number, n: number, start: number, end: number, scale: number, q: Int8Array): void {
    if (this.#count === this.#docs.length) {
      this.#docs = grown(this.#docs, (k) => new Int32Array(k));
      this.#chunks = grown(this.#chunks, (k) => new Int32Array(k));
    }
    if (this.#pending === this.#pendingScales.length) {
      this.#pendingScales = grown(this.#pendingScales, (k) => new Float32Array(k));
      this.#pendingValues = grown(this.#pendingValues, (k) => new Int8Array(k));
    }
    const r = this.#count++;
    this.#docs[r] = docId;
    this.#chunks.set([n, start, end], r * 3);
    this.#pendingScales[this.#pending] = scale;
    this.#pendingValues.set(q.subarray(0, this.dims), this.#pending * this.dims);
    this.#pending++;
  }

  /** Frees the rows in the core (a replaced index is let go). */
  dispose(): void {
    this.#rows.dispose();
  }

  /**
   * The `k` best documents for `query` (an L2-normalised vector), each by its best chunk (the
   * first, on a tie), best first; ties by document id then chunk, so every platform orders
   * them alike.
   */
  top(query: Float32Array, k: number): ChunkHit[] {
    if (this.#pending > 0) {
      const from = this.#count - this.#pending;
      // (Document ids are SQLite row ids: positive, and below 2^31 in any store this holds.)
      this.#rows.push(this.#pendingValues.subarray(0, this.#pending * this.dims), this.#pendingScales.subarray(0, this.#pending), new Uint32Array(this.#docs.subarray(from, this.#count)));
      this.#pending = 0;
    }
    if (this.#count === 0 || k === 0) return [];
    const { rows, scores } = this.#rows.top(query, k);
    return Array.from(rows, (row, i) => ({
      docId: this.#docs[row]!,
      n: this.#chunks[row * 3]!,
      start: this.#chunks[row * 3 + 1]!,
      end: this.#chunks[row * 3 + 2]!,
      score: scores[i]!,
    }));
  }
}

function grown<T extends Int32Array | Float32Array | Int8Array>(a: T, make: (n: number) => T): T {
  const b = make(a.length * 2);
  b.set(a);
  return b;
}
