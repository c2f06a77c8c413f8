/**
 * A misspelt word read as the index's nearest (decision 0069, typos.ts): a query that found
 * nothing for a typo finds what was meant and says so; a query with words that match (its
 * misspelt word said), a word nobody misspelt and a phrase are searched as typed.
 */
import { describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import { editDistance } from '../src/search/typos.js';
import { HashingEmbedderForTests } from '../src/semantic/hashing-embedder.js';
import { newStore } from './helpers/store.js';

const enc = (t: string) => new TextEncoder().encode(t);

describe('edit distance', () => {
  it('counts insertions, deletions, substitutions and swaps of neighbours once each, and stops past its bound', () => {
    expect(editDistance('retreival', 'retrieval', 2)).toBe(1); // a swap
    expect(editDistance('informaton', 'information', 2)).toBe(1);
    expect(editDistance('libary', 'library', 2)).toBe(1);
    expect(editDistance('kitten', 'sitting', 5)).toBe(3);
    expect(editDistance('abc', 'abc', 0)).toBe(0);
    expect(editDistance('', 'abc', 5)).toBe(3);
    expect(editDistance('dislocation', 'discovery', 2)).toBe(3); // (past the bound: bound + 1)
    expect(editDistance('ca', 'abc', 3)).toBe(3); // (optimal string alignment: a swap is not edited again)
  });
});

describe('typos', () => {
  async function library(): Promise<Store> {
    const { store } = await newStore();
    const docs: Record<string, string> = {
      'a.md': 'Information retrieval systems rank documents.',
      'b.md': 'The library catalogue lists books and journals.',
      'c.md': 'Relevance feedback improves retrieval.',
      'd.md': 'Bread recipes: flour, water, salt.',
    };
    for (const [path, text] of Object.entries(docs)) await store.put(enc(text), { path });
    return store;
  }

  it('a query that finds nothing for a typo finds what was meant, and says what it searched in a word of the store', async () => {
    const store = await library();
    const hits = await store.search('retreival', { mode: 'keyword' });
    expect(hits.map((h) => h.path).sort()).toEqual(['a.md', 'c.md']);
    expect(hits.fallbacks).toEqual(['"retreival" is in no document: searched "retrieval" instead']);
    expect(hits.parsedAs).toBe('retrieval'); // (a word, not the index's stem `retriev`)
    const two = await store.search('informaton retreival?', { mode: 'keyword' });
    expect(two.map((h) => h.path).sort()).toEqual(['a.md', 'c.md']);
    expect(two.fallbacks).toEqual(['"informaton" is in no document: searched "information" instead', '"retreival" is in no document: searched "retrieval" instead']);
    expect(two.parsedAs).toBe('information OR retrieval');
    expect((await store.search('libary', { mode: 'keyword' })).fallbacks).toEqual(['"libary" is in no document: searched "library" instead']);
  });

  it('searches as typed a query whose other words match, a word held, a phrase, a short word, and words far from any', async () => {
    const store = await library();
    const asTyped = async (q: string) => {
      const hits = await store.search(q, { mode: 'keyword' });
      expect(hits.fallbacks ?? [], q).toEqual([]);
      return hits.map((h) => h.path);
    };
    // A question whose other words match is answered by them; its misspelt word is said, not read.
    // (Looked up among the words sharing its first three letters: a search that found something pays little.)
    const other = await store.search('relevance feedbakc', { mode: 'keyword' });
    expect(other.map((h) => h.path)).toEqual(['c.md']);
    expect(other.fallbacks).toEqual(['"feedbakc" is in no document: searched as typed, with the other words ("feedback" is in some)']);
    expect(await asTyped('revelance feedback')).toEqual(['c.md']); // (a typo within the first three letters: not looked for)
    expect((await store.search('relevance feedbakc', { mode: 'keyword', typos: false })).fallbacks ?? []).toEqual([]);
    store.useEmbedder(new HashingEmbedderForTests()); // (hybrid's keyword side says it too)
    expect((await store.search('relevance feedbakc', { mode: 'hybrid' })).fallbacks).toEqual(other.fallbacks);
    expect(await asTyped('dislocation feedback')).toEqual(['c.md']); // (no word near it: nothing to say)
    expect(await asTyped('retrieval')).toEqual(['c.md', 'a.md']);
    expect(await asTyped('"retreival systems"')).toEqual([]);
    expect(await asTyped('brd')).toEqual([]); // (three letters: too often another word)
    expect(await asTyped('qwertyuiop')).toEqual([]);
  });

  it('never reads a word as a stop word, nor says one (a stop word\'s term makes words nobody wrote)', async () => {
    const store = await library();
    await store.put(enc('Is there any reason to wait?'), { path: 'any.md' });
    await store.put(enc('We were digging holes in the garden.'), { path: 'dig.md' });
    // `animal` is one edit from `ani`, the index's term of `any`: it was searched as `any`.
    const animal = await store.search('animal', { mode: 'keyword' });
    expect([animal.map((h) => h.path), animal.fallbacks ?? []]).toEqual([[], []]);
    // ...and a question that matched on its other words said `"anies" is in some`.
    const digging = await store.search('animal digging', { mode: 'keyword' });
    expect(digging.map((h) => h.path)).toEqual(['dig.md']);
    expect(digging.fallbacks ?? []).toEqual([]);
  });

  it('says and searches a word a document holds, never one made from the stem (`decise`: a trial)', async () => {
    const { store } = await newStore();
    await store.put(enc('Meeting notes. Decision: hire two engineers.'), { path: 'notes.md' });
    await store.put(enc('Hiring plan for the harbour office.'), { path: 'plan.md' });
    const read = await store.search('decide', { mode: 'keyword' });
    expect([read.map((h) => h.path), read.parsedAs, read.fallbacks]).toEqual([['notes.md'], 'decision', ['"decide" is in no document: searched "decision" instead']]);
    const noticed = await store.search('What did we decide about hiring?', { mode: 'keyword' });
    expect(noticed.fallbacks).toEqual(['"decide" is in no document: searched as typed, with the other words ("decision" is in some)']);
    // A word only a path holds is read there.
    await store.put(enc('nothing of it here'), { path: 'retrospectives/2026.md' });
    const inPath = await store.search('retrospectiv', { mode: 'keyword' });
    expect(inPath.parsedAs).toBe('retrospectives');
  });

  it('a tie goes to the word nearest as typed; the word said is the one nearest to what was typed (a trial: singal, expresion)', async () => {
    const { store } = await newStore();
    await store.put(enc('The signal handler runs.'), { path: 's.txt' });
    await store.put(enc('A single file, and one more single line.'), { path: 'one.txt' });
    await store.put(enc('express-rate-limit is middleware for express.'), { path: 'express.md' });
    await store.put(enc('A regular expression describes strings.'), { path: 're.md' });
    const singal = await store.search('singal', { mode: 'keyword' });
    expect([singal.map((h) => h.path), singal.parsedAs]).toEqual([['s.txt'], 'signal']);
    const expresion = await store.search('expresion', { mode: 'keyword' });
    expect(expresion.parsedAs).toBe('expression');
    expect(expresion.fallbacks).toEqual(['"expresion" is in no document: searched "expression" instead']);
  });

  it('a store opened read-only reads typos too', async () => {
    const { store, dir } = await newStore();
    await store.put(enc('Information retrieval systems.'), { path: 'a.md' });
    await store.close();
    const ro = await Store.open(dir, { readonly: true });
    try {
      const hits = await ro.search('retreival', { mode: 'keyword' });
      expect(hits.map((h) => h.path)).toEqual(['a.md']);
      expect(hits.fallbacks).toHaveLength(1);
    } finally {
      await ro.close();
    }
  });
});
