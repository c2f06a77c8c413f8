/**
 * The wasm module's zstd frames, byte for byte, against the known answers `cargo test` pins
 * to upstream zstd 1.5.7 built natively (wasm-core/tests/zstd_known_answers.rs): the module
 * builds zstd with wasm32-only encoder changes (wasm-core/vendor/zstd-sys/kura-wasm32.patch),
 * which must change its speed and nothing else. Each frame is also decoded by fzstd, an
 * independent decoder.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { decompress as fzstdDecompress } from 'fzstd';
import { describe, expect, it } from 'vitest';
import { compress } from '../src/node.js';

const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const known = JSON.parse(readFileSync(here('../../../wasm-core/tests/zstd-known-answers.json'), 'utf8')) as {
  corpusLength: number;
  frames: { offset: number; size: number; level: number; length: number; sha256: string }[];
};
const corpus = new Uint8Array(readFileSync(here('../../../../shared/collections/cisi/CISI.ALL')));

/** The cases of zstd_known_answers.rs, made the same way: (offset, size, level). */
function cases(corpusLength: number): [number, number, number][] {
  const sizes = [1, 2, 7, 31, 100, 1000, 4096, 16_384, 65_536, 131_089, 262_144, 1 << 20, corpusLength];
  const levels = [-5, -1, 1, 2, 3, 4, 6, 9, 12, 16, 19, 22];
  const out: [number, number, number][] = [];
  sizes.forEach((size, i) =>
    levels.forEach((level, j) => {
      if (level > 9 && size > 65_536) return;
      const room = corpusLength - size;
      out.push([room === 0 ? 0 : (i * 7919 + j * 104_729) % room, size, level]);
    }),
  );
  return out;
}

describe('zstd frames of the wasm module', () => {
  it('are the frames upstream zstd makes natively, byte for byte, and decode with fzstd', () => {
    expect(corpus.length).toBe(known.corpusLength);
    const made = cases(corpus.length);
    expect(made.length).toBe(known.frames.length);
    made.forEach(([offset, size, level], i) => {
      const src = corpus.subarray(offset, offset + size);
      const frame = compress(src, level);
      const answer = known.frames[i]!;
      expect({ offset, size, level, length: frame.length, sha256: createHash('sha256').update(frame).digest('hex') }).toEqual(answer);
      expect(Buffer.from(fzstdDecompress(frame)).equals(Buffer.from(src))).toBe(true);
    });
  });
});
