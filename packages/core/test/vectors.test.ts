/**
 * VectorRows (the wasm core's exact scan for semantic search, decision 0037) against a plain
 * float dot product: scores within the int8 and i16 quantizations' reach, across the pieces a
 * large push is cut into; refusals of wrong shapes; a disposed handle.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError, InvalidStateError, VectorRows } from '../src/node.js';

function rand(seed: number) {
  return () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
}

describe('VectorRows', () => {
  it('scores each row as its scale times its dot product with the query, over pushes larger than one piece', () => {
    const dims = 384;
    const n = 12_000; // 4.7 MB: more than one 4 MiB piece
    const r = rand(3);
    const values = Int8Array.from({ length: n * dims }, () => Math.round(r() * 127));
    // Rows and query of about unit length, as semantic search's are: scores within [-1, 1].
    const scales = Float32Array.from({ length: n }, () => (r() + 1.5) / (127 * Math.sqrt(dims / 3)));
    const query = Float32Array.from({ length: dims }, r);
    const norm = Math.hypot(...query);
    query.forEach((x, i) => (query[i] = x / norm));
    const rows = new VectorRows(dims);
    rows.push(values.subarray(0, 5 * dims), scales.subarray(0, 5));
    rows.push(values.subarray(5 * dims), scales.subarray(5));
    expect(rows.length).toBe(n);
    const scores = rows.scores(query);
    expect(scores.length).toBe(n);
    let worst = 0;
    for (let i = 0; i < n; i++) {
      let dot = 0;
      for (let d = 0; d < dims; d++) dot += query[d]! * values[i * dims + d]!;
      worst = Math.max(worst, Math.abs(scores[i]! - dot * scales[i]!));
    }
    expect(worst).toBeLessThan(1e-4);
    rows.clear();
    expect(rows.length).toBe(0);
    expect(rows.scores(query)).toEqual(new Float32Array(0));
    rows.dispose();
    rows.dispose(); // idempotent
    expect(() => rows.scores(query)).toThrow(InvalidStateError);
  });

  it('top gives the best groups by their best row, as a full sort of scores() does; ties by group, then row', () => {
    const dims = 32;
    const r = rand(11);
    for (const [n, groupsOf, k] of [
      [500, 40, 10], // groups in runs out of order, each met several times
      [500, 40, 40], // every group
      [60, 7, 100], // k past the groups there are
      [200, 200, 5], // each row a group of its own
      [300, 3, 0],
    ] as const) {
      // Values from a small range: equal scores happen, so the tie rules are exercised.
      const values = Int8Array.from({ length: n * dims }, () => Math.round(r() * 3));
      const scales = new Float32Array(n).fill(0.5);
      const groups = Uint32Array.from({ length: n }, (_, i) => (Math.floor(i / 3) * 7919) % groupsOf);
      const query = Float32Array.from({ length: dims }, (_, d) => (d % 3) - 1);
      const rows = new VectorRows(dims);
      rows.push(values, scales, groups);
      const scores = rows.scores(query);
      const best = new Map<number, { row: number; score: number }>();
      groups.forEach((g, row) => {
        const b = best.get(g);
        if (!b || scores[row]! > b.score) best.set(g, { row, score: scores[row]! });
      });
      const expected = [...best].sort((a, b) => b[1].score - a[1].score || a[0] - b[0]).slice(0, k);
      const top = rows.top(query, k);
      expect(Array.from(top.rows)).toEqual(expected.map(([, b]) => b.row));
      expect(Array.from(top.scores)).toEqual(expected.map(([, b]) => b.score));
      rows.dispose();
    }
    // Without groups, each row is a group of its own, numbered by its row, across pushes.
    const rows = new VectorRows(16);
    rows.push(new Int8Array(16).fill(1), Float32Array.of(1));
    rows.push(new Int8Array(32).fill(2), Float32Array.of(1, 3));
    expect(Array.from(rows.top(new Float32Array(16).fill(1), 5).rows)).toEqual([2, 1, 0]);
    expect(() => rows.push(new Int8Array(16), Float32Array.of(1), new Uint32Array(2))).toThrow(InvalidInputError);
    // A scale that is not finite would give a score no order holds (NaN): refused, and the core
    // goes on working (a sort that met one could abort it: a review).
    expect(() => rows.push(new Int8Array(16), Float32Array.of(NaN))).toThrow(InvalidInputError);
    expect(() => rows.push(new Int8Array(16), Float32Array.of(-Infinity))).toThrow(InvalidInputError);
    expect(Array.from(rows.top(new Float32Array(16).fill(1), 5).rows)).toEqual([2, 1, 0]);
    expect(() => rows.top(new Float32Array(16), -1)).toThrow(InvalidInputError);
    rows.dispose();
  });

  it('refuses widths it cannot scan and vectors of the wrong length', () => {
    for (const dims of [0, 100, 1040, 1.5]) expect(() => new VectorRows(dims)).toThrow(InvalidInputError);
    const rows = new VectorRows(16);
    expect(() => rows.push(new Int8Array(15), new Float32Array(1))).toThrow(InvalidInputError);
    expect(() => rows.scores(new Float32Array(15))).toThrow(InvalidInputError);
    rows.push(new Int8Array(16).fill(1), Float32Array.of(0.5));
    expect(Array.from(rows.scores(new Float32Array(16)))).toEqual([0]); // a zero query scores 0
    rows.dispose();
  });
});
