/**
 * The wasm core's grep matcher (wasm-core/src/grep.rs) against JavaScript's own RegExp, an
 * independent implementation: for a literal ignoring case (`grep -i harbour`), which the core
 * finds with its SIMD128 finder rather than the regex crate, every line and first match must be
 * those of RegExp with the `iu` flags (Unicode's simple case folding, as the regex crate's:
 * K, U+212A, is a `k` and ſ, U+017F, an `s`).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineMatcher } from '../src/node.js';

const utf8 = new TextEncoder();
const bytes = (s: string) => utf8.encode(s).length;

/** grep.rs's LineMatch list, computed with RegExp line by line (byte offsets, a line without its `\r`). */
function reference(needle: string, text: string) {
  const re = new RegExp(needle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'iu');
  const out = [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop(); // no line after a final newline
  let offset = 0;
  for (const [line, full] of lines.entries()) {
    const content = full.endsWith('\r') ? full.slice(0, -1) : full;
    const m = re.exec(content);
    if (m) {
      const matchStart = offset + bytes(content.slice(0, m.index));
      out.push({ line, start: offset, end: offset + bytes(content), matchStart, matchEnd: matchStart + bytes(m[0]) });
    }
    offset += bytes(full) + 1;
  }
  return out;
}

// Near misses, case variants, the two letters outside ASCII that fold into it, other
// non-ASCII text, both line ends, and runs long enough for sixteen-place steps.
const PIECES = ['harbour', 'HARBOUR', 'HarBouR', 'harbou', 'arbour', '\n', '\r\n', ' ', '\u212A', '\u017F', 'k', 's', 'S', 'é', 'bb', 'B', 'kiss', 'KISS', '\u017Fu\u212A', 'SUK', 'a-b', 'x'.repeat(17), 'Ab', '\t'];
const NEEDLES = ['harbour', 'HARBOUR', 'b', 'bour', 'ab', 'kiss', 'suk', 'a-b', 'a b', 'r\th', 'ss', 'k', 'xxxxxxxxxxxxxxxxxxxxb'];

describe('grep -i on a literal (the SIMD128 finder)', () => {
  it('finds the lines and first matches RegExp with iu finds', () => {
    const matchers = new Map(NEEDLES.map((n) => [n, new LineMatcher(n, true)]));
    let found = 0;
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 80 }), fc.constantFrom(...NEEDLES), (pieces, needle) => {
        const text = pieces.join('');
        const { matches } = matchers.get(needle)!.lines(utf8.encode(text));
        found += matches.length;
        expect(matches).toEqual(reference(needle, text));
      }),
      { numRuns: 3000, seed: 11 },
    );
    expect(found).toBeGreaterThan(500);
    for (const m of matchers.values()) m.dispose();
  });

  it('finds every match of a line (-o) that RegExp with giu finds', () => {
    const matchers = new Map(NEEDLES.map((n) => [n, new LineMatcher(n, true)]));
    let found = 0;
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES.filter((p) => !p.includes('\n'))), { maxLength: 80 }), fc.constantFrom(...NEEDLES), (pieces, needle) => {
        const line = pieces.join('');
        const re = new RegExp(needle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'giu');
        const expected = [...line.matchAll(re)].map((m) => [bytes(line.slice(0, m.index)), bytes(line.slice(0, m.index)) + bytes(m[0])]);
        const spans = matchers.get(needle)!.matchesIn(utf8.encode(line));
        found += spans.length;
        expect(spans).toEqual(expected);
      }),
      { numRuns: 3000, seed: 12 },
    );
    expect(found).toBeGreaterThan(1000);
    for (const m of matchers.values()) m.dispose();
  });

  it('finds a word in each case at every place of a long line', () => {
    const m = new LineMatcher('harbour', true);
    for (let at = 0; at < 40; at++) {
      for (const word of ['harbour', 'HARBOUR', 'hArBoUr']) {
        const text = `${'y'.repeat(at)}${word}${'z'.repeat(40 - at)}\nno\n`;
        expect(m.lines(utf8.encode(text)).matches).toEqual([{ line: 0, start: 0, end: 47, matchStart: at, matchEnd: at + 7 }]);
      }
    }
    m.dispose();
  });
});
