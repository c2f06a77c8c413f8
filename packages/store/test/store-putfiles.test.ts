import { createHash } from 'node:crypto';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectSameBytes, newStore, randomBytes, tempDir, textBytes } from './helpers/store.js';

const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

describe('putFiles: ingest on worker threads', () => {
  it('stores every file, yields outcomes in input order, and matches put()', async () => {
    const { store } = await newStore();
    const dir = tempDir();
    const files = Array.from({ length: 9 }, (_, i) => {
      const path = join(dir, `f${i}`);
      writeFileSync(path, i % 3 === 0 ? randomBytes(i, 300_000 + i) : textBytes(i, 200_000 * i + 1));
      return { path, meta: { path: `f${i}`, tags: ['batch'] } };
    });
    files.splice(4, 0, { path: join(dir, 'missing'), meta: { path: 'missing', tags: ['batch'] } });
    const outcomes = [];
    for await (const o of store.putFiles(files, { workers: 2 })) outcomes.push(o);
    expect(outcomes.map((o) => o.path)).toEqual(files.map((f) => f.path));
    for (const o of outcomes) {
      if (o.path.endsWith('missing')) {
        expect(o.error).toMatchObject({ code: 'ENOENT' });
        continue;
      }
      const bytes = readFileSync(o.path);
      expect(o.result!.digest).toBe(sha(bytes));
      expectSameBytes(await store.getBytes(o.result!.digest), bytes);
    }
    // The same files through put() on this thread: identical chunks, nothing new stored.
    for (const f of files.filter((f) => !f.path.endsWith('missing'))) {
      expect(await store.put(f.path)).toMatchObject({ newChunks: 0, newBytesStored: 0 });
    }
    // Committed in input order, whatever order the workers finished in.
    expect((await store.list({ tag: 'batch' })).items.map((i) => i.path)).toEqual(files.map((f) => f.meta.path).filter((p) => p !== 'missing'));
    expect((await store.verify()).ok).toBe(true);
  });

  it('batches small files yet keeps input order for outcomes and commits, with links, errors and large files among them', async () => {
    const { store } = await newStore();
    const dir = tempDir();
    type F = { path: string; meta: { path: string; tags: unknown[] } };
    const files: F[] = [];
    const add = (name: string, bytes?: Uint8Array, tags: unknown[] = ['mixed']) => {
      const path = join(dir, name);
      if (bytes) writeFileSync(path, bytes);
      files.push({ path, meta: { path: name, tags } });
    };
    // 150 small files (three batches' worth) with a large file, a missing path, a link, an
    // empty file and a put refused for its metadata at different places among them.
    for (let i = 0; i < 150; i++) {
      if (i === 20) add('large.bin', randomBytes(7, 300_000));
      if (i === 70) add('missing');
      if (i === 90) {
        writeFileSync(join(dir, 'outside.txt'), textBytes(99, 1234)); // bytes no other file has
        symlinkSync(join(dir, 'outside.txt'), join(dir, 'link.txt'));
        add('link.txt');
      }
      if (i === 100) add('empty', new Uint8Array(0));
      if (i === 110) add('bad-meta.txt', textBytes(5, 100), [42]);
      if (i === 120) add('bad-meta-large.bin', randomBytes(8, 400_000), [42]); // its worker is told to stop
      add(`s${i}.txt`, textBytes(100 + i, 200 + i * 37));
    }
    const outcomes = [];
    for await (const o of store.putFiles(files, { workers: 2 })) outcomes.push(o);
    expect(outcomes.map((o) => o.path)).toEqual(files.map((f) => f.path));
    const failed = outcomes.filter((o) => o.error).map((o) => o.path.slice(dir.length + 1));
    expect(failed).toEqual(['missing', 'bad-meta.txt', 'bad-meta-large.bin']);
    expect(outcomes.find((o) => o.path.endsWith('bad-meta.txt'))!.error).toMatchObject({ code: 'INVALID_INPUT' });
    for (const o of outcomes.filter((o) => !o.error)) {
      const bytes = readFileSync(o.path); // follows the link, as putFiles must
      expect(o.result!.digest).toBe(sha(bytes));
      expectSameBytes(await store.getBytes(o.result!.digest), bytes);
    }
    // Committed in input order across batches and the files between them.
    const listed = [];
    for (let cursor: string | undefined, page; (page = await store.list({ tag: 'mixed', limit: 50, ...(cursor ? { cursor } : {}) })); ) {
      listed.push(...page.items.map((d) => d.path));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(listed).toEqual(files.filter((f) => !['missing', 'bad-meta.txt', 'bad-meta-large.bin'].includes(f.meta.path)).map((f) => f.meta.path));
    expect((await store.verify()).ok).toBe(true);
  });

  it('uses the store parameters (chunking and compression) in the workers', async () => {
    const { store } = await newStore({ chunking: { avg: 1024, seed: 77 }, compression: false });
    const path = join(tempDir(), 'doc');
    const data = textBytes(3, 100_000);
    writeFileSync(path, data);
    const outcomes = [];
    for await (const x of store.putFiles([{ path }], { workers: 1 })) outcomes.push(x); // no Array.fromAsync in Node 20
    const o = outcomes[0];
    const s = await store.stats();
    expect(o!.result!.chunks).toBeGreaterThan(50); // avg 1 KiB, not the default 16 KiB
    expect(s.storedBytes).toBe(s.uniqueChunkBytes + 48 * s.chunks); // stored raw
  });
});

describe('large buffer puts on worker threads', () => {
  it('give the same documents as the calling thread, for views at any offset', async () => {
    const { store: workers } = await newStore();
    const { store: here, dir } = await newStore();
    await here.close();
    const { reopen } = await import('./helpers/store.js');
    const local = await reopen(dir, { ingestWorkers: 0 });
    const big = textBytes(21, 3_000_000);
    for (const view of [big, big.subarray(1, 2_000_001), big.subarray(700_000)]) {
      const [a, b] = [await workers.put(view), await local.put(view)];
      expect(a).toEqual(b);
      expect(a.digest).toBe(sha(view));
      expectSameBytes(await workers.getBytes(a.digest), view);
    }
    // Concurrent puts through the pool commit every document intact.
    const docs = Array.from({ length: 12 }, (_, i) => randomBytes(300 + i, 100_000 + i));
    const results = await Promise.all(docs.map((d) => workers.put(d)));
    results.forEach((r, i) => expect(r.digest).toBe(sha(docs[i]!)));
    expect((await workers.verify()).ok).toBe(true);
  });
});
