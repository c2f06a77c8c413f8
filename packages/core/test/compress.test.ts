import { execFileSync } from 'node:child_process';
import { decompress as fzstdDecompress } from 'fzstd';
import { describe, expect, it } from 'vitest';
import { CorruptDataError, InvalidInputError, LEVEL_MAX, LEVEL_MIN, compress, decompress } from '../src/node.js';
import { expectSameBytes, randomBytes, textBytes } from './helpers/data.js';

/** Debian's zstd command: the reference implementation, as an independent codec. */
const zstdCli = (args: string[], input: Uint8Array) =>
  new Uint8Array(execFileSync('zstd', args, { input, maxBuffer: 256 << 20 }));

const SIZES = [0, 1, 100, 4096, 65536, 1 << 20];

describe('zstd round trips', () => {
  it('at every level from -7 to 22', () => {
    const data = textBytes(1, 20_000);
    for (let level = LEVEL_MIN; level <= LEVEL_MAX; level++) {
      if (level === 0) continue;
      expectSameBytes(decompress(compress(data, level), data.length), data, `level ${level}`);
    }
  });

  it('on text, random and zero data of many sizes', () => {
    SIZES.forEach((len, i) => {
      for (const data of [textBytes(i, len), randomBytes(i, len), new Uint8Array(len)]) {
        expectSameBytes(decompress(compress(data), len), data, `len ${len}`);
      }
    });
  });

  it('compresses text and zeros well', () => {
    const text = textBytes(2, 1 << 20);
    expect(compress(text, 3).length).toBeLessThan(text.length / 3);
    expect(compress(new Uint8Array(1 << 20), 3).length).toBeLessThan(200);
  });
});

describe('frames interoperate with independent decoders and encoders', () => {
  it('Kura frames decode with the zstd command and with fzstd', () => {
    for (const level of [1, 3, 9, 19]) {
      for (const data of [textBytes(level, 200_000), randomBytes(level, 70_000)]) {
        const frame = compress(data, level);
        expectSameBytes(zstdCli(['-d', '-c', '-q'], frame), data, 'zstd -d');
        expectSameBytes(fzstdDecompress(frame), data, 'fzstd');
      }
    }
  });

  it('frames from the zstd command (no content size, with checksum) decode with Kura', () => {
    for (const level of ['-1', '-3', '-19']) {
      const data = textBytes(9, 300_000);
      const frame = zstdCli([level, '-c', '-q'], data);
      expectSameBytes(decompress(frame, data.length), data);
    }
  });
});

describe('bounded decompression', () => {
  it('a bomb that declares more than the bound is rejected', () => {
    const bomb = compress(new Uint8Array(64 << 20));
    expect(bomb.length).toBeLessThan(64 << 10);
    expect(() => decompress(bomb, 4096)).toThrow(CorruptDataError);
    expect(() => decompress(bomb, 4096)).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA', reason: 'too-large' }));
  });

  it('a bomb without a declared size stops at the bound', () => {
    const bomb = zstdCli(['-3', '-c', '-q'], new Uint8Array(32 << 20)); // stdin: size unknown
    expect(() => decompress(bomb, 65536)).toThrow(expect.objectContaining({ reason: 'too-large' }));
    expect(decompress(bomb, 32 << 20).length).toBe(32 << 20);
  });

  it('fewer bytes than expected is an error', () => {
    const data = textBytes(3, 1000);
    expect(() => decompress(compress(data), 1001)).toThrow(expect.objectContaining({ reason: 'too-short' }));
  });

  it('truncated, garbage and padded frames are rejected', () => {
    const data = textBytes(4, 50_000);
    const frame = compress(data);
    for (const cut of [0, 1, 4, 5, frame.length >> 1, frame.length - 1]) {
      expect(() => decompress(frame.subarray(0, cut), data.length), `cut ${cut}`).toThrow(CorruptDataError);
    }
    const padded = new Uint8Array(frame.length + 3);
    padded.set(frame);
    expect(() => decompress(padded, data.length)).toThrow(expect.objectContaining({ reason: 'corrupt-frame' }));
    expect(() => decompress(new TextEncoder().encode('not a zstd frame'), 16)).toThrow(CorruptDataError);
  });

  it('a corrupted byte never yields a result of the wrong length', () => {
    const data = textBytes(5, 20_000);
    const frame = compress(data);
    let detected = 0;
    for (let i = 0; i < frame.length; i += 7) {
      const bad = frame.slice();
      bad[i]! ^= 0xa5;
      try {
        expect(decompress(bad, data.length).length).toBe(data.length);
      } catch (e) {
        expect(e).toBeInstanceOf(CorruptDataError);
        detected++;
      }
    }
    expect(detected).toBeGreaterThan(0);
  });
});

describe('arguments', () => {
  it.each([[0], [-8], [23], [2.5], ['3']])('level %o is rejected', (level) => {
    expect(() => compress(new Uint8Array(1), level as never)).toThrow(InvalidInputError);
  });

  it.each([[-1], [1.5], [2 ** 31], [NaN]])('rawLength %o is rejected', (n) => {
    expect(() => decompress(compress(new Uint8Array(1)), n as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', field: 'rawLength' }),
    );
  });
});
