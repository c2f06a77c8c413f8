/**
 * Deferred chunks and groups gathered in wasm memory (group-buffer.ts, Ingester.updateDeferred):
 * the same chunks as `update` gives, the same bytes as the chunks' own payloads, and the same
 * stored form as `encodeChunk` gives the group's bytes copied out — checked against those
 * independent paths, on text, random bytes and zeros, whole and in pieces.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CODEC_RAW,
  CODEC_ZSTD,
  GroupBuffer,
  Ingester,
  InvalidInputError,
  InvalidStateError,
  decompress,
  encodeChunk,
  type IngestChunk,
} from '../src/node.js';
import { concatBytes, randomBytes, textBytes } from './helpers/data.js';

const OPTIONS = { chunking: { avg: 4096 }, compression: false as const };

/** Chunks of `pieces` the ordinary way (each payload its own copy). */
function plain(pieces: Uint8Array[]): IngestChunk[] {
  const ing = new Ingester(OPTIONS);
  const out = pieces.flatMap((p) => ing.update(p));
  return [...out, ...ing.finish()];
}

describe('Ingester deferred chunks', () => {
  const data = concatBytes([textBytes(1, 300_000), randomBytes(2, 100_000), new Uint8Array(50_000)]);

  it('are the chunks update gives, their bytes copied out or gathered in a group', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 120_000 }), { minLength: 1, maxLength: 8 }), (cuts) => {
        const pieces: Uint8Array[] = [];
        let at = 0;
        for (const n of cuts) {
          if (at >= data.length) break;
          pieces.push(data.subarray(at, Math.min(at + n, data.length)));
          at += n;
        }
        if (at < data.length) pieces.push(data.subarray(at));
        const want = plain(pieces);
        const ing = new Ingester(OPTIONS);
        const group = new GroupBuffer();
        const got: IngestChunk[] = [];
        const copies: Uint8Array[] = [];
        try {
          const take = (chunks: ReturnType<Ingester['updateDeferred']>) => {
            for (const c of chunks) {
              expect(c.payload.length).toBe(0);
              // Every other chunk copied out, the rest gathered: both from the same call.
              if (c.record % 2) copies.push(ing.payloadOf(c.record));
              else ing.groupRecord(group, c.record);
              got.push(c);
            }
          };
          for (const p of pieces) take(ing.updateDeferred(p));
          take(ing.finishDeferred());
          expect(got.map(({ offset, length, key, codec }) => ({ offset, length, key, codec }))).toEqual(want.map(({ offset, length, key, codec }) => ({ offset, length, key, codec })));
          expect(ing.result!.size).toBe(data.length);
          const copied = want.filter((_, i) => (got[i] as { record: number }).record % 2);
          const grouped = want.filter((_, i) => !((got[i] as { record: number }).record % 2));
          expect(Buffer.concat(copies).equals(Buffer.concat(copied.map((c) => c.payload)))).toBe(true);
          expect(group.length).toBe(grouped.reduce((n, c) => n + c.length, 0));
          expect(Buffer.from(group.slice(0, group.length)).equals(Buffer.concat(grouped.map((c) => c.payload)))).toBe(true);
        } finally {
          ing.dispose();
          group.dispose();
        }
      }),
      { numRuns: 25 },
    );
  });

  it('refuses what would lose or misread bytes, with typed errors', () => {
    expect(() => new Ingester({ chunking: { avg: 4096 } }).updateDeferred(data.subarray(0, 10))).toThrow(InvalidStateError);
    const ing = new Ingester(OPTIONS);
    const group = new GroupBuffer();
    try {
      expect(() => ing.updateDeferred(new Uint8Array((1 << 20) + 1))).toThrow(InvalidInputError);
      const first = ing.updateDeferred(data.subarray(0, 100_000));
      expect(first.length).toBeGreaterThan(2);
      expect(() => ing.payloadOf(first.length)).toThrow(InvalidStateError);
      expect(() => ing.payloadOf(-1)).toThrow(InvalidStateError);
      // A call that completes no chunk: the records of the one before are gone.
      expect(ing.updateDeferred(data.subarray(100_000, 100_001))).toEqual([]);
      expect(() => ing.payloadOf(0)).toThrow(InvalidStateError);
      expect(() => ing.groupRecord(group, 0)).toThrow(InvalidStateError);
      expect(group.length).toBe(0);
      expect(() => group.slice(0, 1)).toThrow(InvalidInputError);
    } finally {
      ing.dispose();
      group.dispose();
    }
    expect(() => group.add(new Uint8Array(1))).toThrow(InvalidStateError);
    group.dispose(); // (twice is nothing)
  });
});

describe('GroupBuffer', () => {
  it('stores what encodeChunk stores for the same bytes: a frame, or raw when it does not pay', () => {
    const group = new GroupBuffer();
    try {
      for (const [name, bytes] of [
        ['text', textBytes(3, 1 << 20)],
        ['random', randomBytes(4, 256 * 1024)],
        ['zeros', new Uint8Array(200_000)],
        ['one byte', new Uint8Array([7])],
        ['text over two blocks', textBytes(5, (1 << 20) + 12_345)],
      ] as const) {
        group.clear();
        // In uneven pieces, as members come.
        for (let at = 0; at < bytes.length; at += 70_001) group.add(bytes.subarray(at, at + 70_001));
        expect(group.length, name).toBe(bytes.length);
        const frame = group.compress(3);
        const want = encodeChunk(bytes, 3);
        if (want.codec === CODEC_RAW) expect(frame, name).toBeUndefined();
        else {
          expect(want.codec).toBe(CODEC_ZSTD);
          expect(Buffer.from(frame!).equals(Buffer.from(want.payload)), name).toBe(true);
          expect(Buffer.from(decompress(frame!, bytes.length)).equals(Buffer.from(bytes)), name).toBe(true);
        }
        if (bytes.length >= 105) expect(Buffer.from(group.slice(5, 100)).equals(Buffer.from(bytes.subarray(5, 105))), name).toBe(true);
        else expect(() => group.slice(0, bytes.length + 1)).toThrow(InvalidInputError);
      }
      expect(() => group.compress(0)).toThrow(InvalidInputError);
    } finally {
      group.dispose();
    }
  });
});
