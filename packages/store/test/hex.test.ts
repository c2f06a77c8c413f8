/** Digest and key parsing: the one-pass decoder agrees with the format's regular expressions. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDigest, parseKey } from '../src/hex.js';

const DIGEST = /^sha256:([0-9a-f]{64})$/;
const KEY = /^[0-9a-f]{64}$/;

/** Strings near the format: right length and alphabet mostly, with a wrong character or two. */
const nearHex = (length: number) =>
  fc
    .tuple(fc.array(fc.constantFrom(...'0123456789abcdef'), { minLength: length, maxLength: length }), fc.array(fc.tuple(fc.nat(length - 1), fc.constantFrom('A', 'g', 'F', ' ', 'é', '\u0100', '0', 'f', ':', '/')), { maxLength: 2 }))
    .map(([chars, edits]) => {
      for (const [at, c] of edits) chars[at] = c;
      return chars.join('');
    });

function outcome(f: () => Uint8Array): string {
  try {
    return Buffer.from(f()).toString('hex');
  } catch (e) {
    return `error ${(e as { code?: string }).code}`;
  }
}

describe('hex parsing', () => {
  it('parseDigest accepts exactly what the format does, and decodes it', () => {
    const candidates = fc.oneof(nearHex(64).map((h) => `sha256:${h}`), nearHex(63).map((h) => `sha256:${h}`), nearHex(65).map((h) => `sha256:${h}`), nearHex(64).map((h) => `sha257:${h}`), fc.string(), fc.constant(42 as unknown as string));
    fc.assert(
      fc.property(candidates, (s) => {
        const m = typeof s === 'string' ? DIGEST.exec(s) : null;
        expect(outcome(() => parseDigest(s))).toBe(m ? m[1] : 'error INVALID_INPUT');
      }),
      { numRuns: 2000 },
    );
  });

  it('parseKey accepts exactly 64 lowercase hex digits, and decodes them', () => {
    fc.assert(
      fc.property(fc.oneof(nearHex(64), nearHex(62), fc.string()), (s) => {
        expect(outcome(() => parseKey(s))).toBe(KEY.test(s) ? s : 'error INVALID_INPUT');
      }),
      { numRuns: 2000 },
    );
  });
});
