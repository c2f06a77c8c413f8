/**
 * One hit per document (decision 0072): the same bytes at several paths are one hit, at its
 * best ranked path, the others named in `alsoAt`; pages count documents. The oracle is the
 * search with `collapse: false` — a hit per path — whose first hit of each document, in its
 * order, must be exactly the collapsed list; and semantic and hybrid with the real model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMiniLmOnWorker } from '../src/node/embed-away.js';
import type { Store } from '../src/node/index.js';
import type { SearchHit } from '../src/search/search-query.js';
import type { Embedder } from '../src/semantic/embedder.js';
import { RETRIEVAL_SET } from './fixtures/retrieval-set.js';
import { newStore } from './helpers/store.js';

const enc = (t: string) => new TextEncoder().encode(t);
const MIT = 'Permission is hereby granted, free of charge, to any person obtaining a copy of this software (the MIT license).';

/** Notes at one path or two (a backup copy), a licence in three packages, a file at 25 paths. */
async function storeWithCopies(store: Store): Promise<void> {
  for (const p of ['pkg/b/LICENSE', 'pkg/a/LICENSE', 'vendor/c/LICENSE']) await store.put(enc(MIT), { path: p });
  for (let i = 0; i < 13; i++) {
    const text = `note ${i}: the harbour ${'at dawn '.repeat(i + 1)}and the ferry`;
    await store.put(enc(text), { path: `notes/${String(i).padStart(2, '0')}.md` });
    if (i % 3 !== 2) await store.put(enc(text), { path: `backup/notes/${String(i).padStart(2, '0')}.md`, tags: i % 2 ? ['old'] : [] });
  }
  for (let i = 0; i < 25; i++) await store.put(enc('the changelog of a vendored library'), { path: `deps/${String(i).padStart(2, '0')}/CHANGELOG` });
}

/** The first hit of each document, in order: what collapsing must give. */
function firstOfEach(hits: readonly SearchHit[]): SearchHit[] {
  const seen = new Set<string>();
  return hits.filter((h) => !seen.has(h.digest) && (seen.add(h.digest), true));
}

describe('search, one hit per document', () => {
  it('keyword: the same bytes at several paths are one hit, the others in alsoAt; collapse: false gives a hit per path', async () => {
    const { store } = await newStore();
    await storeWithCopies(store);
    const [lic, ...none] = await store.search('license permission', { mode: 'keyword' });
    expect(none).toEqual([]);
    expect(lic!.path).toBe('pkg/b/LICENSE'); // (equal scores: the first put)
    expect(lic!.alsoAt).toEqual(['pkg/a/LICENSE', 'vendor/c/LICENSE']);
    expect(lic!.alsoAtMore).toBeUndefined();
    const each = await store.search('license permission', { mode: 'keyword', collapse: false });
    expect(each.map((h) => h.path)).toEqual(['pkg/b/LICENSE', 'pkg/a/LICENSE', 'vendor/c/LICENSE']);
    expect(each.every((h) => h.alsoAt === undefined)).toBe(true);
    // The filters hold for the other paths too: a prefix, a tag, the query's own path:.
    expect((await store.search('license', { mode: 'keyword', pathPrefix: 'pkg/' })).map((h) => [h.path, h.alsoAt])).toEqual([['pkg/b/LICENSE', ['pkg/a/LICENSE']]]);
    expect((await store.search('license path:vendor/', { mode: 'keyword' })).map((h) => [h.path, h.alsoAt])).toEqual([['vendor/c/LICENSE', undefined]]);
    const old = await store.search('harbour', { mode: 'keyword', tag: 'old', limit: 50 });
    expect(old.length).toBeGreaterThan(0);
    expect(old.every((h) => h.path!.startsWith('backup/') && h.alsoAt === undefined)).toBe(true);
    // At most ALSO_AT_MAX named; the rest counted.
    const [log] = await store.search('changelog vendored', { mode: 'keyword' });
    expect(log!.alsoAt).toHaveLength(20);
    expect(log!.alsoAt![0]).toBe('deps/01/CHANGELOG');
    expect(log!.alsoAtMore).toBe(4);
  });

  it('keyword: the collapsed list is the first hit of each document of the list by path, page by page', async () => {
    const { store } = await newStore();
    await storeWithCopies(store);
    let copies = 0; // hits of the list by path that collapsing leaves out
    for (const q of ['harbour', 'the ferry at dawn', 'note', 'harbour OR license OR changelog', '"the harbour"', 'dawn -ferry', 'fer*']) {
      const each = await store.search(q, { mode: 'keyword', limit: 200, collapse: false });
      const want = firstOfEach(each).map((h) => [h.path, h.digest]);
      copies += each.length - want.length;
      const whole = await store.search(q, { mode: 'keyword', limit: 200 });
      expect(whole.map((h) => [h.path, h.digest]), q).toEqual(want);
      // Pages of 4 cut from the same order: every document once.
      const paged: SearchHit[] = [];
      for (let offset = 0; offset < want.length + 4; offset += 4) paged.push(...(await store.search(q, { mode: 'keyword', limit: 4, offset })));
      expect(paged.map((h) => [h.path, h.digest]), q).toEqual(want);
      // Keyword ranks count documents.
      expect(whole.map((h) => h.keyword!.rank), q).toEqual(whole.map((_, i) => i + 1));
      // Every other path of a hit's document is named (the changelog's 25 capped at 20).
      for (const h of whole) {
        const others = each.filter((x) => x.digest === h.digest && x.path !== h.path).map((x) => x.path).sort();
        expect([...(h.alsoAt ?? [])].sort(), `${q} ${h.path}`).toEqual(others.slice(0, 20).length === others.length ? others : expect.any(Array));
      }
    }
    expect(copies).toBeGreaterThan(40);
  });

  it('a document put once without a path and once at one is found at its path, in every mode words reach', async () => {
    const { store } = await newStore();
    const text = enc('Quarterly ferry timetable for the northern islands.');
    await store.put(text, { path: 'docs/schedule.txt' });
    await store.put(text); // (bytes alone: an entry at no path, shorter for BM25)
    for (const collapse of [true, false]) {
      const hits = await store.search('ferry timetable', { mode: 'keyword', collapse });
      if (collapse) expect(hits.map((h) => [h.path, h.alsoAt])).toEqual([['docs/schedule.txt', undefined]]);
      else expect(hits.map((h) => h.path).sort()).toEqual(['docs/schedule.txt', null].sort());
    }
  });

  it('keyword: pages past a window of false matches and copies reach every document (lodash AND 4.17.21)', async () => {
    const { store } = await newStore();
    // BM25 first: a note whose words match but not the version as written (a false match,
    // taken out), then three documents holding it, two of them at two paths.
    await store.put(enc('lodash 4.17, 21'), { path: 'g.md' });
    for (const [i, paths] of [['1', ['d1/a.md', 'd1/b.md']], ['2', ['d2/a.md', 'd2/b.md']], ['3', ['d3/a.md']]] as const) {
      for (const path of paths) await store.put(enc(`we install lodash 4.17.21 from the registry, note ${i} of the release`), { path });
    }
    const want = firstOfEach(await store.search('lodash AND 4.17.21', { mode: 'keyword', limit: 100, collapse: false })).map((h) => h.digest);
    expect(want).toHaveLength(3);
    const paged: string[] = [];
    for (let offset = 0; offset < 8; offset += 2) paged.push(...(await store.search('lodash AND 4.17.21', { mode: 'keyword', window: 2, limit: 2, offset })).map((h) => h.digest));
    expect(paged).toEqual(want);
  });

  it('searches through versions collapse too: the same bytes at several paths or versions are one hit, the others in alsoAt as path@N (changed on purpose: a trial\'s page was four copies of one manual)', async () => {
    const { store } = await newStore();
    await store.put(enc('the harbour at dawn'), { path: 'a.md' });
    await store.put(enc('the harbour at dawn'), { path: 'b.md' });
    await store.put(enc('the ferry'), { path: 'a.md' });
    const hits = await store.search('harbour', { allVersions: true });
    expect(hits).toHaveLength(1);
    expect([`${hits[0]!.path}@${hits[0]!.version}`, ...(hits[0]!.alsoAt ?? [])].sort()).toEqual(['a.md@1', 'b.md@1']);
    const each = await store.search('harbour', { allVersions: true, collapse: false });
    expect(each.map((h) => `${h.path}@${h.version}`).sort()).toEqual(['a.md@1', 'b.md@1']);
    expect(each.every((h) => h.alsoAt === undefined)).toBe(true);
  });
});

describe('semantic and hybrid, one hit per document (all-MiniLM-L6-v2)', () => {
  let model: Embedder;
  beforeAll(async () => {
    model = await loadMiniLmOnWorker();
  }, 60_000);
  afterAll(() => model?.close());

  it('hybrid: pages past the fused window reach every document however many copies fill it', { timeout: 60_000 }, async () => {
    const { store } = await newStore();
    store.useEmbedder(model);
    for (let i = 0; i < 30; i++) await store.put(enc('harbour harbour harbour'), { path: `a/${String(i).padStart(2, '0')}.md` });
    for (const [i, text] of ['harbour at dawn', 'the harbour master', 'a ferry to the harbour and back'].entries()) await store.put(enc(text), { path: `b/${i}.md` });
    const want = firstOfEach(await store.search('harbour', { mode: 'keyword', limit: 100, collapse: false })).map((h) => h.digest);
    expect(want).toHaveLength(4);
    // (minScore 1: nothing by meaning — the keyword side alone, past a window of 2.)
    for (const limit of [1, 2]) {
      const paged: SearchHit[] = [];
      for (let offset = 0; offset < 8; offset += limit) paged.push(...(await store.search('harbour', { mode: 'hybrid', window: 2, minScore: 1, limit, offset })));
      expect(paged.map((h) => h.digest).sort(), `limit ${limit}`).toEqual([...want].sort());
      expect(paged.map((h) => h.keyword!.rank), `limit ${limit}`).toEqual([1, 2, 3, 4]);
    }
  });

  it('semantic and hybrid with a filter reach the documents it keeps, however far down by meaning, page by page', { timeout: 60_000 }, async () => {
    const { store } = await newStore();
    store.useEmbedder(model);
    // The labelled set twice, under a/ and b/ (b/'s texts one word longer: other documents).
    for (const d of RETRIEVAL_SET) {
      await store.put(enc(d.text), { path: `a/${d.path}` });
      await store.put(enc(`${d.text} (b)`), { path: `b/${d.path}` });
    }
    const question = RETRIEVAL_SET[0]!.meaning;
    const all = await store.search(question, { mode: 'semantic', minScore: -1, limit: 100 });
    const last = all.at(-1)!.path!;
    // A window of 2: the filter's one document is far below the first two by meaning.
    for (const mode of ['semantic', 'hybrid'] as const) {
      expect((await store.search(question, { mode, minScore: -1, window: 2, pathPrefix: last })).map((h) => h.path), mode).toEqual([last]);
      const paged: string[] = [];
      for (let offset = 0; offset < 15; offset += 3) paged.push(...(await store.search(question, { mode, minScore: -1, window: 2, limit: 3, offset, pathPrefix: 'b/' })).map((h) => h.path!));
      expect([...paged].sort(), mode).toEqual(RETRIEVAL_SET.map((d) => `b/${d.path}`).sort());
    }
  });

  it('collapse the copies of a document in every mode, pages counting documents', { timeout: 120_000 }, async () => {
    const { store } = await newStore();
    store.useEmbedder(model);
    // The copy first: semantic's first entry of a document is the copy, keyword's (BM25, the
    // shorter row) the original — fused by document, not by entry, they are one hit.
    for (const d of RETRIEVAL_SET) {
      await store.put(enc(d.text), { path: `copy/${d.path}` });
      await store.put(enc(d.text), { path: d.path });
    }
    for (const [question, mode] of [[RETRIEVAL_SET[0]!.meaning, 'semantic'], [RETRIEVAL_SET[0]!.meaning, 'hybrid'], [RETRIEVAL_SET[0]!.keyword, 'hybrid']] as const) {
      const each = await store.search(question, { mode, limit: 100, minScore: -1, collapse: false });
      const hits = await store.search(question, { mode, limit: 100, minScore: -1 });
      expect(hits.length, mode).toBe(RETRIEVAL_SET.length);
      expect(new Set(hits.map((h) => h.digest)).size, mode).toBe(hits.length);
      expect(each.length, mode).toBe(2 * RETRIEVAL_SET.length);
      for (const h of hits) expect(h.alsoAt, `${mode} ${h.path}`).toEqual([h.path!.startsWith('copy/') ? h.path!.slice(5) : `copy/${h.path}`]);
      expect(hits[0]!.path!.replace(/^copy\//, ''), mode).toBe(RETRIEVAL_SET[0]!.path);
      // Ranks count documents on every side.
      expect(hits.filter((h) => h.semantic).map((h) => h.semantic!.rank), mode).toEqual(hits.filter((h) => h.semantic).map((_, i) => i + 1));
      // Pages of 3 cut from one order: every document once.
      const paged: SearchHit[] = [];
      for (let offset = 0; offset < hits.length + 3; offset += 3) paged.push(...(await store.search(question, { mode, limit: 3, offset, minScore: -1 })));
      expect(paged.map((h) => h.digest), mode).toEqual(hits.map((h) => h.digest));
    }
  });
});
