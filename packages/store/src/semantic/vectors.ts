/**
 * Vectors as stored and searched (decision 0036): each chunk's L2-normalised vector quantized
 * to int8 with one scale per row (388 bytes for 384 dimensions instead of 1,536), and an
 * exact scan that scores every row against the query in f32 (only the stored side is
 * quantized): the same code, and so the same ranking, in Node and in a browser.
 */
import { InvalidInputError } from '@kura/core';

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

/** Rows held in memory for scanning, grown as rows are added (by increasing row id). */
export class VectorIndex {
  #docs = new Int32Array(1024);
  #chunks = new Int32Array(1024 * 3); // n, start, end
  #scales = new Float32Array(1024);
  #data: Int8Array;
  #rows = 0;
  /** The highest row id loaded, and how many rows the table had then (a delete changes it). */
  lastRow = 0;
  count = 0;

  constructor(readonly dims: number) {
    // The scan sums four lanes at a time (top): every model here has 384 or 768 dimensions.
    if (!Number.isInteger(dims) || dims <= 0 || dims % 4 !== 0) throw new InvalidInputError(`vectors of ${dims} dimensions: a positive multiple of 4 is needed`, 'dims');
    this.#data = new Int8Array(1024 * dims);
  }

  get size(): number {
    return this.#rows;
  }

  add(docId: number, n: number, start: number, end: number, scale: number, q: Int8Array): void {
    if (this.#rows === this.#scales.length) this.#grow();
    const r = this.#rows++;
    this.#docs[r] = docId;
    this.#chunks.set([n, start, end], r * 3);
    this.#scales[r] = scale;
    this.#data.set(q.subarray(0, this.dims), r * this.dims);
  }

  #grow(): void {
    const grow = <T extends Int32Array | Float32Array | Int8Array>(a: T, make: (n: number) => T): T => {
      const b = make(a.length * 2);
      b.set(a);
      return b;
    };
    this.#docs = grow(this.#docs, (n) => new Int32Array(n));
    this.#chunks = grow(this.#chunks, (n) => new Int32Array(n));
    this.#scales = grow(this.#scales, (n) => new Float32Array(n));
    this.#data = grow(this.#data, (n) => new Int8Array(n));
  }

  /**
   * The `k` best documents for `query` (an L2-normalised vector), each by its best chunk, best
   * first; ties by document id then chunk, so every platform orders them alike. Documents
   * `keep` refuses are passed over.
   */
  top(query: Float32Array, k: number, keep: (docId: number) => boolean = () => true): ChunkHit[] {
    const d = this.dims;
    const data = this.#data;
    const docs = this.#docs;
    // A document's rows are consecutive (the embed job writes them in one transaction): its best
    // row is found per run of rows, and the map is touched once a run, not once a row (100,000
    // rows: ~9 ms less). A document met again in a later run is merged all the same.
    const best = new Map<number, { row: number; score: number }>();
    let runDoc = -1;
    let runRow = -1;
    let runScore = -Infinity;
    const closeRun = () => {
      if (runDoc < 0) return;
      const seen = best.get(runDoc);
      if (!seen || runScore > seen.score || (runScore === seen.score && runRow < seen.row)) best.set(runDoc, { row: runRow, score: runScore });
    };
    for (let r = 0; r < this.#rows; r++) {
      // Four sums, one per lane of four: ~25% faster than one running sum here (V8 keeps them
      // in registers); the order is fixed, so every platform gets the same score.
      let a = 0;
      let b = 0;
      let c = 0;
      let e = 0;
      const at = r * d;
      for (let i = 0; i < d; i += 4) {
        a += query[i]! * data[at + i]!;
        b += query[i + 1]! * data[at + i + 1]!;
        c += query[i + 2]! * data[at + i + 2]!;
        e += query[i + 3]! * data[at + i + 3]!;
      }
      const s = (a + b + c + e) * this.#scales[r]!;
      const doc = docs[r]!;
      if (doc !== runDoc) {
        closeRun();
        runDoc = doc;
        runRow = r;
        runScore = s;
      } else if (s > runScore) {
        runRow = r;
        runScore = s;
      }
    }
    closeRun();
    const ranked = [...best].filter(([doc]) => keep(doc)).sort((x, y) => y[1].score - x[1].score || x[0] - y[0] || x[1].row - y[1].row);
    return ranked.slice(0, k).map(([docId, { row, score }]) => ({
      docId,
      n: this.#chunks[row * 3]!,
      start: this.#chunks[row * 3 + 1]!,
      end: this.#chunks[row * 3 + 2]!,
      score,
    }));
  }
}

/** The score `top` gives a row: the query against the int8 row, in four lanes, times its scale. */
export function rowScore(query: Float32Array, q: Int8Array, scale: number): number {
  let a = 0;
  let b = 0;
  let c = 0;
  let e = 0;
  for (let i = 0; i < q.length; i += 4) {
    a += query[i]! * q[i]!;
    b += query[i + 1]! * q[i + 1]!;
    c += query[i + 2]! * q[i + 2]!;
    e += query[i + 3]! * q[i + 3]!;
  }
  return (a + b + c + e) * Math.fround(scale);
}

/** Reciprocal rank fusion (decision 0036): score(x) = sum over lists of weight / (k + rank), ranks from 1. */
export function fuseRanks<T>(lists: { items: readonly T[]; weight: number }[], k: number): { item: T; score: number; ranks: (number | undefined)[] }[] {
  const fused = new Map<T, { score: number; ranks: (number | undefined)[]; first: number }>();
  let order = 0;
  lists.forEach((list, li) => {
    list.items.forEach((item, i) => {
      let f = fused.get(item);
      if (!f) fused.set(item, (f = { score: 0, ranks: lists.map(() => undefined), first: order++ }));
      f.score += list.weight / (k + i + 1);
      f.ranks[li] = i + 1;
    });
  });
  // Ties (equal scores) keep the order in which the lists first named them: stable everywhere.
  return [...fused].sort((a, b) => b[1].score - a[1].score || a[1].first - b[1].first).map(([item, f]) => ({ item, score: f.score, ranks: f.ranks }));
}
