import { describe, expect, it } from 'vitest';
import { MetaUpdate, PutMeta, parse, parsePutMeta, plainMetaUpdate } from '../src/options.js';
import { batchEnded, newStore, reopen, textBytes } from './helpers/store.js';

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

describe('the entry a target names, remembered between commits (decision 0033)', () => {
  it('updatedAt is when the version last changed: tags, metadata and media type leave it', async () => {
    const { store } = await newStore();
    await store.put(doc(10), { path: 'a.txt' });
    const first = await store.stat('a.txt');
    await new Promise((r) => setTimeout(r, 5));
    await store.setMeta('a.txt', { k: 'v' });
    await store.addTags('a.txt', ['t']);
    await store.updateMeta([{ path: 'a.txt', mediaType: 'text/plain' }]);
    await store.put(doc(10), { path: 'a.txt', tags: ['u'] }); // the same bytes: no new version
    expect((await store.stat('a.txt')).updatedAt).toBe(first.updatedAt);
    await store.put(doc(11), { path: 'a.txt' });
    const second = await store.stat('a.txt');
    expect(second.version).toBe(2);
    expect(Date.parse(second.updatedAt)).toBeGreaterThan(Date.parse(first.updatedAt));
    await new Promise((r) => setTimeout(r, 5));
    await store.deleteVersion('a.txt', 2); // the entry shows version 1 again: a change of version
    expect(Date.parse((await store.stat('a.txt')).updatedAt)).toBeGreaterThan(Date.parse(second.updatedAt));
  });

  it('a digest another writer gave a new entry meanwhile is resolved again, one by one and in a batch', async () => {
    const { store: a, dir } = await newStore();
    const b = await reopen(dir);
    const bytes = Array.from({ length: 20 }, (_, i) => textBytes(8000 + i, 80));
    const digests: string[] = [];
    for (const x of bytes) digests.push((await a.put(x)).digest);
    await a.updateMeta(digests.map((digest) => ({ digest, meta: { round: '1' } }))); // 20: the set-based path
    await a.setMeta(digests[0]!, { single: '1' });
    await batchEnded();
    // b replaces every document's pathless entry with a new one (new entry ids).
    for (const [i, x] of bytes.entries()) {
      expect(await b.delete(digests[i]!)).toBe(true);
      await b.put(x);
    }
    await batchEnded();
    await a.updateMeta(digests.map((digest) => ({ digest, meta: { round: '2' } })));
    await a.setMeta(digests[0]!, { single: '2' });
    await batchEnded();
    for (const [i, d] of digests.entries()) {
      expect((await b.stat(d)).meta).toEqual(i === 0 ? { round: '2', single: '2' } : { round: '2' });
    }
  });

  it('a path this writer deleted and put again is resolved again', async () => {
    const { store } = await newStore();
    const paths = Array.from({ length: 20 }, (_, i) => `p/${i}`);
    for (const [i, path] of paths.entries()) await store.put(textBytes(9000 + i, 50), { path });
    await store.updateMeta(paths.map((path) => ({ path, meta: { round: '1' } })));
    await store.setMeta(paths[0]!, { single: '1' });
    for (const [i, path] of paths.entries()) {
      await store.deletePath(path);
      await store.put(textBytes(9100 + i, 50), { path });
    }
    await store.updateMeta(paths.map((path) => ({ path, meta: { round: '2' } })));
    await store.setMeta(paths[0]!, { single: '2' });
    for (const [i, path] of paths.entries()) {
      expect((await store.stat(path)).meta).toEqual(i === 0 ? { round: '2', single: '2' } : { round: '2' });
    }
  });

  it('a batch that fails after a target was remembered leaves nothing wrong behind', async () => {
    const { store } = await newStore();
    const paths = Array.from({ length: 20 }, (_, i) => `q/${i}`);
    for (const [i, path] of paths.entries()) await store.put(textBytes(9200 + i, 50), { path });
    const missing = { path: 'q/absent', meta: { x: '1' } };
    await expect(store.updateMeta([...paths.map((path) => ({ path, meta: { x: '1' } })), missing])).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await store.updateMeta(paths.map((path) => ({ path, meta: { x: '2' } })));
    expect((await store.stat(paths[19]!)).meta).toEqual({ x: '2' });
  });
});

describe('plainMetaUpdate: the fast check before zod', () => {
  it('accepts only what MetaUpdate accepts unchanged (property)', async () => {
    const fc = (await import('fast-check')).default;
    const edgeString = (max: number) =>
      fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('', 'a'.repeat(max), 'a'.repeat(max + 1), 'x\u0000y', 'x\u001fy', '__proto__', 'sha256:' + 'a'.repeat(64)));
    const digest = fc.oneof(edgeString(71), fc.integer() as never);
    const path = edgeString(4096);
    const target = fc.oneof(fc.record({ digest }), fc.record({ path }), fc.record({ digest, path }), fc.constant({}));
    const attributes = {
      meta: fc.oneof(fc.dictionary(edgeString(256), fc.oneof(edgeString(65536), fc.constant(null), fc.integer() as never), { maxKeys: 4 }), fc.constant([] as never)),
      addTags: fc.oneof(fc.array(edgeString(256), { maxLength: 3 }), fc.constant('t' as never)),
      removeTags: fc.array(edgeString(256), { maxLength: 3 }),
    };
    const rest = fc.oneof(
      { arbitrary: fc.record(attributes, { requiredKeys: [] }), weight: 6 },
      { arbitrary: fc.record({ ...attributes, mediaType: fc.constantFrom('text/plain', null, 'nope'), extra: fc.constant(1) }, { requiredKeys: [] }), weight: 1 },
    );
    const update = fc.tuple(target, rest).map(([t, r]) => ({ ...t, ...r }));
    let accepted = 0;
    fc.assert(
      fc.property(update, (u) => {
        if (!plainMetaUpdate(u)) return;
        accepted++;
        const r = MetaUpdate.safeParse(u);
        expect(r.success).toBe(true);
        expect(r.data).toEqual(u);
      }),
      { numRuns: 5000 },
    );
    expect(accepted).toBeGreaterThan(50); // the property was not vacuous
    // Limits, at and past the edge.
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
    expect(plainMetaUpdate({ path: 'p', meta: many(1000) })).toBe(true);
    expect(plainMetaUpdate({ path: 'p', meta: many(1001) })).toBe(false);
    expect(plainMetaUpdate({ path: 'p', addTags: Array(1001).fill('t') })).toBe(false);
    expect(plainMetaUpdate({ path: 'p', digest: 'sha256:x' })).toBe(false);
    expect(plainMetaUpdate(Object.assign(Object.create({ inherited: 1 }), { path: 'p' }))).toBe(false);
  });
});

describe('parsePutMeta: no attributes without zod', () => {
  it('answers what zod answers, for empty and other values', () => {
    class Bare {}
    const cases: unknown[] = [undefined, null, {}, Object.create(null), new Bare(), new Map(), [], 'x', 7, { path: 'a' }, { path: '' }, { nope: 1 }, { tags: undefined }];
    for (const meta of cases) {
      const viaZod = (() => {
        try {
          return { ok: parse(PutMeta, meta, 'put meta') };
        } catch (e) {
          return { error: (e as Error).message };
        }
      })();
      const fast = (() => {
        try {
          return { ok: parsePutMeta(meta) };
        } catch (e) {
          return { error: (e as Error).message };
        }
      })();
      expect(fast, `case ${cases.indexOf(meta)}`).toEqual(viaZod);
    }
  });
});

describe('messages for bad input', () => {
  it('name the field as people do and say what is wrong in plain words, keeping a batch item\'s place', async () => {
    const { store } = await newStore();
    await store.put(new TextEncoder().encode('x'), { path: 'x' });
    await expect(store.put(new TextEncoder().encode('y'), { tags: [''] })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: 'tags: a tag cannot be empty' });
    await expect(store.updateMeta([{ path: 'x', addTags: ['ok'] }, { path: 'x', addTags: [''] }])).rejects.toMatchObject({ message: 'updates[1].addTags: a tag cannot be empty' });
    await expect(store.search('x', { limit: 0 })).rejects.toMatchObject({ message: 'limit: must be at least 1' });
    await expect(store.list({ limit: 20_000 })).rejects.toMatchObject({ message: 'limit: must be at most 10000' });
  });
});
