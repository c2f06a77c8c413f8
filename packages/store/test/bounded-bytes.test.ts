/**
 * BoundedBytes (the search index's text heads, the HTTP server's cache of small documents):
 * any sequence of adds, touches and deletes leaves exactly the entries a plain model keeps —
 * the newest by insertion or use, within the budget — and eviction stays cheap at the budget.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedBytes } from '../src/bounded-bytes.js';

type Step = { op: 'add'; key: number; length: number } | { op: 'touch' | 'get' | 'delete'; key: number } | { op: 'clear' };

/** The model: entries oldest first; an add over budget drops from the front. */
function model(budget: number, steps: Step[]): [string, number][] {
  let entries: [string, number][] = [];
  const total = () => entries.reduce((n, [, l]) => n + l, 0);
  for (const s of steps) {
    const key = s.op === 'clear' ? '' : `k${s.key}`;
    const at = entries.findIndex(([k]) => k === key);
    if (s.op === 'add') {
      if (s.length > budget || at >= 0) continue;
      entries.push([key, s.length]);
      while (total() > budget) entries.shift();
    } else if (s.op === 'touch' && at >= 0) entries.push(...entries.splice(at, 1));
    else if (s.op === 'delete' && at >= 0) entries.splice(at, 1);
    else if (s.op === 'clear') entries = [];
  }
  return entries;
}

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('add' as const), key: fc.nat(40), length: fc.integer({ min: 0, max: 30 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('touch' as const, 'get' as const, 'delete' as const), key: fc.nat(40) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'clear' as const }) },
);

describe('BoundedBytes', () => {
  it('keeps what the model keeps, in its order, after any adds, touches, deletes and clears', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 }), fc.array(step, { maxLength: 300 }), (budget, steps) => {
        const b = new BoundedBytes<{ length: number }>(budget);
        for (const s of steps) {
          if (s.op === 'add') b.add(`k${s.key}`, { length: s.length });
          else if (s.op === 'touch') b.touch(`k${s.key}`);
          else if (s.op === 'get') b.get(`k${s.key}`);
          else if (s.op === 'delete') b.delete(`k${s.key}`);
          else b.clear();
        }
        const want = model(budget, steps);
        expect(b.count).toBe(want.length);
        expect(b.bytes).toBe(want.reduce((n, [, l]) => n + l, 0));
        for (const [k, l] of want) expect(b.get(k)?.length, k).toBe(l);
        // The order: adding a budget's worth more lets them go oldest first.
        const order: string[] = [];
        for (let i = 0; b.count > 0 && i < want.length + budget + 1; i++) {
          const before = new Set(want.map(([k]) => k).filter((k) => b.get(k)));
          b.add(`new${i}`, { length: 1 });
          for (const [k] of want) if (before.has(k) && !b.get(k)) order.push(k);
        }
        expect(order).toEqual(want.map(([k]) => k).slice(0, order.length));
      }),
      { numRuns: 400 },
    );
  });

  it('lets the oldest go over many evictions at the budget (each once: the iterator kept between them)', () => {
    const b = new BoundedBytes<{ length: number }>(65_536);
    const one = { length: 1 };
    for (let i = 0; i < 300_000; i++) b.add(`key ${i}`, one);
    expect(b.count).toBe(65_536);
    expect(b.get('key 234463')).toBeUndefined();
    expect(b.get('key 234464')).toBe(one); // (the oldest of the last 65,536)
  });
});
