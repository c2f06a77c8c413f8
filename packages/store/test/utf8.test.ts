/**
 * isUtf8 against an independent judge: a fatal TextDecoder (what the store used before, by
 * catching its exceptions).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isUtf8 } from '../src/utf8.js';
import { looksLikeText } from '../src/search/text.js';
import { sniffMediaType, SNIFF_HEAD } from '../src/media-types.js';

const fatal = new TextDecoder('utf-8', { fatal: true });
const decodes = (b: Uint8Array) => {
  try {
    fatal.decode(b);
    return true;
  } catch {
    return false;
  }
};

/** Whether `tail` (1-3 bytes) could begin a character: some continuation makes it decode. */
function beginsCharacter(tail: Uint8Array): boolean {
  const need = tail[0]! >= 0xf0 ? 4 : tail[0]! >= 0xe0 ? 3 : 2;
  if (tail.length >= need) return false;
  for (let c = 0x80; c <= 0xbf; c++) {
    const whole = new Uint8Array(need).fill(0x80);
    whole.set(tail);
    whole[tail.length] = c;
    if (decodes(whole)) return true;
  }
  return false;
}

/** The judge for a sample that may end inside a character. */
function decodesCut(b: Uint8Array): boolean {
  if (decodes(b)) return true;
  for (let k = 1; k <= 3 && k <= b.length; k++) {
    if (decodes(b.subarray(0, b.length - k)) && beginsCharacter(b.subarray(b.length - k))) return true;
  }
  return false;
}

// Bytes biased towards the interesting ranges: ASCII, continuations, lead bytes, edges.
const byte = fc.oneof(
  fc.integer({ min: 0, max: 0x7f }),
  fc.integer({ min: 0x80, max: 0xbf }),
  fc.integer({ min: 0xc0, max: 0xff }),
  fc.constantFrom(0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf),
);
const bytes = fc.array(byte, { maxLength: 12 }).map((a) => Uint8Array.from(a));
const text = fc.string({ unit: 'binary', maxLength: 20 }).map((s) => new TextEncoder().encode(s));

describe('isUtf8', () => {
  it('agrees with a fatal TextDecoder on any bytes (property)', () => {
    fc.assert(fc.property(bytes, (b) => {
        expect(isUtf8(b)).toBe(decodes(b));
      }), { numRuns: 20_000 });
  });

  it('with a cut end, takes exactly what decodes once a character begun at the end is left out (property)', () => {
    fc.assert(fc.property(bytes, (b) => {
        expect(isUtf8(b, true)).toBe(decodesCut(b));
      }), { numRuns: 20_000 });
  });

  it('takes real text cut anywhere, and refuses it cut when no cut is allowed unless it decodes', () => {
    fc.assert(
      fc.property(text, fc.nat(), (t, at) => {
        const cut = t.subarray(0, t.length === 0 ? 0 : at % (t.length + 1));
        expect(isUtf8(t)).toBe(true);
        expect(isUtf8(cut, true)).toBe(true);
        expect(isUtf8(cut)).toBe(decodes(cut));
      }),
      { numRuns: 5_000 },
    );
  });

  it('knows the edges: overlong forms, surrogates, past U+10FFFF', () => {
    for (const [b, ok] of [
      [[0xc1, 0xbf], false], // overlong
      [[0xe0, 0x9f, 0x80], false], // overlong
      [[0xed, 0xa0, 0x80], false], // U+D800
      [[0xed, 0x9f, 0xbf], true], // U+D7FF
      [[0xf4, 0x8f, 0xbf, 0xbf], true], // U+10FFFF
      [[0xf4, 0x90, 0x80, 0x80], false], // U+110000
      [[0xf0, 0x8f, 0xbf, 0xbf], false], // overlong
    ] as const) {
      expect(isUtf8(Uint8Array.from(b)), b.map((x) => x.toString(16)).join(' ')).toBe(ok);
    }
  });
});

describe('its users', () => {
  it('looksLikeText and sniffMediaType: text is text, random bytes are not, a cut head still counts', () => {
    const words = new TextEncoder().encode('naïve café — 日本語 '.repeat(60));
    expect(looksLikeText(words.subarray(0, 100))).toBe(true);
    expect(sniffMediaType(words.subarray(0, SNIFF_HEAD))).toBe('text/plain');
    const random = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7919 + 13) % 251 | 0x80);
    expect(looksLikeText(random)).toBe(false);
    expect(sniffMediaType(random.subarray(0, SNIFF_HEAD))).toBeUndefined();
    expect(sniffMediaType(new TextEncoder().encode('ab\u00e9').subarray(0, 3))).toBeUndefined(); // a whole document ending mid-character
  });
});
