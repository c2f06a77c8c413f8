/**
 * Rows of int8 vectors scored exactly against a query in the wasm core (wasm-core/src/rows.rs,
 * decision 0037): an integer dot product per row (SIMD128, 16 values a step), times the row's
 * scale and the query's. The rows live in the core's memory; `scores` gives one f32 per row,
 * `top` the best groups of rows (a document's chunks) by their best row, chosen in the core
 * (decision 0070). The same module in Node and in browsers: the same scores, bit for bit.
 */
import { InvalidInputError, InvalidStateError } from './errors.js';
import { check, copyIn, memory, wasm, wasmError } from './wasm/instance.js';

const registry = new FinalizationRegistry<number>((h) => wasm().kura_rows_free(h));

/** Rows pushed per call at most: keeps the input region (their bytes) near 4 MiB. */
const PUSH_BYTES = 4 << 20;

export class VectorRows {
  #handle: number;
  #length = 0;

  /** Rows of `dims` values: a positive multiple of 16, at most 1,024. */
  constructor(readonly dims: number) {
    if (!Number.isInteger(dims) || dims <= 0 || dims % 16 !== 0 || dims > 1024) {
      throw new InvalidInputError(`vector rows of ${dims} dimensions: a positive multiple of 16 up to 1,024 is needed`, 'dims');
    }
    const h = wasm().kura_rows_new(dims);
    if (h === 0) throw wasmError(wasm().kura_last_error(), 'VectorRows');
    this.#handle = h;
    registry.register(this, h, this);
  }

  get length(): number {
    return this.#length;
  }

  /**
   * Appends `scales.length` rows whose values are `values` (row after row), each in the group
   * `groups` gives it (an unsigned 32-bit number; without `groups`, each row is a group of its
   * own, numbered by its row).
   */
  push(values: Int8Array, scales: Float32Array, groups?: Uint32Array): void {
    const h = this.#live();
    if (values.length !== scales.length * this.dims) throw new InvalidInputError(`${values.length} values for ${scales.length} rows of ${this.dims}`, 'vectors');
    if (groups && groups.length !== scales.length) throw new InvalidInputError(`${groups.length} groups for ${scales.length} rows`, 'groups');
    const per = Math.max(1, Math.floor(PUSH_BYTES / (this.dims + 8)));
    for (let at = 0; at < scales.length; at += per) {
      const n = Math.min(per, scales.length - at);
      const bytes = new Uint8Array(n * (this.dims + 8));
      bytes.set(new Uint8Array(values.buffer, values.byteOffset + at * this.dims, n * this.dims));
      bytes.set(new Uint8Array(Float32Array.from(scales.subarray(at, at + n)).buffer), n * this.dims);
      const ids = groups ? Uint32Array.from(groups.subarray(at, at + n)) : Uint32Array.from({ length: n }, (_, i) => this.#length + i);
      bytes.set(new Uint8Array(ids.buffer), n * (this.dims + 4));
      this.#length = check(wasm().kura_rows_push(h, n, copyIn(bytes)), 'VectorRows.push');
    }
  }

  /** One score per row for `query` (`dims` values): the row's cosine with it, for unit vectors. */
  scores(query: Float32Array): Float32Array {
    const h = this.#live();
    if (query.length !== this.dims) throw new InvalidInputError(`a query of ${query.length} values for rows of ${this.dims}`, 'query');
    const n = check(wasm().kura_rows_scores(h, copyIn(new Uint8Array(Float32Array.from(query).buffer))), 'VectorRows.scores');
    const at = wasm().kura_out_ptr() >>> 0;
    // (f32 little-endian; wasm memory is little-endian, and so is every host Kura runs on)
    return new Float32Array(memory().buffer.slice(at, at + n * 4));
  }

  /**
   * The `k` best groups for `query`, each by its best row (the first, on a tie) and that row's
   * score as `scores` gives it: best first, ties by group, then row.
   */
  top(query: Float32Array, k: number): { rows: Uint32Array; scores: Float32Array } {
    const h = this.#live();
    if (query.length !== this.dims) throw new InvalidInputError(`a query of ${query.length} values for rows of ${this.dims}`, 'query');
    if (!Number.isInteger(k) || k < 0 || k > 0xffffffff) throw new InvalidInputError(`k must be a whole number from 0, not ${k}`, 'k');
    const n = check(wasm().kura_rows_top(h, k, copyIn(new Uint8Array(Float32Array.from(query).buffer))), 'VectorRows.top');
    const at = wasm().kura_out_ptr() >>> 0;
    const view = new DataView(memory().buffer, at, n * 8);
    const rows = new Uint32Array(n);
    const scores = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      rows[i] = view.getUint32(i * 8, true);
      scores[i] = view.getFloat32(i * 8 + 4, true);
    }
    return { rows, scores };
  }

  clear(): void {
    wasm().kura_rows_clear(this.#live());
    this.#length = 0;
  }

  /** Frees the rows' memory. Idempotent. */
  dispose(): void {
    if (this.#handle === 0) return;
    registry.unregister(this);
    wasm().kura_rows_free(this.#handle);
    this.#handle = 0;
  }

  #live(): number {
    if (this.#handle === 0) throw new InvalidStateError('VectorRows already disposed');
    return this.#handle;
  }
}
