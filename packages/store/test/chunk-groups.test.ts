/**
 * The grouper of a put's new chunks (ingest/chunk-groups.ts, decision 0063): what it holds back
 * while a group is open is bounded, whatever the stream — a run of one repeated chunk (a disk
 * image's zeros) used to be held whole until the document ended — and order and bytes survive.
 */
import { CODEC_RAW, Ingester, blake3, decompress, type IngestChunk } from '@kura/core';
import { describe, expect, it } from 'vitest';
import { ChunkGrouper, type StreamChunk } from '../src/ingest/chunk-groups.js';
import { collect, newStore, randomBytes, textBytes } from './helpers/store.js';

const TARGET = 64 * 1024;
const chunk = (bytes: Uint8Array, offset: number): IngestChunk => ({ offset, length: bytes.length, key: blake3(bytes).slice(7), codec: CODEC_RAW, payload: bytes });

/** A member's bytes, from its group's frame or its own payload. */
function bytesOf(c: StreamChunk): Uint8Array {
  if (!c.group) return c.codec === CODEC_RAW ? c.payload : decompress(c.payload, c.length);
  return decompress(c.group.frame, c.group.rawLen).subarray(c.at!, c.at! + c.length);
}

describe('ChunkGrouper', () => {
  it('holds at most four targets while a group is open, however often its member repeats', () => {
    const zeros = new Uint8Array(4096);
    const g = new ChunkGrouper(3, () => false, true, TARGET);
    const out: StreamChunk[] = [];
    let held = 0;
    let mostHeld = 0;
    const zero = chunk(zeros, 0);
    for (let i = 0; i < 1000; i++) {
      const done = g.push([{ ...zero, offset: i * zeros.length }]);
      out.push(...done);
      held += zeros.length - done.reduce((n, c) => n + c.length, 0);
      mostHeld = Math.max(mostHeld, held);
    }
    out.push(...g.finish());
    expect(mostHeld).toBeLessThanOrEqual(4 * TARGET);
    expect(out.map((c) => c.offset)).toEqual(Array.from({ length: 1000 }, (_, i) => i * zeros.length));
    expect(out.every((c) => Buffer.from(bytesOf(c)).equals(zeros))).toBe(true);
  });

  it('still groups new chunks up to its target between known ones', () => {
    const known = new Set<string>();
    const g = new ChunkGrouper(3, (k) => known.has(k), true, TARGET);
    const chunks = Array.from({ length: 40 }, (_, i) => chunk(textBytes(i, 4096), i * 4096));
    for (const c of chunks.filter((_, i) => i % 2)) known.add(c.key); // every other chunk known
    const out = [...g.push(chunks), ...g.finish()];
    expect(out.map((c) => c.offset)).toEqual(chunks.map((c) => c.offset));
    const groups = new Set(out.filter((c) => c.group).map((c) => c.group));
    expect(groups.size).toBe(2); // 16 new chunks fill one 64 KiB group, 4 more another
    out.forEach((c, i) => expect(bytesOf(c)).toEqual(textBytes(i, 4096)));
  });
});

describe('ChunkGrouper fed an ingester\'s deferred chunks (a worker\'s path)', () => {
  it('gives the stream it gives the same chunks copied out: order, codecs, groups and frames', () => {
    // Text (groups), random bytes (a group not worth a frame: members raw), zeros (one chunk
    // repeated: held raw), text again, and some chunks the store is said to hold.
    const data = Buffer.concat([textBytes(1, 300_000), randomBytes(2, 150_000), new Uint8Array(100_000), textBytes(3, 200_000)]);
    const options = { chunking: { avg: 4096 }, compression: false as const };
    const known = new Set(new Ingester(options).update(textBytes(1, 300_000)).filter((_, i) => i % 5 === 2).map((c) => c.key));
    const pieces = [data.subarray(0, 123_457), data.subarray(123_457, 700_000), data.subarray(700_000)];

    const copied = new Ingester(options);
    const a = new ChunkGrouper(3, (k) => known.has(k), true, TARGET);
    const want = [...pieces.flatMap((p) => a.push(copied.update(p))), ...a.push(copied.finish()), ...a.finish()];
    a.dispose();

    const deferred = new Ingester(options);
    const b = new ChunkGrouper(3, (k) => known.has(k), true, TARGET);
    let got: StreamChunk[];
    try {
      got = [...pieces.flatMap((p) => b.push(deferred.updateDeferred(p), deferred)), ...b.push(deferred.finishDeferred(), deferred), ...b.finish()];
    } finally {
      deferred.dispose();
      b.dispose();
    }
    const shape = (c: StreamChunk) => ({ offset: c.offset, key: c.key, codec: c.codec, at: c.at, members: c.group?.members.length, payload: Buffer.from(c.payload).toString('base64'), frame: c.group && Buffer.from(c.group.frame).toString('base64') });
    expect(got.map(shape)).toEqual(want.map(shape));
    expect(new Set(got.filter((c) => c.group).map((c) => c.group)).size).toBeGreaterThan(3);
    expect(got.some((c) => !c.group && c.codec === CODEC_RAW && c.payload.length > 0 && !known.has(c.key))).toBe(true); // (the random bytes, raw)
    expect(Buffer.concat(got.map(bytesOf)).equals(data)).toBe(true);
  });
});

describe('a put of a long run of one repeated chunk', () => {
  it('stores and reads back the same bytes (a chunk between runs, and runs of zeros)', { timeout: 60_000 }, async () => {
    const { store } = await newStore();
    const parts = [new Uint8Array(48 << 20), randomBytes(7, 100_000), new Uint8Array(24 << 20)];
    async function* stream() {
      for (const p of parts) for (let at = 0; at < p.length; at += 1 << 20) yield p.subarray(at, at + (1 << 20));
    }
    const r = await store.put(stream(), { path: 'disk.img' });
    const back = await collect(store.get(r.digest));
    expect(back.length).toBe(parts.reduce((n, p) => n + p.length, 0));
    expect(back.subarray(48 << 20, (48 << 20) + 100_000)).toEqual(parts[1]);
    expect(back.subarray(0, 48 << 20).some((b) => b !== 0)).toBe(false);
    expect((await store.verify()).ok).toBe(true);
  });
});
