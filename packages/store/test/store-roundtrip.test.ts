import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import { SCHEMA_VERSION } from '../src/catalog/schema.js';
import { collect, concatBytes, expectSameBytes, newStore, randomBytes, reopen, splitAt, tempDir, textBytes, batchEnded } from './helpers/store.js';

const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const MiB = 1 << 20;

describe('put / get round trips (real SQLite and packs on disk)', () => {
  it('at many sizes: empty, one byte, chunk edges, multi-chunk', async () => {
    const { store, dir } = await newStore({ durability: 'full' });
    const sizes = [0, 1, 4095, 4096, 4097, 16384, 65535, 65536, 65537, 300_001, 3 * MiB + 7];
    const digests: string[] = [];
    for (const [i, n] of sizes.entries()) {
      const data = i % 2 ? textBytes(i, n) : randomBytes(i, n);
      const r = await store.put(data);
      expect(r.digest).toBe(sha(data));
      expect(r.size).toBe(n);
      expectSameBytes(await store.getBytes(r.digest), data, `size ${n}`);
      expectSameBytes(await collect(store.get(r.digest)), data, `stream size ${n}`);
      digests.push(r.digest);
    }
    await store.close();
    const again = await reopen(dir);
    for (const [i, n] of sizes.entries()) {
      const data = i % 2 ? textBytes(i, n) : randomBytes(i, n);
      expectSameBytes(await again.getBytes(digests[i]!), data, `after reopen, size ${n}`);
    }
  });

  it('100 MiB streams through in bounded pieces', async () => {
    const { store } = await newStore();
    const piece = randomBytes(42, 4 * MiB);
    const pieces = Array.from({ length: 25 }, (_, i) => {
      const p = piece.slice();
      p[0] = i; // every 4 MiB piece differs
      return p;
    });
    const r = await store.put(Readable.from(pieces.map((p) => Buffer.from(p))));
    const whole = concatBytes(pieces);
    expect(r.digest).toBe(sha(whole));
    expect(r.size).toBe(100 * MiB);
    const h = createHash('sha256');
    let n = 0;
    for await (const p of store.get(r.digest)) {
      h.update(p);
      n += p.length;
    }
    expect(n).toBe(100 * MiB);
    expect(`sha256:${h.digest('hex')}`).toBe(r.digest);
  });

  it('accepts bytes, Node Readable, web ReadableStream, async iterables and file paths', async () => {
    const { store } = await newStore();
    const data = textBytes(3, 200_000);
    const digest = sha(data);
    const file = join(tempDir(), 'input.txt');
    writeFileSync(file, data);
    async function* gen() {
      yield* splitAt(data, [10, 100_000]);
    }
    const web = new ReadableStream<Uint8Array>({
      start(c) {
        splitAt(data, [5000]).forEach((p) => c.enqueue(p));
        c.close();
      },
    });
    for (const input of [data, Readable.from([Buffer.from(data)]), web, gen(), file]) {
      expect((await store.put(input)).digest).toBe(digest);
    }
    expect((await store.list()).items).toHaveLength(1);
  });

  it('rejects bad input with INVALID_INPUT and changes nothing', async () => {
    const { store } = await newStore();
    await expect(store.put(42 as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(store.put(new Uint8Array(1), { tags: [''] })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'tags.0' });
    await expect(store.put(new Uint8Array(1), { mediaType: 'nonsense' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(store.put(new Uint8Array(1), { bogus: 1 } as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(store.put(join(tempDir(), 'missing-file'))).rejects.toMatchObject({ code: 'NOT_FOUND' }); // (a KuraError naming the file: Node's ENOENT before, changed on purpose)
    await expect(store.getBytes('sha256:XYZ')).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'digest' });
    await expect(store.getBytes(`sha256:${'0'.repeat(64)}`)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await store.stats()).documents).toBe(0);
  });

  it('a put whose input stream fails commits nothing', async () => {
    const { store } = await newStore();
    async function* failing() {
      yield randomBytes(1, 200_000);
      throw new Error('source broke');
    }
    await expect(store.put(failing())).rejects.toThrow('source broke');
    expect((await store.stats()).documents).toBe(0);
    expect((await store.verify()).ok).toBe(true);
  });
});

describe('deduplication', () => {
  it('the same bytes twice store zero new chunk bytes', async () => {
    const { store } = await newStore();
    const data = randomBytes(7, 2 * MiB);
    const first = await store.put(data, { path: 'a.bin' });
    const second = await store.put(data, { path: 'b.bin' });
    expect(first.newChunks).toBe(first.chunks);
    expect(first.newBytesStored).toBeGreaterThan(data.length);
    expect(second).toMatchObject({ digest: first.digest, newChunks: 0, newBytesStored: 0 });
    // Two paths, one document (decision 0025).
    expect((await store.list()).items.map((e) => [e.path, e.digest])).toEqual([
      ['a.bin', first.digest],
      ['b.bin', first.digest],
    ]);
  });

  it('one byte changed in 10 MiB stores at most 3 new chunks', async () => {
    const { store } = await newStore();
    const data = randomBytes(8, 10 * MiB);
    await store.put(data);
    for (const at of [0, 123_457, 5 * MiB, 10 * MiB - 1]) {
      const edited = data.slice();
      edited[at]! ^= 0xff;
      const r = await store.put(edited);
      expect(r.newChunks, `edit at ${at}`).toBeGreaterThan(0);
      expect(r.newChunks, `edit at ${at}`).toBeLessThanOrEqual(3);
      expect(r.newBytesStored).toBeLessThan(3 * 65536 + 3 * 48 + 1);
    }
  });

  it('an insertion shifts no boundaries far from it', async () => {
    const { store } = await newStore();
    const data = textBytes(9, 4 * MiB);
    await store.put(data);
    const inserted = concatBytes([data.subarray(0, MiB), new TextEncoder().encode('INSERTED'), data.subarray(MiB)]);
    const r = await store.put(inserted);
    expect(r.newChunks).toBeLessThanOrEqual(3);
  });

  it('concurrent puts of overlapping data write each chunk once', async () => {
    const { store } = await newStore();
    const base = randomBytes(10, MiB);
    const docs = Array.from({ length: 8 }, (_, i) => concatBytes([base, randomBytes(100 + i, 50_000)]));
    const results = await Promise.all(docs.map((d) => store.put(d)));
    const stats = await store.stats();
    expect(stats.documents).toBe(8);
    expect(results.reduce((n, r) => n + r.newChunks, 0)).toBe(stats.chunks);
    expect((await store.verify()).ok).toBe(true);
  });
});

describe('range reads', () => {
  it('equal slices of the original for any range (property)', async () => {
    const { store } = await newStore({ chunking: { avg: 1024 } });
    const data = textBytes(11, 100_000);
    const { digest } = await store.put(data);
    await fc.assert(
      fc.asyncProperty(fc.nat(data.length), fc.nat(data.length), async (a, b) => {
        const [start, end] = a <= b ? [a, b] : [b, a];
        expectSameBytes(await store.getRange(digest, start, end), data.subarray(start, end));
      }),
      { numRuns: 100 },
    );
  });

  it('out-of-bounds ranges are INVALID_INPUT', async () => {
    const { store } = await newStore();
    const { digest } = await store.put(textBytes(1, 1000));
    for (const [s, e] of [[-1, 5], [5, 4], [0, 1001], [1.5, 3]] as const) {
      await expect(store.getRange(digest, s, e)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'range' });
    }
    expect((await store.getRange(digest, 1000, 1000)).length).toBe(0);
  });
});

describe('store configuration', () => {
  it('records its parameters and refuses to open with different ones', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 4096, seed: 'random' }, compression: 9 });
    expect(store.config.chunking.avg).toBe(4096);
    expect(store.config.chunking.seed).not.toBe(0n);
    expect(store.config.compression).toBe(9);
    await store.close();
    await expect(Store.open(dir, { chunking: { avg: 16384 } })).rejects.toMatchObject({ code: 'FORMAT_MISMATCH' });
    await expect(Store.open(dir, { chunking: { seed: 1 } })).rejects.toMatchObject({ code: 'FORMAT_MISMATCH' });
    const s = await reopen(dir, { chunking: { avg: 4096 } });
    expect(s.config.chunking.avg).toBe(4096);
  });

  it('is written as JSON as GET /v1/config writes it: the seed a string, an encrypted store\'s left out (it threw on the bigint)', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 4096, seed: 7 } });
    expect(JSON.parse(JSON.stringify(store.config))).toEqual({ ...store.config, chunking: { min: 1024, avg: 4096, max: 16384, seed: '7' } });
    expect(Object.keys(store.config)).not.toContain('toJSON');
    const sealed = await Store.init(join(dir, 'sealed'), { encryption: { kdf: { memoryKib: 64, passes: 1, lanes: 1 } }, password: 'pw', cacheDir: join(dir, 'cache') });
    try {
      const json = JSON.stringify(sealed.config);
      expect(JSON.parse(json).chunking).toEqual({ min: 4096, avg: 16384, max: 65536 });
      expect(json).not.toContain(sealed.config.chunking.seed.toString());
    } finally {
      await sealed.close();
    }
  });

  it('refuses a store written by a newer Kura', async () => {
    const { store, dir } = await newStore();
    await store.close();
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(join(dir, 'kura.db'));
    db.prepare("UPDATE config SET value = '99' WHERE key = 'format_version'").run();
    db.close();
    await expect(Store.open(dir)).rejects.toMatchObject({ code: 'FORMAT_MISMATCH' });
    const db2 = new Database(join(dir, 'kura.db'));
    db2.prepare("UPDATE config SET value = '1' WHERE key = 'format_version'").run();
    db2.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db2.close();
    await expect(Store.open(dir)).rejects.toMatchObject({ code: 'FORMAT_MISMATCH' });
  });

  it('init refuses a non-empty directory; open refuses a directory without a store', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), 'x');
    await expect(Store.init(dir)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(Store.open(tempDir())).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(Store.init(join(tempDir(), 's'), { chunking: { avg: 1000 } })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('a read-only store reads but refuses writes; a closed store refuses everything', async () => {
    const { store, dir } = await newStore();
    const { digest } = await store.put(textBytes(1, 5000));
    await batchEnded(); // another connection sees the put once the writer's batch ended (decision 0028)
    const ro = await reopen(dir, { readonly: true });
    expect(await ro.has(digest)).toBe(true);
    await expect(ro.put(new Uint8Array(1))).rejects.toMatchObject({ code: 'READ_ONLY' });
    await expect(ro.gc()).rejects.toMatchObject({ code: 'READ_ONLY' });
    await store.close();
    await expect(store.has(digest)).rejects.toMatchObject({ code: 'STORE_CLOSED' });
  });
});

describe('init leaves nothing behind when it fails', () => {
  it('bad options create no files; the directory can be used afterwards', async () => {
    const { existsSync, readdirSync } = await import('node:fs');
    const fresh = join(tempDir(), 'new-store');
    await expect(Store.init(fresh, { chunking: { avg: 1000 } })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(existsSync(fresh)).toBe(false);
    const empty = tempDir();
    await expect(Store.init(empty, { compression: 0 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(readdirSync(empty)).toEqual([]);
    const s = await Store.init(empty, { durability: 'full' });
    expect(s.config.durability).toBe('full');
    await s.close();
    const again = await reopen(empty);
    expect(again.config.durability).toBe('full'); // recorded, the default for later sessions
  });
});

describe('close', () => {
  it('lets puts in progress finish, then refuses new calls', async () => {
    const { store, dir } = await newStore();
    const data = randomBytes(77, 3 * MiB);
    async function* slow() {
      for (const piece of splitAt(data, [MiB, 2 * MiB])) {
        await new Promise((r) => setTimeout(r, 20));
        yield piece;
      }
    }
    const put = store.put(slow());
    const closing = store.close();
    await expect(store.put(new Uint8Array(1))).rejects.toMatchObject({ code: 'STORE_CLOSED' });
    const { digest } = await put;
    await closing;
    const again = await reopen(dir);
    expectSameBytes(await again.getBytes(digest), data);
  });
});
