/**
 * The pieces of semantic search that must be exact (decision 0036): chunking covers the text
 * within the token budget, int8 rows keep the cosine within 1e-2, the scan's top-k equals a
 * full sort of the same scores, and reciprocal rank fusion follows its formula.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkText } from '../src/semantic/chunk-text.js';
import { dot, normalize } from '../src/semantic/embedder.js';
import { VectorIndex, quantize } from '../src/semantic/vectors.js';
import { KEYWORD_WEIGHT_LONG, fuseRanks, fuseScores, keywordWeight } from '../src/search/fusion.js';

const words = (s: string) => s.match(/\S+/g)?.length ?? 0;

describe('chunkText', () => {
  it('covers every word of the text, in order, each chunk within the budget (sentences kept whole when they fit)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 120 }), fc.constantFrom('. ', '! ', '\n\n', ' ', '; ')), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 5, max: 60 }),
        (parts, target) => {
          let text = '';
          let n = 0;
          for (const [count, end] of parts) {
            for (let i = 0; i < count; i++) text += `w${n++} `;
            text = text.trimEnd() + end;
          }
          const chunks = chunkText(text, words, target, 10_000);
          // Every word lands in exactly one chunk, in order.
          const seen = chunks.flatMap((c) => text.slice(c.start, c.end).match(/w\d+/g) ?? []);
          expect(seen).toEqual(text.match(/w\d+/g));
          for (const c of chunks) expect(words(text.slice(c.start, c.end))).toBeLessThanOrEqual(Math.ceil(target * 1.25));
          for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.start).toBeGreaterThanOrEqual(chunks[i - 1]!.end);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('keeps short sentences together and stops at the chunk cap', () => {
    const text = 'One two three. Four five six. Seven eight nine.';
    expect(chunkText(text, words, 6).map((c) => text.slice(c.start, c.end))).toEqual(['One two three. Four five six.', 'Seven eight nine.']);
    expect(chunkText('a. '.repeat(100), words, 1, 3)).toHaveLength(3);
    expect(chunkText('   \n\n  ', words)).toEqual([]);
  });
});

/**
 * The scan's score, computed here independently of the wasm core (wasm-core/src/rows.rs says
 * how): the query quantized to i16 (largest component 16383, rounding half away from zero, in
 * f32), an exact integer dot product with the int8 row, then f32 products with the two scales.
 */
function scanScore(query: Float32Array, q: Int8Array, scale: number): number {
  const f = Math.fround;
  let max = 0;
  for (const x of query) max = Math.max(max, Math.abs(x));
  if (max === 0) return 0;
  const qScale = f(max / 16383);
  let dot = 0;
  for (let i = 0; i < q.length; i++) {
    const v = f(query[i]! / qScale);
    dot += Math.max(-16383, Math.min(16383, Math.sign(v) * Math.round(Math.abs(v)))) * q[i]!;
  }
  return f(f(f(dot) * f(scale)) * qScale);
}

describe('vectors', () => {
  const unit = fc.array(fc.float({ min: -1, max: 1, noNaN: true }), { minLength: 384, maxLength: 384 }).filter((a) => a.some((x) => Math.abs(x) > 1e-3)).map((a) => normalize(Float32Array.from(a)));

  it('int8 rows keep each cosine within 1e-2 of f32', () => {
    fc.assert(
      fc.property(unit, unit, (a, b) => {
        const { scale, q } = quantize(b);
        let s = 0;
        for (let i = 0; i < 384; i++) s += a[i]! * q[i]!;
        expect(Math.abs(s * scale - dot(a, b))).toBeLessThan(1e-2);
      }),
      { numRuns: 100 },
    );
  });

  it('top-k by document equals a full sort of the scores an independent implementation gives, bit for bit; ties by document id', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 30 }), unit), { minLength: 1, maxLength: 60 }), unit, fc.integer({ min: 1, max: 40 }), (rows, query, k) => {
        const index = new VectorIndex(384);
        const expected = new Map<number, number>();
        rows.forEach(([doc, v], n) => {
          const { scale, q } = quantize(v);
          index.add(doc, n, 0, 1, scale, q);
          const s = scanScore(query, q, scale);
          let naive = 0;
          for (let i = 0; i < 384; i++) naive += query[i]! * q[i]!;
          expect(Math.abs(s - naive * scale)).toBeLessThan(1e-4); // the i16 query costs nothing that matters
          expected.set(doc, Math.max(expected.get(doc) ?? -Infinity, s));
        });
        const sorted = [...expected].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k);
        expect(index.top(query, k).map((h) => [h.docId, h.score])).toEqual(sorted);
      }),
      { numRuns: 100 },
    );
  });
});

describe('score fusion', () => {
  it('sums each list\'s scores scaled to [0, 1] over that list, times its weight; a list of one value gives 1', () => {
    const fused = fuseScores([
      { items: ['a', 'b', 'c'], scores: [10, 6, 2], weight: 1 },
      { items: ['c', 'd'], scores: [0.8, 0.4], weight: 2 },
      { items: ['e'], scores: [-3], weight: 0.5 },
    ]);
    expect(fused.map((f) => [f.item, f.score, f.ranks])).toEqual([
      ['c', 0 + 2, [3, 1, undefined]],
      ['a', 1, [1, undefined, undefined]],
      ['b', 0.5, [2, undefined, undefined]],
      ['e', 0.5, [undefined, undefined, 1]],
      ['d', 0, [undefined, 2, undefined]],
    ]);
  });

  it('a list sure of its first item puts it first where rank fusion puts items both lists hold ahead', () => {
    // Keyword's first six are close together (common words); semantic's first is far ahead of
    // its others. By ranks, `both` (second in each) goes first; by scores, `sure`.
    const keyword = { items: ['k1', 'both', 'k3', 'k4', 'k5', 'sure', 'k7'], scores: [9.9, 9.8, 9.7, 9.6, 9.5, 9.4, 5], weight: 1 };
    const semantic = { items: ['sure', 'both', 's3', 's4'], scores: [0.62, 0.41, 0.4, 0.39], weight: 1 };
    expect(fuseScores([keyword, semantic])[0]!.item).toBe('sure');
    expect(fuseRanks([keyword, semantic], 60)[0]!.item).toBe('both');
  });

  it('keeps a single list\'s order, ties by first appearance', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -50, max: 50, noNaN: true }), { minLength: 1, maxLength: 30 }), (scores) => {
        const sorted = [...scores].sort((a, b) => b - a);
        const items = sorted.map((_, i) => i);
        expect(fuseScores([{ items, scores: sorted, weight: 1 }]).map((f) => f.item)).toEqual(items);
      }),
    );
  });
});

describe("keyword's weight in hybrid fusion", () => {
  it('is 1 for three words or fewer, stop words aside, and 0.6 for a longer question', () => {
    expect(KEYWORD_WEIGHT_LONG).toBe(0.6);
    for (const q of ['harbour', 'zstd compression level', 'what is the revenue (quarterly)?', 'ERR_REQUIRE_ESM node:fs 6.17.0', 'to be or not to be', '', 'tar - archive files', "what's harbour ferry", 'harbour. Harbour harbour!']) expect(keywordWeight(q), q).toBe(1);
    for (const q of ["my program is frozen and won't respond, how do I force it to quit", 'run a command with a time limit', 'Ärger über Wörter in Sätzen']) expect(keywordWeight(q), q).toBe(0.6);
  });
});

describe('reciprocal rank fusion', () => {
  it('sums weight / (k + rank) over the lists; one-sided hits count once; ties keep first appearance', () => {
    const fused = fuseRanks(
      [
        { items: ['a', 'b', 'c'], weight: 1 },
        { items: ['c', 'd', 'a'], weight: 1 },
      ],
      60,
    );
    const score = (x: string) => fused.find((f) => f.item === x)!;
    expect(score('a').score).toBeCloseTo(1 / 61 + 1 / 63, 12);
    expect(score('c').score).toBeCloseTo(1 / 63 + 1 / 61, 12);
    expect(score('b')).toMatchObject({ score: 1 / 62, ranks: [2, undefined] });
    expect(score('d')).toMatchObject({ score: 1 / 62, ranks: [undefined, 2] });
    expect(fused.map((f) => f.item)).toEqual(['a', 'c', 'b', 'd']); // a and c tie: a came first; so do b and d
    const weighted = fuseRanks([{ items: ['x'], weight: 2 }, { items: ['y'], weight: 1 }], 0);
    expect(weighted.map((f) => [f.item, f.score])).toEqual([['x', 2], ['y', 1]]);
  });
});
