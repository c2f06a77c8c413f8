/**
 * Deduplication before compression (decision 0018): the table of known chunk keys shared with
 * ingest workers, the worker side that skips compressing known chunks, and the store staying
 * correct when the table is wrong.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { CODEC_RAW, CODEC_ZSTD, Ingester, blake3, decompress, type IngestChunk } from '@kura/core';
import type { StreamChunk } from '../src/ingest/chunk-groups.js';
import { describe, expect, it } from 'vitest';
import { KnownChunks } from '../src/ingest/known-chunks.js';
import { knownChunks, type StoreContext } from '../src/store-context.js';
import type { FromWorker } from '../src/ingest/protocol.js';
import { serveIngest } from '../src/ingest/serve.js';
import { concatBytes, expectSameBytes, newStore, randomBytes, reopen, tempDir, textBytes } from './helpers/store.js';

const hexKey = (b: Uint8Array) => blake3(b);
const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const keyBytes = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));

describe('KnownChunks', () => {
  it('answers for the keys added, by hex or bytes, and forgets them on clear', () => {
    const k = new KnownChunks();
    const keys = Array.from({ length: 2000 }, (_, i) => hexKey(new TextEncoder().encode(`chunk ${i}`)));
    keys.slice(0, 1000).forEach((key) => k.add(key));
    keys.slice(1000, 1500).forEach((key) => k.addBytes(keyBytes(key)));
    k.add(keys[0]!); // twice: counted once
    expect(k.size).toBe(1500);
    expect(keys.slice(0, 1500).every((key) => k.has(key))).toBe(true);
    expect(keys.slice(1500).filter((key) => k.has(key))).toEqual([]);
    // A key whose fingerprint is all zeros is still found (0,0 marks an empty slot).
    const zero = '0'.repeat(64);
    expect(k.has(zero)).toBe(false);
    k.addBytes(new Uint8Array(32));
    expect(k.has(zero)).toBe(true);
    k.clear();
    expect(k.size).toBe(0);
    expect(keys.some((key) => k.has(key))).toBe(false);
  });

  it('grows from a small table, keeps every key, and a worker holding an older table still finds the keys it had', () => {
    const k = new KnownChunks();
    const first = k.buffer;
    expect(first.byteLength).toBe(8 + 8 * KnownChunks.INITIAL_SLOTS);
    const keys = Array.from({ length: KnownChunks.INITIAL_SLOTS }, (_, i) => hexKey(new TextEncoder().encode(`grow ${i}`)));
    keys.forEach((key) => k.add(key));
    expect(k.buffer).not.toBe(first);
    expect(k.buffer.byteLength).toBe(8 + 8 * 4 * KnownChunks.INITIAL_SLOTS);
    expect(k.size).toBe(keys.length);
    expect(keys.every((key) => k.has(key))).toBe(true);
    const old = new KnownChunks(first); // what a worker sent the first table sees
    const before = keys.slice(0, KnownChunks.INITIAL_SLOTS / 2);
    expect(before.every((key) => old.has(key))).toBe(true);
    expect(old.has(keys.at(-1)!)).toBe(false);
  });

  it('stops adding at half its largest size, and every key it took stays findable', () => {
    const k = new KnownChunks();
    const half = KnownChunks.MAX_SLOTS / 2;
    const key = (i: number) => (i * 2654435761 >>> 0).toString(16).padStart(8, '0') + i.toString(16).padStart(8, '0') + '0'.repeat(48);
    for (let i = 0; i < half + 1000; i++) k.add(key(i));
    expect(k.full).toBe(true);
    expect(k.size).toBeLessThanOrEqual(half);
    let found = 0;
    for (let i = 0; i < half + 1000; i++) if (k.has(key(i))) found++;
    expect(found).toBe(k.size);
  });

  it('is shared: a worker thread sees the keys this thread adds', async () => {
    const k = new KnownChunks();
    const present = hexKey(new Uint8Array([1, 2, 3]));
    const absent = hexKey(new Uint8Array([4, 5, 6]));
    k.add(present);
    const url = new URL('../dist/ingest/known-chunks.js', import.meta.url).href;
    const w = new Worker(
      `import('${url}').then(({ KnownChunks }) => { const { parentPort, workerData } = require('node:worker_threads'); const k = new KnownChunks(workerData.table); parentPort.postMessage([k.has(workerData.present), k.has(workerData.absent), k.size]); });`,
      { eval: true, workerData: { table: k.buffer, present, absent } },
    );
    const answer = await new Promise((resolve, reject) => w.once('message', resolve).once('error', reject));
    await w.terminate();
    expect(answer).toEqual([true, false, 1]);
  });
});

describe('the ingest worker with a known-chunks table', () => {
  /** Runs serveIngest in this thread over `bytes`; returns the chunks it posted. */
  async function ingestWith(known: KnownChunks | undefined, bytes: Uint8Array): Promise<IngestChunk[]> {
    const chunks: IngestChunk[] = [];
    let handle!: ReturnType<typeof serveIngest<string>>;
    const done = new Promise<void>((resolve, reject) => {
      handle = serveIngest<string>({
        post: (m: FromWorker) => {
          if (m.type === 'chunks') {
            chunks.push(...m.chunks);
            handle({ type: 'ack', id: m.id });
          } else if (m.type === 'end') resolve();
          else if (m.type === 'error') reject(new Error(m.message));
        },
        open: () => [],
        readWhole: () => new Uint8Array(0),
      });
    });
    handle({ type: 'bytes', id: 1, bytes, options: { chunking: { min: 1024, avg: 4096, max: 16384 }, compression: 3 }, ...(known ? { known: known.buffer } : {}) });
    await done;
    return chunks;
  }

  it('sends chunks the store holds raw and alone, and compresses the others in groups (chunk-groups.ts)', async () => {
    const data = concatBytes([textBytes(1, 120_000), randomBytes(2, 30_000), textBytes(3, 80_000)]);
    const fused = await ingestWith(undefined, data);
    const known = new KnownChunks();
    const held = new Set(fused.filter((_, i) => i % 2 === 0).map((c) => c.key));
    held.forEach((key) => known.add(key));
    const split = await ingestWith(known, data);
    expect(split.map((c) => [c.offset, c.length, c.key])).toEqual(fused.map((c) => [c.offset, c.length, c.key]));
    let grouped = 0;
    split.forEach((c: StreamChunk, i) => {
      const raw = data.subarray(c.offset, c.offset + c.length);
      if (held.has(c.key)) {
        expect([c.codec, c.group]).toEqual([CODEC_RAW, undefined]);
        expectSameBytes(c.payload, raw, `held chunk ${i}`);
      } else if (c.group) {
        // A member: its bytes are at its place in its group's frame, with no held chunk among them.
        expect(c.group.members.map((m) => m.key)).toContain(c.key);
        expect(c.group.members.some((m) => held.has(m.key))).toBe(false);
        expectSameBytes(decompress(c.group.frame, c.group.rawLen).subarray(c.at!, c.at! + c.length), raw, `member ${i}`);
        grouped++;
      } else {
        expectSameBytes(c.codec === CODEC_ZSTD ? decompress(c.payload, c.length) : c.payload, raw, `new chunk ${i}`);
      }
    });
    expect(grouped).toBeGreaterThan(10);
    expect(held.size).toBeGreaterThan(3);
  });
});

describe('a store whose workers skip compressing known chunks', () => {
  const file = (name: string, bytes: Uint8Array) => {
    const path = join(tempDir(), name);
    writeFileSync(path, bytes);
    return path;
  };
  const putFile = async (store: Awaited<ReturnType<typeof newStore>>['store'], path: string) => {
    for await (const o of store.putFiles([{ path }])) {
      if (o.error) throw o.error;
      return o.result!;
    }
    throw new Error('no outcome');
  };
  const table = (store: object) => knownChunks((store as unknown as { context(): StoreContext }).context());

  it('re-adding a changed file in a new process stores only the changed chunks, compressed', async () => {
    const { store, dir } = await newStore();
    const v1 = textBytes(11, 3 << 20);
    const first = await putFile(store, file('v1.txt', v1));
    await store.close();
    const again = await reopen(dir);
    const v2 = v1.slice();
    v2[1_500_000] ^= 0xff;
    const before = await again.stats();
    // Opening does not load the table; the first use does, in pages, while puts go on.
    const known = table(again)!;
    await new Promise((r) => setTimeout(r, 100));
    expect(known.size).toBe(before.chunks);
    const second = await putFile(again, file('v2.txt', v2));
    expect(second.digest).toBe(sha(v2));
    expect(second.newChunks).toBeLessThanOrEqual(3);
    expect(second.chunks).toBe(first.chunks);
    const after = await again.stats();
    // The new chunks went in compressed: text takes well under half its size.
    expect(after.storedBytes - before.storedBytes).toBeLessThan((after.uniqueChunkBytes - before.uniqueChunkBytes) / 2);
    expectSameBytes(await again.getBytes(second.digest), v2);
    expect((await again.verify()).damagedChunks).toEqual([]);
  });

  it('a chunk wrongly believed stored is kept raw, reads back exactly and verifies', async () => {
    const { store } = await newStore();
    const known = table(store)!;
    const data = textBytes(21, 600_000);
    // Every chunk of `data` claimed known though the store has none of them.
    const ingester = new Ingester({ chunking: store.ingestOptions().chunking, compression: false });
    for (const c of [...ingester.update(data), ...ingester.finish()]) known.add(c.key);
    const r = await putFile(store, file('lied.txt', data));
    expect(r.newChunks).toBe(r.chunks);
    const stats = await store.stats();
    expect(stats.storedBytes).toBeGreaterThanOrEqual(data.length); // raw, as the worker sent it
    expectSameBytes(await store.getBytes(r.digest), data);
    expect((await store.verify()).damagedChunks).toEqual([]);
  });

  it('after GC deleted chunks, putting them again stores them compressed (the table starts over)', async () => {
    const { store } = await newStore();
    const data = textBytes(31, 1 << 20);
    const path = file('gc.txt', data);
    const r = await putFile(store, path);
    expect(table(store)!.size).toBeGreaterThan(0);
    await store.delete(r.digest);
    await store.gc();
    expect((await store.stats()).storedBytes).toBe(0);
    await putFile(store, path);
    const stats = await store.stats();
    expect(stats.storedBytes).toBeLessThan(data.length / 2);
    expectSameBytes(await store.getBytes(r.digest), data);
  });
});
