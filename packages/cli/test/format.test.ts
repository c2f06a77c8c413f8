/** Output formatting: counts as toLocaleString('en-US') prints them, without its ICU start-up cost. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { count } from '../src/format.js';

describe('count', () => {
  it('groups digits by thousands exactly as en-US does, negative numbers and zero included', () => {
    for (const n of [0, 7, 999, 1000, -1000, 123_456, 1_000_000, -987_654_321, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]) {
      expect(count(n)).toBe(n.toLocaleString('en-US'));
    }
    fc.assert(fc.property(fc.maxSafeInteger(), (n) => count(n) === n.toLocaleString('en-US')), { numRuns: 2000 });
  });
});
