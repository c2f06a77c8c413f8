import { describe, expect, it } from 'vitest';
import { newStore, textBytes } from './helpers/store.js';

const doc = (i: number) => textBytes(1000 + i, 2000 + i);

describe('metadata and tags', () => {
  it('put records path, media type, tags and key/value metadata; re-put at the path merges', async () => {
    const { store } = await newStore();
    const { digest } = await store.put(doc(1), { path: 'notes/a.md', mediaType: 'text/markdown', tags: ['x', 'y'], meta: { author: 'ann' } });
    await store.put(doc(1), { path: 'notes/a.md', tags: ['z'], meta: { lang: 'en' } });
    const info = await store.stat(digest);
    expect(await store.stat('notes/a.md')).toEqual(info);
    expect(info).toMatchObject({
      digest,
      size: 2001,
      version: 1,
      path: 'notes/a.md',
      mediaType: 'text/markdown',
      tags: ['x', 'y', 'z'],
      meta: { author: 'ann', lang: 'en' },
    });
    expect(Date.parse(info.createdAt)).toBeLessThanOrEqual(Date.parse(info.updatedAt));
  });

  it('setMeta sets and deletes keys; tags are added and removed', async () => {
    const { store } = await newStore();
    const { digest } = await store.put(doc(2), { meta: { a: '1', b: '2' }, tags: ['t1'] });
    await store.setMeta(digest, { a: 'one', b: null, c: '3' });
    expect((await store.stat(digest)).meta).toEqual({ a: 'one', c: '3' });
    await store.addTags(digest, ['t2', 't3']);
    expect((await store.stat(digest)).tags).toEqual(['t1', 't2', 't3']);
    await store.removeTags(digest, ['t1', 'absent']);
    expect((await store.stat(digest)).tags).toEqual(['t2', 't3']);
  });

  it('a batch of 500 updates over 1,000 documents applies in one transaction', async () => {
    const { store } = await newStore();
    const digests: string[] = [];
    for (let i = 0; i < 1000; i++) digests.push((await store.put(textBytes(i, 64))).digest);
    const unique = [...new Set(digests)];
    const updates = unique.slice(0, 500).map((d, i) => ({ digest: d, meta: { n: String(i) }, addTags: ['batched'] }));
    expect(await store.updateMeta(updates)).toEqual({ updated: 500 });
    expect((await store.stat(unique[499]!)).meta).toEqual({ n: '499' });
    expect((await store.list({ tag: 'batched', limit: 10_000 })).items).toHaveLength(500);
  });

  it('a batch with one bad entry changes nothing', async () => {
    const { store } = await newStore();
    const { digest } = await store.put(doc(3));
    const missing = `sha256:${'1'.repeat(64)}`;
    await expect(store.updateMeta([{ digest, meta: { k: 'v' } }, { digest: missing, meta: { k: 'v' } }])).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await store.stat(digest)).meta).toEqual({});
    await expect(store.updateMeta([{ digest, meta: { k: 5 } } as never])).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(store.setMeta(missing, { a: 'b' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('list', () => {
  it('filters by tag, media type, path prefix and time', async () => {
    const { store } = await newStore();
    const a = await store.put(doc(10), { path: 'src/a.ts', mediaType: 'text/typescript', tags: ['code'] });
    const b = await store.put(doc(11), { path: 'src/lib/b.ts', mediaType: 'text/typescript' });
    const c = await store.put(doc(12), { path: 'docs/c.md', mediaType: 'text/markdown', tags: ['code', 'docs'] });
    const digests = async (q: object) => (await store.list(q)).items.map((i) => i.digest);
    expect(await digests({ tag: 'code' })).toEqual([a.digest, c.digest]);
    expect(await digests({ mediaType: 'text/typescript' })).toEqual([a.digest, b.digest]);
    expect(await digests({ pathPrefix: 'src/' })).toEqual([a.digest, b.digest]);
    expect(await digests({ pathPrefix: 'src/lib' })).toEqual([b.digest]);
    expect(await digests({ tag: 'code', pathPrefix: 'docs' })).toEqual([c.digest]);
    expect(await digests({ since: new Date(Date.now() + 60_000) })).toEqual([]);
    expect(await digests({ until: new Date(Date.now() + 60_000).toISOString() })).toHaveLength(3);
  });

  it('cursor pagination is stable while documents are added and deleted', async () => {
    const { store } = await newStore();
    const all: string[] = [];
    for (let i = 0; i < 25; i++) all.push((await store.put(doc(100 + i))).digest);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.list({ limit: 7, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((i) => i.digest));
      cursor = page.nextCursor;
      if (pages++ === 1) {
        await store.delete(all[0]!); // already seen: must not shift later pages
        all.push((await store.put(doc(999))).digest); // new: appears at the end
      }
    } while (cursor);
    expect(seen).toEqual(all);
  });

  it('rejects bad queries', async () => {
    const { store } = await newStore();
    await expect(store.list({ limit: 0 })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'limit' });
    await expect(store.list({ cursor: 'abc' })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'cursor' });
    // Cursors are opaque (FORMAT.md §11): an entry id is not one.
    await expect(store.list({ cursor: '7' })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'cursor' });
    await expect(store.list({ since: 'yesterday' } as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});

describe('large batches (set-based path) match one-by-one updates', () => {
  it('gives the same documents as applying each update alone (property)', async () => {
    const fc = (await import('fast-check')).default;
    const a = (await newStore()).store;
    const b = (await newStore()).store;
    const digests: string[] = [];
    for (let i = 0; i < 40; i++) {
      const bytes = textBytes(5000 + i, 100);
      digests.push((await a.put(bytes, { tags: ['t0'], meta: { k0: 'v' } })).digest);
      await b.put(bytes, { tags: ['t0'], meta: { k0: 'v' } });
    }
    const key = fc.constantFrom('k0', 'k1', 'k2');
    const tag = fc.constantFrom('t0', 't1', 't2');
    const update = (digest: string) =>
      fc.record(
        {
          digest: fc.constant(digest),
          mediaType: fc.option(fc.constantFrom('text/plain', null), { nil: undefined }),
          meta: fc.dictionary(key, fc.option(fc.constantFrom('x', 'y'), { nil: null })),
          addTags: fc.array(tag, { maxLength: 2 }),
          removeTags: fc.array(tag, { maxLength: 2 }),
        },
        { requiredKeys: ['digest'] },
      );
    await fc.assert(
      fc.asyncProperty(fc.shuffledSubarray(digests, { minLength: 16, maxLength: 40 }).chain((ds) => fc.tuple(...ds.map(update))), async (batch) => {
        await a.updateMeta(batch); // distinct digests, >= 16: the set-based path
        for (const u of batch) await b.updateMeta([u]); // one by one
        for (const d of batch.map((u) => u.digest)) {
          const [x, y] = [await a.stat(d), await b.stat(d)];
          expect({ ...x, createdAt: 0, updatedAt: 0 }).toEqual({ ...y, createdAt: 0, updatedAt: 0 });
        }
      }),
      { numRuns: 25 },
    );
  });

  it('an unknown digest in a large batch changes nothing', async () => {
    const { store } = await newStore();
    const digests: string[] = [];
    for (let i = 0; i < 20; i++) digests.push((await store.put(textBytes(7000 + i, 50))).digest);
    const batch = digests.map((digest) => ({ digest, meta: { x: '1' } }));
    batch.push({ digest: `sha256:${'2'.repeat(64)}`, meta: { x: '1' } });
    await expect(store.updateMeta(batch)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await store.stat(digests[0]!)).meta).toEqual({});
    await expect(store.updateMeta([...batch.slice(0, 20), { digest: 'sha256:nothex', meta: {} }])).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'updates[20].digest' });
  });
});
