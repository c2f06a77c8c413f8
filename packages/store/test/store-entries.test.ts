/**
 * Paths are entries, a document is content (decision 0025): identical bytes at two paths are
 * two entries and one document; tags, metadata and media types live on entries; digest
 * addressed changes name one entry or fail; deletes by path and by digest; stats over entries.
 */
import { describe, expect, it, vi } from 'vitest';
import { newStore, randomBytes, reopen } from './helpers/store.js';

const utf8 = (s: string) => new TextEncoder().encode(s);

describe('entries and documents', () => {
  it('the same bytes at two paths are two entries, one document, stored once', async () => {
    const { store } = await newStore();
    const a = await store.put(utf8('MIT License\n'), { path: 'a/LICENSE', tags: ['a'] });
    const b = await store.put(utf8('MIT License\n'), { path: 'b/LICENSE', tags: ['b'], mediaType: 'text/plain' });
    expect(b).toMatchObject({ digest: a.digest, newChunks: 0, newBytesStored: 0 });
    expect((await store.list()).items.map((e) => [e.path, e.digest, e.tags, e.mediaType])).toEqual([
      ['a/LICENSE', a.digest, ['a'], null],
      ['b/LICENSE', a.digest, ['b'], 'text/plain'],
    ]);
    expect(await store.getBytes(await store.resolve('a/LICENSE'))).toEqual(utf8('MIT License\n'));
    const s = await store.stats();
    expect({ entries: s.entries, documents: s.documents, logicalBytes: s.logicalBytes, uniqueChunkBytes: s.uniqueChunkBytes }).toEqual({
      entries: 2,
      documents: 1,
      logicalBytes: 24,
      uniqueChunkBytes: 12,
    });
  });

  it('a tag or key set on one path never shows on another with the same bytes', async () => {
    const { store } = await newStore();
    await store.put(utf8('same'), { path: 'x' });
    await store.put(utf8('same'), { path: 'y' });
    await store.addTags('x', ['only-x']);
    await store.setMeta('y', { k: 'y' });
    expect(await store.stat('x')).toMatchObject({ tags: ['only-x'], meta: {} });
    expect(await store.stat('y')).toMatchObject({ tags: [], meta: { k: 'y' } });
    expect((await store.list({ tag: 'only-x' })).items.map((e) => e.path)).toEqual(['x']);
    expect((await store.search('only')).map((h) => h.path)).toEqual(['x']);
  });

  it("a version is never older than the one before it, though its commit's clock says so (writers in several processes)", async () => {
    const { store } = await newStore();
    const enc = (s: string) => new TextEncoder().encode(s);
    await store.put(enc('one'), { path: 'same.txt' });
    const [first] = await store.versions('same.txt');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(new Date(first!.createdAt).getTime() - 60_000); // this commit's clock a minute behind
      await store.put(enc('two'), { path: 'same.txt' });
    } finally {
      vi.useRealTimers();
    }
    const [v1, v2] = await store.versions('same.txt');
    expect(v2!.version).toBe(2);
    expect(Date.parse(v2!.createdAt)).toBeGreaterThanOrEqual(Date.parse(v1!.createdAt));
    // And `path@time` agrees with the numbers: at v1's time the latest is v1 or v2, never older.
    expect((await store.pathVersion('same.txt', { at: Date.parse(v2!.createdAt) })).version).toBe(2);
    // The entry's time follows its version's, so `since` agrees too.
    const [entry] = (await store.list({ pathPrefix: 'same.txt' })).items;
    expect(entry!.updatedAt).toBe(v2!.createdAt);
    expect((await store.list({ since: v2!.createdAt })).items.map((i) => i.path)).toEqual(['same.txt']);
  });

  it("a type filter reads types as search's type: does, in lists and searches alike: exact, type/*, a subtype alone; parameters aside; dates alone for since/until", async () => {
    const { store } = await newStore();
    const enc = (s: string) => new TextEncoder().encode(s);
    await store.put(enc('harbour notes'), { path: 'a.md', mediaType: 'text/markdown' });
    await store.put(enc('harbour log'), { path: 'b.txt', mediaType: 'text/plain; charset=utf-8' });
    await store.put(enc('{"harbour": 1}'), { path: 'c.json', mediaType: 'application/ld+json' });
    const listed = async (mediaType: string) => (await store.list({ mediaType })).items.map((i) => i.path);
    const searched = async (mediaType: string) => (await store.search('harbour', { mediaType, mode: 'keyword' })).map((h) => h.path).sort();
    for (const [type, paths] of [['text/*', ['a.md', 'b.txt']], ['TEXT/PLAIN', ['b.txt']], ['text/plain; charset=latin1', ['b.txt']], ['markdown', ['a.md']], ['json', ['c.json']], ['image/*', []]] as const) {
      expect([type, await listed(type)]).toEqual([type, paths]);
      expect([type, await searched(type)]).toEqual([type, paths]);
      expect([type, (await store.search(`harbour type:${type.split(';')[0]!.replace(/ /g, '')}`, { mode: 'keyword' })).map((h) => h.path).sort()]).toEqual([type, paths]);
    }
    expect((await store.list({ since: '2000-01-01' })).items).toHaveLength(3);
    expect((await store.list({ until: '2000-01-01' })).items).toHaveLength(0);
  });

  it('stats count everything kept (entries, older versions, snapshots) for the dedup ratio, which never falls below 1 for unique bytes', async () => {
    const { store } = await newStore();
    const unique = (seed: number) => Uint8Array.from({ length: 50_000 }, (_, i) => (Math.imul(i + 1, 2654435761 + seed * 97) >>> 13) & 0xff);
    for (const seed of [1, 2, 3]) await store.put(unique(seed), { path: 'f.bin' });
    const s = await store.stats();
    expect(s).toMatchObject({ entries: 1, documents: 1, logicalBytes: 50_000, keptDocuments: 3, keptBytes: 150_000 });
    expect(s.dedupRatio).toBeGreaterThanOrEqual(1); // (over the entries alone: 0.33)
    await store.put(unique(1), { path: 'copy.bin' }); // the same bytes again, a file more: deduplicated
    const after = await store.stats();
    expect(after).toMatchObject({ keptDocuments: 3, keptBytes: 200_000 });
    expect(after.dedupRatio).toBeCloseTo(200_000 / after.uniqueChunkBytes, 5);
    expect(after.dedupRatio).toBeGreaterThan(1.3);
  });

  it('tags and metadata stay with a path across its versions', async () => {
    const { store } = await newStore();
    await store.put(utf8('v1'), { path: 'notes/today.md', tags: ['notes'], meta: { lang: 'en' } });
    await store.put(utf8('v2'), { path: 'notes/today.md' });
    expect(await store.stat('notes/today.md')).toMatchObject({ version: 2, tags: ['notes'], meta: { lang: 'en' } });
  });

  it('a digest names the pathless entry, else the one path showing it; several paths are AMBIGUOUS and change nothing', async () => {
    const { store } = await newStore();
    const one = await store.put(utf8('one'), { path: 'p/one' });
    await store.addTags(one.digest, ['by-digest']);
    expect((await store.stat('p/one')).tags).toEqual(['by-digest']);

    const two = await store.put(utf8('two'), { path: 'p/two' });
    await store.put(utf8('two'), { path: 'q/two' });
    const ambiguous = store.updateMeta([
      { digest: one.digest, meta: { k: 'v' } },
      { digest: two.digest, meta: { k: 'v' } },
    ]);
    await expect(ambiguous).rejects.toMatchObject({ code: 'AMBIGUOUS', paths: ['p/two', 'q/two'] });
    expect((await store.stat('p/one')).meta).toEqual({}); // all or none
    await expect(store.stat(two.digest)).rejects.toMatchObject({ code: 'AMBIGUOUS' });

    // A put without a path makes the document's pathless entry, which the digest then names.
    await store.put(utf8('two'), { tags: ['pathless'] });
    expect(await store.stat(two.digest)).toMatchObject({ path: null, version: null, tags: ['pathless'] });
    await store.setMeta(two.digest, { on: 'pathless' });
    expect((await store.stat('p/two')).meta).toEqual({});
    expect((await store.list()).items).toHaveLength(4);
  });

  it('an older version is readable by digest and shows no attributes; changing it by digest is NOT_FOUND', async () => {
    const { store } = await newStore();
    const v1 = await store.put(utf8('first'), { path: 'f', tags: ['t'] });
    await store.put(utf8('second'), { path: 'f' });
    expect(await store.has(v1.digest)).toBe(true);
    expect(await store.getBytes(v1.digest)).toEqual(utf8('first'));
    expect(await store.stat(v1.digest)).toMatchObject({ path: null, digest: v1.digest, tags: [], meta: {} });
    await expect(store.addTags(v1.digest, ['x'])).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('deleting a path drops its versions; the document stays while another path names it', async () => {
    const { store } = await newStore();
    const d = await store.put(utf8('shared'), { path: 'a' });
    await store.put(utf8('other'), { path: 'a' });
    await store.put(utf8('shared'), { path: 'b' });
    expect(await store.deletePath('a')).toBe(true);
    expect(await store.deletePath('a')).toBe(false);
    await expect(store.versions('a')).resolves.toEqual([]);
    expect((await store.list()).items.map((e) => e.path)).toEqual(['b']);
    expect(await store.getBytes(d.digest)).toEqual(utf8('shared'));
    expect(await store.deletePath('b')).toBe(true);
    expect(await store.has(d.digest)).toBe(false);
    expect((await store.stats()).entries).toBe(0);
    // Its chunks are garbage now.
    expect((await store.gc()).chunksRemoved).toBe(2);
  });

  it('deleting by digest removes that content from every path; a path falls back to its previous version', async () => {
    const { store } = await newStore();
    const old = await store.put(utf8('old'), { path: 'x' });
    const cur = await store.put(utf8('current'), { path: 'x' });
    await store.put(utf8('current'), { path: 'y', tags: ['y'] });
    await store.put(utf8('current'));
    expect(await store.delete(cur.digest)).toBe(true);
    expect(await store.delete(cur.digest)).toBe(false);
    expect((await store.list()).items.map((e) => [e.path, e.digest, e.version])).toEqual([['x', old.digest, 1]]);
    expect((await store.versions('x')).map((v) => v.version)).toEqual([1]);
    expect(await store.has(cur.digest)).toBe(false);
    // The path's next version keeps counting: numbers are never reused.
    await store.put(utf8('newest'), { path: 'x' });
    expect((await store.versions('x')).map((v) => v.version)).toEqual([1, 3]);
  });

  it('a snapshot keeps a document whose entries were deleted, and it is not listed', async () => {
    const { store } = await newStore();
    const d = await store.put(utf8('in a snapshot'), { path: 'kept' });
    const snap = await store.createSnapshot({ type: 'dir', entries: [{ name: 'kept', type: 'file', mode: 0o644, size: 13, digest: d.digest }] } as never);
    await store.deletePath('kept');
    expect(await store.has(d.digest)).toBe(false);
    expect((await store.list()).items).toEqual([]);
    await store.gc();
    const out = [];
    for await (const e of store.snapshotEntries(snap.id)) out.push(e.path);
    expect(out).toEqual(['kept']);
    expect(await (await store.document(d.digest, { unlisted: true })).bytes()).toEqual(utf8('in a snapshot'));
    await store.deleteSnapshot(snap.id);
    expect((await store.gc()).chunksRemoved).toBe(1);
  });
});

describe('paths a put may make', () => {
  it('refuses paths nothing could name again, storing nothing; takes the unusual ones that can be named', async () => {
    const { store } = await newStore();
    const refused: [string, RegExp][] = [
      ['a/../b', /"\.\."/],
      ['../../etc/x', /"\.\."/],
      ['./c', /"\."/],
      ['dir/', /empty/],
      ['a//b', /empty/],
      ['/abs/x', /relative/],
      ['/', /relative/],
      ['bad\uD800', /surrogate/],
      ['\uDC00x', /surrogate/],
      ['z\u{10FFFF}/x', /U\+10FFFF/],
      ['sha256:notes.txt', /sha256:/],
      ['SHA256:x', /sha256:/],
      ['ab'.repeat(32), /64 hex digits/],
      ['AB'.repeat(32), /64 hex digits/],
      ['song@1', /version reference \(@1\)/],
      ['build@2024-01-01', /version reference/],
    ];
    for (const [path, why] of refused) {
      const e = await store.put(utf8(`text of ${path}`), { path }).then(() => undefined, (err: unknown) => err);
      expect(e, path).toMatchObject({ code: 'INVALID_INPUT', field: 'path' });
      expect((e as Error).message, path).toMatch(why);
    }
    expect((await store.list()).items).toEqual([]);
    expect((await store.stats()).documents).toBe(0); // (nothing stored, not even the bytes)
    // A "__proto__" metadata key (JSON.parse makes it an own key): refused, not dropped.
    const proto = JSON.parse('{"__proto__":"y","k":"v"}') as Record<string, string>;
    await expect(store.put(utf8('x'), { path: 'p', meta: proto })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'meta', message: 'meta: the key "__proto__" is not accepted' });
    await store.put(utf8('x'), { path: 'p' });
    await expect(store.updateMeta([{ path: 'p', meta: proto }])).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'meta' });
    await expect(store.updateMeta([{ path: 'p', meta: {} }, { path: 'p', meta: proto }])).rejects.toMatchObject({ code: 'INVALID_INPUT', message: 'updates[1].meta: the key "__proto__" is not accepted' });
    expect((await store.stat('p')).meta).toEqual({});
    await store.deletePath('p');
    // Unusual but nameable: kept, and each resolves to itself.
    for (const path of ['x@2.txt', 'a@b', `${'ab'.repeat(32)}.bin`, `sums/${'ab'.repeat(32)}`, 'mail@example.com/notes', 'file with spaces & #hash?.txt', '東京/タワー.md', 'emoji 😀', 'sha256', 'dir/sha256:x', 'song@1/lyrics.txt']) {
      const r = await store.put(utf8(`text of ${path}`), { path });
      expect(await store.resolve(path), path).toBe(r.digest);
      expect((await store.stat(path)).digest, path).toBe(r.digest);
    }
  });
});

describe('a document deleted and collected while it is read', () => {
  it('ends the read with NOT_FOUND, not CORRUPT_DATA: the store is not damaged', { timeout: 60_000 }, async () => {
    const { store, dir } = await newStore();
    await store.close();
    const s = await reopen(dir, { packSize: 256 * 1024 });
    const big = randomBytes(5, 4 << 20);
    const { digest } = await s.put(big, { path: 'big' });
    const readers = [() => s.get(digest), () => s.getRangeStream(digest, 0, big.length), async function* () { yield* (await s.document(digest)).stream(); }];
    for (const [i, open] of readers.entries()) {
      if (i > 0) await s.put(big, { path: 'big' });
      const it = open()[Symbol.asyncIterator]();
      expect((await it.next()).done, `reader ${i}`).toBe(false);
      await s.deletePath('big');
      expect((await s.gc()).chunksRemoved, `reader ${i}`).toBeGreaterThan(0);
      const e = await (async () => {
        for (;;) if ((await it.next()).done) return undefined;
      })().catch((err: unknown) => err);
      expect(e, `reader ${i}`).toMatchObject({ code: 'NOT_FOUND' });
      expect((e as Error).message).toMatch(/deleted while being read/);
    }
    expect((await s.verify()).ok).toBe(true);
  });

  it('does not end a verify that reads data: the document is gone, not damaged', { timeout: 60_000 }, async () => {
    const { store: s } = await newStore();
    const { digest } = await s.put(randomBytes(6, 2 << 20), { path: 'big' });
    await s.put(randomBytes(7, 10_000), { path: 'small' });
    // The document verify is about to read is deleted and collected first (as a client and a
    // GC would do during a server's verify).
    const ctx = (s as unknown as { ctx: { reader: { over: (p: unknown) => { check: (d: { digest: Uint8Array }) => Promise<number> } } } }).ctx;
    const over = ctx.reader.over.bind(ctx.reader);
    let raced = 0;
    ctx.reader.over = (packs) => {
      const r = over(packs);
      const check = r.check.bind(r);
      r.check = async (doc) => {
        if (`sha256:${Buffer.from(doc.digest).toString('hex')}` === digest && !raced++) {
          await s.deletePath('big');
          await s.gc();
        }
        return check(doc);
      };
      return r;
    };
    const report = await s.verify(undefined, { readData: true }); // (it rejected NOT_FOUND)
    expect(raced).toBe(1);
    expect(report.ok).toBe(true);
    expect(report.damagedDocuments).toEqual([]);
  });
});
