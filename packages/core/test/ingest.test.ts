import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CODEC_RAW,
  CODEC_ZSTD,
  Ingester,
  InvalidInputError,
  InvalidStateError,
  blake3,
  chunkLengths,
  decompress,
  encodeChunk,
  ingest,
  type IngestChunk,
  type IngestOptions,
} from '../src/node.js';
import { concatBytes, expectSameBytes, randomBytes, splitAt, textBytes } from './helpers/data.js';

const nodeSha256 = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

async function run(pieces: Uint8Array[], options?: IngestOptions) {
  const chunks: IngestChunk[] = [];
  const it = ingest(pieces, options);
  for (;;) {
    const r = await it.next();
    if (r.done) return { chunks, result: r.value };
    chunks.push(r.value);
  }
}

describe('fused ingest kernel', () => {
  const data = concatBytes([textBytes(1, 400_000), randomBytes(2, 200_000), new Uint8Array(100_000)]);

  it.each(['wasm', 'native'] as const)('agrees with the separate operations (document hasher: %s)', async (hasher) => {
    const { chunks, result } = await run([data], {
      chunking: { avg: 4096 },
      ...(hasher === 'wasm' ? { documentHasher: 'wasm' } : {}),
    });
    expect(result).toEqual({ digest: nodeSha256(data), size: data.length, chunks: chunks.length });
    expect(chunks.map((c) => c.length)).toEqual([...chunkLengths(data, { avg: 4096 })]);
    const codecs = new Set<number>();
    let offset = 0;
    for (const c of chunks) {
      expect(c.offset).toBe(offset);
      const raw = data.subarray(c.offset, c.offset + c.length);
      expect(c.key).toBe(blake3(raw));
      codecs.add(c.codec);
      if (c.codec === CODEC_ZSTD) {
        expect(c.payload.length).toBeLessThan(raw.length);
        expectSameBytes(decompress(c.payload, c.length), raw);
      } else {
        expectSameBytes(c.payload, raw);
      }
      offset += c.length;
    }
    expect(codecs).toEqual(new Set([CODEC_RAW, CODEC_ZSTD])); // text compresses, random does not
  });

  it('without compression every payload is the raw chunk', async () => {
    const { chunks } = await run([data], { compression: false });
    expect(chunks.every((c) => c.codec === CODEC_RAW)).toBe(true);
    expectSameBytes(concatBytes(chunks.map((c) => c.payload)), data);
  });

  it('any split gives the same chunks and digest (property)', async () => {
    const doc = textBytes(3, 30_000);
    const options: IngestOptions = { chunking: { avg: 1024, seed: 5 }, compression: 1, documentHasher: 'wasm' };
    const expected = await run([doc], options);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(doc.length), { maxLength: 40 }), async (cuts) => {
        const got = await run(splitAt(doc, cuts), options);
        expect(got.result).toEqual(expected.result);
        expect(got.chunks).toEqual(expected.chunks);
      }),
      { numRuns: 60 },
    );
  });

  it('ingests a multi-megabyte document fed in odd pieces', async () => {
    const big = randomBytes(8, 5 * (1 << 20) + 3);
    const { chunks, result } = await run(splitAt(big, [1, 999_999, 3_000_001]));
    expect(result.digest).toBe(nodeSha256(big));
    expect(chunks.reduce((n, c) => n + c.length, 0)).toBe(big.length);
  });

  it('an empty document has no chunks and the empty digest', async () => {
    const { chunks, result } = await run([]);
    expect(chunks).toEqual([]);
    expect(result).toEqual({ digest: nodeSha256(new Uint8Array(0)), size: 0, chunks: 0 });
  });

  it('validates options before work and refuses use after finish', () => {
    expect(() => new Ingester({ compression: 0 })).toThrow(InvalidInputError);
    expect(() => new Ingester({ compression: 40 })).toThrow(expect.objectContaining({ field: 'level' }));
    expect(() => new Ingester({ chunking: { avg: 1000 } })).toThrow(expect.objectContaining({ field: 'chunking.avg' }));
    const ing = new Ingester();
    ing.finish();
    expect(ing.result?.size).toBe(0);
    expect(() => ing.update(new Uint8Array(1))).toThrow(InvalidStateError);
    expect(() => ing.finish()).toThrow(InvalidStateError);
  });
});

describe('encodeChunk: compressing after deduplication', () => {
  it('turns each raw chunk into exactly the payload and codec the kernel emits', async () => {
    // Text, random (stored raw by the entropy check) and zeros, so both codecs are covered.
    const data = concatBytes([textBytes(5, 150_000), randomBytes(6, 60_000), new Uint8Array(40_000)]);
    const fused = await run([data], { compression: 3 });
    const raw = await run([data], { compression: false });
    expect(raw.chunks.map((c) => [c.offset, c.length, c.key])).toEqual(fused.chunks.map((c) => [c.offset, c.length, c.key]));
    const seen = new Set<number>();
    raw.chunks.forEach((r, i) => {
      const f = fused.chunks[i]!;
      const e = encodeChunk(r.payload, 3);
      expect(e.codec).toBe(f.codec);
      expectSameBytes(e.payload, f.payload, `chunk ${i}`);
      if (e.codec === CODEC_ZSTD) expectSameBytes(decompress(e.payload, r.length), r.payload, `chunk ${i} round trip`);
      else expect(e.payload).toBe(r.payload); // raw: the same array, no copy
      seen.add(e.codec);
    });
    expect([...seen].sort()).toEqual([CODEC_RAW, CODEC_ZSTD]);
  });

  it('refuses a bad level', () => {
    expect(() => encodeChunk(new Uint8Array(10), 0)).toThrow(InvalidInputError);
  });
});
