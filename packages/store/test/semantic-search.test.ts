/**
 * Semantic and hybrid search on a real store with the real model (decision 0036), on the
 * labelled set written for Kura (fixtures/retrieval-set.ts): questions that share no content
 * word with their document are answered by meaning where keyword search cannot; the hashing
 * embedder, which matches words, fails the same test — so the test checks meaning.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMiniLmOnWorker } from '../src/node/embed-away.js';
import type { Store } from '../src/node/index.js';
import type { Embedder } from '../src/semantic/embedder.js';
import { HashingEmbedderForTests } from '../src/semantic/hashing-embedder.js';
import { QUESTION_SET, RETRIEVAL_SET } from './fixtures/retrieval-set.js';
import { batchEnded, newStore, reopen } from './helpers/store.js';

const enc = (t: string) => new TextEncoder().encode(t);

async function labelledStore(embedder?: Embedder): Promise<Store> {
  const { store } = await newStore();
  for (const d of RETRIEVAL_SET) await store.put(enc(d.text), { path: d.path });
  if (embedder) store.useEmbedder(embedder);
  return store;
}

/** How many questions put their document first. */
async function firsts(store: Store, which: 'meaning' | 'keyword', mode: 'keyword' | 'semantic' | 'hybrid'): Promise<number> {
  let n = 0;
  for (const d of RETRIEVAL_SET) if ((await store.search(d[which], { mode, limit: 5 }))[0]?.path === d.path) n++;
  return n;
}

let model: Embedder;
beforeAll(async () => {
  model = await loadMiniLmOnWorker();
}, 60_000);
afterAll(() => model?.close());

describe('semantic and hybrid search (all-MiniLM-L6-v2)', () => {
  it('answers questions by meaning where keyword search cannot; hybrid keeps keyword questions too', { timeout: 120_000 }, async () => {
    const store = await labelledStore(model);
    const total = RETRIEVAL_SET.length;
    // No shared word, but for two that share a stem ("baked" and "bake", "hired" and "hiring").
    const sharing: string[] = [];
    for (const d of RETRIEVAL_SET) if ((await store.search(d.meaning, { mode: 'keyword' })).length) sharing.push(d.path);
    expect(sharing.sort()).toEqual(['kitchen/bread.txt', 'work/interview.txt']);
    const keyword = await firsts(store, 'meaning', 'keyword');
    const semantic = await firsts(store, 'meaning', 'semantic');
    const hybrid = await firsts(store, 'meaning', 'hybrid');
    console.log(`meaning-only questions, right document first: keyword ${keyword}/${total}, semantic ${semantic}/${total}, hybrid ${hybrid}/${total}`);
    expect(keyword).toBeLessThanOrEqual(2);
    expect(semantic).toBeGreaterThanOrEqual(8);
    expect(hybrid).toBeGreaterThanOrEqual(8);
    expect(await firsts(store, 'keyword', 'keyword')).toBe(total);
    expect(await firsts(store, 'keyword', 'hybrid')).toBe(total);
  });

  it('answers questions as people type them (punctuation, quotes, other languages) and returns nothing for unrelated ones, in every mode', { timeout: 120_000 }, async () => {
    const store = await labelledStore(model);
    for (const d of QUESTION_SET.documents) await store.put(enc(d.text), { path: d.path });
    for (const { q, expect: answer, kind } of QUESTION_SET.questions) {
      for (const mode of ['keyword', 'semantic', 'hybrid'] as const) {
        const hits = await store.search(q, { mode, limit: 5 });
        if (answer === null) expect({ q, mode, paths: hits.map((h) => h.path) }).toEqual({ q, mode, paths: [] });
        else if (mode === 'hybrid') expect({ q, kind, first: hits[0]?.path }).toEqual({ q, kind, first: answer });
        else expect({ q, mode, found: hits.some((h) => h.path === answer) }).toEqual({ q, mode, found: true });
      }
    }
    // The example: a question about nothing in a store of two notes finds nothing.
    const two = await labelledStore(model);
    expect((await two.search('C++ templates')).map((h) => h.path)).toEqual([]);
  });

  it('a question in a script the model cannot read is answered by its words (it brought unrelated notes in, with high scores)', { timeout: 120_000 }, async () => {
    const store = await labelledStore(model);
    await store.put(enc('我今天去图书馆借书，然后回家。'), { path: 'zh-library.txt' });
    await store.put(enc('ตลาดน้ำมีมะม่วงและข้าวเหนียวขาย'), { path: 'th-market.txt' });
    await store.put(enc('東京都港区にある電波塔です。'), { path: 'ja-tokyo.txt' });
    for (const mode of ['semantic', 'hybrid'] as const) {
      const zh = await store.search('图书馆', { mode });
      expect({ mode, paths: zh.map((h) => h.path), answered: zh.mode }).toEqual({ mode, paths: ['zh-library.txt'], answered: 'keyword' });
      const th = await store.search('มะม่วง', { mode });
      expect({ mode, paths: th.map((h) => h.path), answered: th.mode }).toEqual({ mode, paths: ['th-market.txt'], answered: 'keyword' });
    }
    // A question with Latin letters goes to the model as before.
    expect((await store.search('where can I borrow books', { mode: 'hybrid' })).mode).toBe('hybrid');
    // Hybrid's keyword side reads a prefix as keyword search does (bus* is not the stemmer's bu*).
    await store.put(enc('Q3 budget approved.'), { path: 'budget.txt' });
    await store.put(enc('The bus was late.'), { path: 'bus.txt' });
    const prefixed = await store.search('bus*', { mode: 'hybrid' });
    expect(prefixed.filter((h) => h.matched.includes('keyword')).map((h) => h.path)).toEqual(['bus.txt']);
  });

  it('hits carry each side\'s rank and score, and a snippet from the matching chunk; hybrid is the default with a model', { timeout: 60_000 }, async () => {
    const store = await labelledStore(model);
    const [top] = await store.search('How often does my automobile require servicing?');
    expect(top).toMatchObject({ path: 'cars/engine-oil.txt', semantic: { rank: 1 } });
    expect(top!.semantic!.score).toBeGreaterThan(0.3);
    expect(top!.snippet).toContain('Motor lubricant');
    const both = (await store.search('dipstick lubricant', { mode: 'hybrid' }))[0]!;
    expect(both).toMatchObject({ path: 'cars/engine-oil.txt', keyword: { rank: 1 }, semantic: { rank: 1 } });
    // Fused by scores (decision 0071): the first of each list scores its weight, 1 + 1 (two
    // words: keyword weighs 1); by ranks, 1 / (60 + 1) twice.
    expect(both.score).toBeCloseTo(2, 10);
    expect((await store.search('dipstick lubricant', { mode: 'hybrid', fusion: 'ranks' }))[0]!.score).toBeCloseTo(2 / 61, 10);
    // A side of weight 0 leaves the other's order (each side's scores the right way up: bm25()
    // is lower for better matches, a cosine higher).
    for (const [side, other, question] of [
      ['keyword', 'semantic', 'oil dough mortgage kitten sleep passport'],
      ['semantic', 'keyword', 'How do I look after my new kitten or bake bread?'],
    ] as const) {
      const alone = (await store.search(question, { mode: side, limit: 10, minScore: -1 })).map((h) => h.path);
      const fused = (await store.search(question, { mode: 'hybrid', limit: 10, minScore: -1, weights: { [other]: 0, exact: 0 } as { keyword?: number; semantic?: number } })).map((h) => h.path);
      expect(alone.length, side).toBeGreaterThan(2);
      expect(fused.slice(0, alone.length), side).toEqual(alone);
    }
    // Filters apply before the floor: the one document under pets/ is unrelated to cars, and
    // below the relevance floor (search/floor.ts) it is no hit — unless minScore says otherwise.
    const filtered = await store.search('How often does my automobile require servicing?', { mode: 'semantic', pathPrefix: 'pets/' });
    expect(filtered.map((h) => h.path)).toEqual([]);
    const anyScore = await store.search('How often does my automobile require servicing?', { mode: 'semantic', pathPrefix: 'pets/', minScore: -1 });
    expect(anyScore.map((h) => h.path)).toEqual(['pets/felines.txt']);
    // `a NOT b` holds for semantic hits too, as `-b` does (it returned the note holding b).
    for (const mode of ['semantic', 'hybrid'] as const) {
      const question = '"how often does my automobile require servicing"'; // (one term: the NOT then holds for the whole query)
      expect((await store.search(question, { mode })).map((h) => h.path), mode).toContain('cars/engine-oil.txt');
      for (const q of [`${question} NOT dipstick`, `${question} AND NOT dipstick`, `${question} -dipstick`]) {
        expect((await store.search(q, { mode })).map((h) => h.path), `${mode}: ${q}`).not.toContain('cars/engine-oil.txt');
      }
    }
  });

  it('pages of a hybrid search are cut from one order, past the fused window too: every match once, none twice (Show more repeated and skipped)', { timeout: 120_000 }, async () => {
    const { store } = await newStore();
    store.useEmbedder(model);
    const birds = ['pelicans glide over the harbour at dawn', 'a pelican dives for fish near the pier', 'the pelican colony nests on the island', 'watching pelicans from the ferry deck', 'pelican chicks grow quickly in spring'];
    const weather = ['storm clouds gathered over the coast', 'a quiet morning by the sea', 'seabirds circled the fishing boats', 'gulls and terns along the shore'];
    for (let i = 0; i < 60; i++) await store.put(enc(`${birds[i % birds.length]} (note ${i})`), { path: `birds/n${String(i).padStart(2, '0')}.txt` });
    for (let i = 0; i < 20; i++) await store.put(enc(`${weather[i % weather.length]} (entry ${i})`), { path: `coast/e${String(i).padStart(2, '0')}.txt` });
    await store.indexStatus({ wait: true });
    // (With an exclusion too: each side's window is taken before it, so the filtered lists are short.)
    for (const [query, window] of [['pelican', 100], ['pelican', 20], ['pelican -colony', 20]] as const) {
      const options = { mode: 'hybrid' as const, window, minScore: -1 };
      const whole = (await store.search(query, { ...options, limit: 200 })).map((h) => h.path);
      const paged: string[] = [];
      for (let offset = 0; offset < 200; offset += 7) {
        const page = await store.search(query, { ...options, limit: 7, offset });
        paged.push(...page.map((h) => h.path));
        if (page.length < 7) break;
      }
      expect(paged, `${query}, window ${window}`).toEqual(whole);
      expect(new Set(paged).size, `${query}, window ${window}`).toBe(paged.length);
      if (query !== 'pelican') {
        expect(whole).toHaveLength(68); // 80, less the 12 colony notes
        continue;
      }
      // Every keyword match is there (past the window, keyword's come first), and semantic's after.
      const keyword = (await store.search('pelican', { mode: 'keyword', limit: 200 })).map((h) => h.path);
      expect(keyword).toHaveLength(60);
      for (const p of keyword) expect(whole).toContain(p);
    }
  });

  it('embeds each document once, and drops its vectors with it', { timeout: 60_000 }, async () => {
    let calls = 0;
    const counting: Embedder = { ...model, model: model.model, dims: model.dims, maxTokens: model.maxTokens, countTokens: (t) => model.countTokens(t), embed: (t) => ((calls += t.length), model.embed(t)), close: async () => undefined };
    const store = await labelledStore(counting);
    await store.search('anything at all', { mode: 'semantic' });
    const afterFirst = calls;
    expect(afterFirst).toBe(RETRIEVAL_SET.length + 1); // one chunk each, and the query
    await store.put(enc(RETRIEVAL_SET[0]!.text), { path: 'copies/felines.txt' }); // same bytes, another path
    await store.search('anything at all', { mode: 'semantic' });
    expect(calls).toBe(afterFirst + 1); // the query only
    await store.deletePath('pets/felines.txt');
    await store.deletePath('copies/felines.txt');
    const hits = await store.search('How should I look after my new kitten?', { mode: 'semantic', limit: 20 });
    expect(hits.map((h) => h.path)).not.toContain('pets/felines.txt');
  });
});

describe('index status', () => {
  it('tells how far embedding is; wait embeds everything pending, reporting progress as it goes', { timeout: 60_000 }, async () => {
    const hashing = new HashingEmbedderForTests();
    // Slowed, so the quarter-second progress reports have something to report.
    const slow: Embedder = Object.assign(Object.create(hashing) as Embedder, { embed: async (t: readonly string[]) => (await new Promise((r) => setTimeout(r, 40)), hashing.embed(t)) });
    const store = await labelledStore(slow);
    await store.put(enc('{"not": "prose"}'), { path: 'data.json', mediaType: 'application/json' });
    const total = RETRIEVAL_SET.length + 1;
    const before = (await store.indexStatus()).embedding!;
    expect(before.model).toBe(hashing.model);
    expect(before.documents + before.pending).toBe(total);
    const heard: number[] = [];
    const after = await store.indexStatus({ wait: true, onProgress: (s) => heard.push(s.embedding!.documents) });
    expect(after.embedding).toEqual({ model: hashing.model, documents: total, chunks: RETRIEVAL_SET.length, pending: 0 }); // JSON: no prose, no chunks
    expect(heard.length).toBeGreaterThan(0);
    expect(heard).toEqual([...heard].sort((a, b) => a - b));
    expect(heard.at(-1)!).toBeLessThanOrEqual(total);
  });

  it('a search with waitMs answers from what is embedded when the time runs out, says how many it could not see, and embedding goes on', { timeout: 60_000 }, async () => {
    const hashing = new HashingEmbedderForTests();
    const slow: Embedder = Object.assign(Object.create(hashing) as Embedder, { embed: async (t: readonly string[]) => (await new Promise((r) => setTimeout(r, 150)), hashing.embed(t)) });
    const store = await labelledStore(slow);
    const total = RETRIEVAL_SET.length; // 150 ms each: ~2 s to embed them all
    const t = performance.now();
    const partial = await store.search('kitten litter', { mode: 'hybrid', waitMs: 150 });
    const took = performance.now() - t;
    expect(took).toBeLessThan(1000); // not the whole backlog (~2 s: a bound that only catches a wait for all of it)
    expect(partial.notEmbedded).toBeGreaterThan(0);
    expect(partial.notEmbedded).toBeLessThan(total + 1);
    expect(partial[0]?.path).toBe('pets/felines.txt'); // the keyword side saw it
    // Keyword search never waits and is never partial.
    expect((await store.search('litter', { mode: 'keyword', waitMs: 0 })).notEmbedded).toBeUndefined();
    // The embedding it started goes on without a search waiting for it.
    for (let i = 0; i < 400 && (await store.indexStatus()).embedding!.pending > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await store.indexStatus()).embedding!.pending).toBe(0);
    const whole = await store.search('kitten litter', { mode: 'semantic', waitMs: 150 });
    expect(whole.notEmbedded).toBeUndefined();
    // Without waitMs a search waits for every document, as before.
    await store.put(enc('Kittens need a litter tray and kitten food.'), { path: 'pets/new.txt' });
    const all = await store.search('kitten litter', { mode: 'semantic', limit: 50 });
    expect(all.notEmbedded).toBeUndefined();
    expect(all.map((h) => h.path)).toContain('pets/new.txt');
  });

  it('background embedding goes on under a steady stream of puts, at a bounded share of the time', { timeout: 60_000 }, async () => {
    const hashing = new HashingEmbedderForTests();
    let embedMs = 0;
    const slow: Embedder = Object.assign(Object.create(hashing) as Embedder, {
      embed: async (t: readonly string[]) => {
        const t0 = performance.now();
        await new Promise((r) => setTimeout(r, 20));
        embedMs += performance.now() - t0;
        return hashing.embed(t);
      },
    });
    const { store } = await newStore();
    // A backlog longer than the test: 150 notes at 20 ms each, flat out 3 s.
    for (let n = 0; n < 150; n++) await store.put(enc(`Note ${n}: the garden needs watering and the hedge trimming.`), { path: `notes/${n}.txt` });
    store.useEmbedder(slow);
    const embedded = async () => (await store.indexStatus()).embedding!.documents;
    // Eight writers back to back: a put is always in flight, writes never go quiet.
    const t = performance.now();
    let i = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (performance.now() - t < 4500) {
          const n = i++;
          await store.put(enc(`{"n": ${n}}`), { path: `data/${n}.json`, mediaType: 'application/json' });
        }
      }),
    );
    const wall = performance.now() - t;
    const during = await embedded();
    expect(during).toBeGreaterThan(0); // it started (STARVED_MS) and went on beside the puts
    expect(embedMs / wall).toBeLessThan(0.35); // at about DUTY of the time, not flat out
  });

  it('background embedding waits for a stream of puts with moments between them to pause', { timeout: 60_000 }, async () => {
    // A client sending files one after another (or a browser's files on its ingest workers)
    // leaves moments with no put in flight. Embedding that starts in one takes a core from
    // the stream: it must wait for the writes to pause, as the indexer does.
    const hashing = new HashingEmbedderForTests();
    const calls: number[] = [];
    const counting: Embedder = Object.assign(Object.create(hashing) as Embedder, {
      embed: async (t: readonly string[]) => {
        calls.push(performance.now());
        return hashing.embed(t);
      },
    });
    const { store } = await newStore();
    for (let n = 0; n < 20; n++) await store.put(enc(`Note ${n}: the garden needs watering and the hedge trimming.`), { path: `notes/${n}.txt` });
    store.useEmbedder(counting); // a backlog, and a job armed now
    // 1.5 s of puts 5 ms apart: past the job's quiet time (500 ms), short of STARVED_MS.
    const ends: number[] = [];
    const t = performance.now();
    for (let n = 0; performance.now() - t < 1500; n++) {
      await store.put(enc(`Entry ${n}: the train left the station on time.`), { path: `log/${n}.txt` });
      ends.push(performance.now());
      await new Promise((r) => setTimeout(r, 5));
    }
    const last = ends.at(-1)!;
    // An embedding that started within 100 ms of a put's end started while the stream went on
    // (one that follows a stall of this process longer than that is not counted against it).
    const during = calls.filter((c) => c < last && c - Math.max(...ends.filter((e) => e <= c)) < 100);
    expect(during).toEqual([]);
    // Once the puts pause, everything is embedded without a search asking for it.
    const total = 20 + ends.length;
    const deadline = performance.now() + 20_000;
    while ((await store.indexStatus()).embedding!.documents < total && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect((await store.indexStatus()).embedding!.documents).toBe(total);
    await store.close();
  });

  it('embeds untyped documents as prose unless their path names another type: code is keyword search\'s', async () => {
    const { store } = await newStore();
    store.useEmbedder(new HashingEmbedderForTests());
    await store.put(enc('export function add(a, b) { return a + b; } // adds two numbers'), { path: 'src/add.js' });
    await store.put(enc('Buy milk and call the plumber about the leaking tap.'), { path: 'notes/todo' });
    await store.put(enc('# Read me\n\nThis project adds numbers.'), { path: 'README.md' });
    await store.put(enc('A pathless note about gardening.'));
    const e = (await store.indexStatus({ wait: true })).embedding!;
    expect(e).toMatchObject({ documents: 4, chunks: 3, pending: 0 });
    expect((await store.search('plumber tap', { mode: 'semantic' })).map((h) => h.path)).not.toContain('src/add.js');
  });

  it('says null for embedding when no embedder is in use', async () => {
    const store = await labelledStore();
    expect((await store.indexStatus({ wait: true })).embedding).toBeNull();
  });
});

describe('without a model', () => {
  it('semantic and hybrid say so (MODEL_UNAVAILABLE); keyword search works', async () => {
    const store = await labelledStore();
    await expect(store.search('kitten', { mode: 'semantic' })).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE' });
    await expect(store.search('kitten', { mode: 'hybrid' })).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE' });
    expect((await store.search('litter'))[0]?.path).toBe('pets/felines.txt');
  });
});

describe('in step with other writers', () => {
  it("another writer's embeddings and deletes reach a search at once, though a search looks again only after the database changed", async () => {
    let calls = 0;
    const hashing = new HashingEmbedderForTests();
    const counting: Embedder = { model: hashing.model, dims: hashing.dims, maxTokens: hashing.maxTokens, countTokens: (t) => hashing.countTokens(t), embed: (t) => ((calls += t.length), hashing.embed(t)), close: async () => undefined };
    const { store: a, dir } = await newStore();
    a.useEmbedder(counting);
    await a.put(enc('alpha beta gamma'), { path: 'a.txt' });
    const paths = async () => (await a.search('alpha delta', { mode: 'semantic', minScore: -1, limit: 50 })).map((h) => h.path).sort();
    expect(await paths()).toEqual(['a.txt']);
    expect(calls).toBe(2); // a.txt, then the question
    // Another connection writes and embeds: its commits are others' to this one (data_version).
    const b = await reopen(dir);
    b.useEmbedder(new HashingEmbedderForTests());
    await b.put(enc('delta epsilon'), { path: 'b.txt' });
    await b.search('delta', { mode: 'semantic' }); // b embeds b.txt
    await batchEnded();
    expect(await paths()).toEqual(['a.txt', 'b.txt']);
    expect(calls).toBe(3); // the question: b.txt was embedded by the other writer
    expect(await paths()).toEqual(['a.txt', 'b.txt']); // nothing changed: the same rows
    await b.deletePath('a.txt');
    await batchEnded();
    expect(await paths()).toEqual(['b.txt']);
    // This connection's own writes: a put embedded by its own search.
    await a.put(enc('zeta alpha'), { path: 'c.txt' });
    expect(await paths()).toEqual(['b.txt', 'c.txt']);
    expect(calls).toBe(7); // three questions, c.txt
  });
});

describe('the hashing embedder (tests only)', () => {
  it('fails the meaning test the model passes', { timeout: 60_000 }, async () => {
    const store = await labelledStore(new HashingEmbedderForTests());
    const semantic = await firsts(store, 'meaning', 'semantic');
    console.log(`hashing embedder: ${semantic}/${RETRIEVAL_SET.length} meaning-only questions answered first`);
    expect(semantic).toBeLessThanOrEqual(3);
  });
});
