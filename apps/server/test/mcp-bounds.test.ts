/**
 * mcp/bounds.ts against JSON.stringify itself (the independent measure): for any string and
 * room, the prefix kept takes what JSON writes for it, fits the room, and is the longest that
 * does (the next character, or surrogate pair, would not fit).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitJson, jsonLength } from '../src/mcp/bounds.js';

const written = (s: string) => JSON.stringify(s).length - 2;

describe('fitJson', () => {
  it('known widths: escapes, control characters, pairs and lone surrogates', () => {
    expect(jsonLength('abc')).toBe(3);
    expect(jsonLength('a"b\\c\n')).toBe(9);
    expect(jsonLength('\u0001')).toBe(6);
    expect(jsonLength('😀')).toBe(2);
    expect(jsonLength('\ud83d')).toBe(6);
    expect(fitJson('ab😀c', 3)).toEqual({ text: 'ab', length: 2 }); // the pair is not split
    expect(fitJson('a\nb', 2)).toEqual({ text: 'a', length: 1 });
  });

  it('any string, any room: the longest prefix that fits, measured as JSON.stringify writes it', () => {
    const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 100 }), fc.string({ maxLength: 200 }));
    fc.assert(
      fc.property(text, fc.nat(400), (s, room) => {
        const { text: kept, length } = fitJson(s, room);
        expect(s.startsWith(kept)).toBe(true);
        expect(length).toBe(written(kept));
        expect(length).toBeLessThanOrEqual(room);
        expect(jsonLength(s)).toBe(written(s));
        if (kept.length < s.length) {
          const c = s.charCodeAt(kept.length);
          const pair = c >= 0xd800 && c <= 0xdbff && kept.length + 1 < s.length && (s.charCodeAt(kept.length + 1) & 0xfc00) === 0xdc00;
          expect(written(s.slice(0, kept.length + (pair ? 2 : 1)))).toBeGreaterThan(room);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
