import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Chunker, InvalidInputError, InvalidStateError, chunk, chunkLengths, chunkStream, resolveChunkParams } from '../src/node.js';
import { randomBytes, sharedPath, sharedVector, splitAt, textBytes } from './helpers/data.js';

const image = readFileSync(sharedPath('SekienAkashita.jpg'));
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

function streamLengths(pieces: Uint8Array[], params: object): number[] {
  const c = new Chunker(params);
  const out = pieces.flatMap((p) => [...c.update(p)]);
  return [...out, ...c.finish()];
}

describe('FastCDC 2020 known answers (shared/test-vectors/fastcdc2020.json)', () => {
  const vectors = sharedVector('fastcdc2020.json');

  it.each(vectors.cases.map((c: any) => [c.seed, c]))('seed %s', (_seed, c: any) => {
    expect(c.normalization).toBe(2);
    // The file's max (65534) predates Kura's max = 4 * avg rule; no expected chunk reaches
    // either bound, so Kura's parameters must give exactly these chunks.
    expect(c.chunks.every((x: any) => x.length < c.max)).toBe(true);
    const got = chunk(image, { avg: c.avg, seed: c.seed }).map((s) => ({
      offset: s.offset,
      length: s.length,
      sha256: sha(image.subarray(s.offset, s.offset + s.length)),
    }));
    expect(got).toEqual(c.chunks);
    expect(streamLengths([...image.subarray(0, 5000)].map((b) => Uint8Array.of(b)).concat([image.subarray(5000)]), { avg: c.avg, seed: c.seed }))
      .toEqual(c.chunks.map((x: any) => x.length));
  });
});

describe('chunking', () => {
  it('covers the input exactly, with sizes within [min, max] except the last', () => {
    const data = randomBytes(1, 3_000_000); // > the 1 MiB wasm block: the streamed path
    const lengths = [...chunkLengths(data)];
    expect(lengths.reduce((a, b) => a + b, 0)).toBe(data.length);
    lengths.slice(0, -1).forEach((l) => {
      expect(l).toBeGreaterThanOrEqual(4096);
      expect(l).toBeLessThanOrEqual(65536);
    });
    const mean = data.length / lengths.length;
    expect(mean).toBeGreaterThan(8192);
    expect(mean).toBeLessThan(32768);
  });

  it('gives the same boundaries however the input is split (property)', () => {
    const data = textBytes(7, 40_000);
    const params = { avg: 1024, seed: 99 };
    const expected = [...chunkLengths(data, params)];
    fc.assert(
      fc.property(fc.array(fc.nat(data.length), { maxLength: 60 }), (cuts) => {
        expect(streamLengths(splitAt(data, cuts), params)).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });

  it('gives the same boundaries fed one byte at a time', () => {
    const data = randomBytes(3, 20_000);
    const params = { avg: 512 };
    expect(streamLengths([...data].map((b) => Uint8Array.of(b)), params)).toEqual([...chunkLengths(data, params)]);
  });

  it('the seed changes boundaries; 64-bit seeds are accepted', () => {
    const data = randomBytes(4, 200_000);
    const a = [...chunkLengths(data, { seed: 0 })];
    const b = [...chunkLengths(data, { seed: 2n ** 64n - 1n })];
    expect(b).not.toEqual(a);
    expect(b.reduce((x, y) => x + y, 0)).toBe(data.length);
  });

  it('streams a web ReadableStream and a Node Readable', async () => {
    const data = textBytes(5, 500_000);
    const expected = chunk(data);
    const pieces = splitAt(data, [1, 70_000, 70_001, 300_000]);
    const web = new ReadableStream<Uint8Array>({
      start(controller) {
        pieces.forEach((p) => controller.enqueue(p));
        controller.close();
      },
    });
    expect(await collect(chunkStream(web))).toEqual(expected);
    expect(await collect(chunkStream(Readable.from(pieces.map((p) => Buffer.from(p)))))).toEqual(expected);
  });

  it('an empty input has no chunks', async () => {
    expect([...chunkLengths(new Uint8Array(0))]).toEqual([]);
    expect(await collect(chunkStream([]))).toEqual([]);
  });
});

describe('chunking parameters are validated with the rule in the message', () => {
  it.each([
    [{ avg: 12288 }, 'chunking.avg', /power of two/],
    [{ avg: 128 }, 'chunking.avg', /between 256 and 4194304/],
    [{ avg: 8 << 20 }, 'chunking.avg', /between/],
    [{ avg: 16384, min: 2048 }, 'chunking.min', /avg \/ 4 = 4096/],
    [{ avg: 16384, max: 65534 }, 'chunking.max', /4 \* avg = 65536/],
    [{ avg: 1.5 }, 'chunking.avg', /positive integer/],
    [{ avg: '16384' }, 'chunking.avg', /positive integer/],
    [{ seed: -1 }, 'chunking.seed', /\[0, 2\^64\)/],
    [{ seed: 2n ** 64n }, 'chunking.seed', /\[0, 2\^64\)/],
    [{ seed: 0.5 }, 'chunking.seed', /integer/],
  ])('%o', (params, field, message) => {
    const run = () => chunkLengths(new Uint8Array(10), params as never);
    expect(run).toThrow(InvalidInputError);
    expect(run).toThrow(message);
    expect(run).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', field }));
  });

  it('resolved parameters are frozen and taken again as they are; a copy is checked again', () => {
    const p = resolveChunkParams({ avg: 1024, seed: 7 });
    expect(p).toEqual({ min: 256, avg: 1024, max: 4096, seed: 7n });
    expect(Object.isFrozen(p)).toBe(true);
    expect(resolveChunkParams(p)).toBe(p);
    // A copy changed after resolving is not one this module made: it is checked like any other.
    expect(() => resolveChunkParams({ ...p, min: 1 } as never)).toThrow(/avg \/ 4 = 256/);
    expect(resolveChunkParams({ ...p })).not.toBe(p);
    expect(resolveChunkParams({ ...p })).toEqual(p);
  });

  it('a finished chunker refuses more input', () => {
    const c = new Chunker();
    c.finish();
    expect(() => c.update(new Uint8Array(1))).toThrow(InvalidStateError);
  });

  it('rejects sources that are not bytes', async () => {
    await expect(collect(chunkStream('text' as never))).rejects.toThrow(InvalidInputError);
    await expect(collect(chunkStream([new Uint8Array(1), 'x'] as never))).rejects.toThrow(/stream piece/);
  });
});
