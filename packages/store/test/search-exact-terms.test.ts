/**
 * A question's identifiers, found as written (decision 0068, exact-terms.ts): known answers for
 * what counts as one and what its pattern finds; keyword search that no longer takes `0.9.0,
 * 0.9.5` for `9.0.0`; hybrid search with the real model that no longer fuses the one document
 * holding an identifier down below documents that only resemble the question (a trial).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMiniLmOnWorker } from '../src/node/embed-away.js';
import type { Embedder } from '../src/semantic/embedder.js';
import { exactTerms, onlyExact } from '../src/search/exact-terms.js';
import { parseQuery } from '../src/search/grammar.js';
import { toMatch } from '../src/search/fts.js';
import { newStore } from './helpers/store.js';

const enc = (t: string) => new TextEncoder().encode(t);
const terms = (q: string) => exactTerms(parseQuery(q)).map((x) => x.term.text);
const holds = (q: string, text: string) => exactTerms(parseQuery(q)).some((x) => x.pattern.test(text));

describe('which words are identifiers', () => {
  it('versions, joined names, letters with digits and camelCase are; words, ordinals, hyphenated words and abbreviations are not', () => {
    expect(terms('what changed in qs 6.17.0?')).toEqual(['6.17.0?']);
    expect(terms('ERR_REQUIRE_ESM node:fs os.path.join user@example.com C:\\temp\\x')).toEqual(['ERR_REQUIRE_ESM', 'node:fs', 'os.path.join', 'user@example.com', 'C:\\temp\\x']);
    expect(terms('sha256 x86 useEffect getElementById utf-8 covid-19')).toEqual(['sha256', 'x86', 'useEffect', 'getElementById', 'utf-8', 'covid-19']);
    expect(terms('the 2nd and 3rd of the 1990s, 10 tips, e-mail, state-of-the-art, e.g. U.S. JavaScript GitHub don\'t')).toEqual([]);
    // Phrases holding one are one term; prefixes and NOT's right side are not asked for.
    expect(terms('"release 9.0.0" notes 1.2* -3.4.5 a NOT 6.7.8')).toEqual(['release 9.0.0']);
  });

  it('a question of identifiers alone, one of them joined, is checked; one with other words is not', () => {
    const only = (q: string) => onlyExact(parseQuery(q), exactTerms(parseQuery(q)));
    expect(only('9.0.0')).toBe(true);
    expect(only('ERR_REQUIRE_ESM useEffect')).toBe(true);
    expect(only('useEffect')).toBe(false); // (one word: the index's word is it)
    expect(only('what changed in 9.0.0')).toBe(false);
  });

  it('finds the identifier as written, whole: not inside a longer number, its words not across other punctuation', () => {
    expect(holds('9.0.0', 'released 9.0.0.')).toBe(true);
    expect(holds('9.0.0', 'Release v9.0.0 is tagged')).toBe(true);
    expect(holds('9.0.0', '9.0.0-beta.1')).toBe(true);
    for (const not of ['0.9.0, 0.9.5', '19.0.0', '1.9.0.0', '9.0.0.1', '9 0 0', 'x9.0.0']) expect(holds('9.0.0', not), not).toBe(false);
    expect(holds('ERR_REQUIRE_ESM', 'throws ERR_REQUIRE_ESM when')).toBe(true);
    expect(holds('ERR_REQUIRE_ESM', 'err: require esm')).toBe(false);
    expect(holds('os.path', 'os.path.join(a, b)')).toBe(true); // (a name inside a qualified one)
    expect(holds('useEffect', 'React.useEffect(() => {})')).toBe(true);
    expect(holds('useEffect', 'two useEffects')).toBe(true); // (as the index's stems let it)
    expect(holds('useEffect', 'reuseEffect')).toBe(false);
    expect(holds('"release 9.0.0"', 'Release  9.0.0 notes')).toBe(true);
    // (Found in review.) A phrase's other words end as their stems let them; a dash is any
    // dash, a `_` may be escaped as Markdown does; `_` is part of a name; a number's own joiner
    // does not continue it.
    expect(holds('"release 9.0.0"', 'Released 9.0.0')).toBe(true);
    for (const dash of ['COVID-19', 'COVID\u201119', 'COVID\u201319']) expect(holds('covid-19', dash), dash).toBe(true);
    expect(holds('ERR_REQUIRE_ESM', 'see ERR\\_REQUIRE\\_ESM in the docs')).toBe(true);
    expect(holds('ERR_INVALID_URL', 'ERR_INVALID_URL_SCHEME')).toBe(false);
    expect(holds('ERR_REQUIRE_ESM', 'MY_ERR_REQUIRE_ESM')).toBe(false);
    expect(holds('MALLOC_CHECK_', 'export MALLOC_CHECK_=3')).toBe(true); // (its own _ kept)
    expect(holds('MALLOC_CHECK_', 'MALLOC_CHECK_X')).toBe(false);
    expect(holds('1-2', 'pages 0-1-2')).toBe(false);
    expect(holds('10:30', '9:10:30')).toBe(false);
    // A version is the version of a Debian one (an epoch before, a revision after) and an
    // address is one with its netmask: they were "in no document as written" (a trial).
    expect(holds('2.39.2', 'gdk-pixbuf (2.39.2-3) experimental')).toBe(true);
    expect(holds('1.2.13', 'zlib (1:1.2.13.dfsg-1) unstable')).toBe(true);
    expect(holds('10.0.0.1', 'see ipaddr 10.0.0.1/8 here')).toBe(true);
    expect(holds('2.39.2', '2.39.2~rc1')).toBe(true);
    for (const not of ['12.39.2', '2.39.20', '2.39.2.1', '1.2.39.2']) expect(holds('2.39.2', not), not).toBe(false);
  });

  it('a version asked for is searched written with a v too', () => {
    expect(toMatch(parseQuery('1.0.2'))).toBe('("1.0.2" OR "v1.0.2")');
    expect(toMatch(parseQuery('"1.0.2" x'))).toBe('("1.0.2" OR "x")');
  });

  it('any query gives patterns that compile and run', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), fc.string({ maxLength: 200 }), (q, text) => {
        for (const x of exactTerms(parseQuery(q))) x.pattern.test(text);
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'Z', '1', '.', '_', '-', ':', '/', '\\', '@', '$', '#', ' ', '"', '(', '*', '?', '[', 'é'), { maxLength: 30 }), (cs) => {
        for (const x of exactTerms(parseQuery(cs.join('')))) x.pattern.test(cs.join(''));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('keyword search with identifiers', () => {
  it('finds a version as written (and as v9.0.0), never its words across punctuation or inside a longer number', async () => {
    const { store } = await newStore();
    const docs: Record<string, string> = {
      'lib/v9.md': 'What changed in 9.0.0: the parser was rewritten.',
      'lib/tagged.md': 'Release v9.0.0 is tagged.',
      'other/versions.md': 'Supported versions: 0.9.0, 0.9.5 and 1.0.',
      'lib/old.md': 'Versions 19.0.0 and 1.9.0.0 are old; 9.0.0.1 is a patch.',
      'node/errors.md': 'ERR_REQUIRE_ESM is thrown when require() loads an ES module.',
      'node/err2.md': 'An err: require esm modules with import instead.',
    };
    for (const [path, text] of Object.entries(docs)) await store.put(enc(text), { path });
    const paths = async (q: string, limit = 20) => (await store.search(q, { mode: 'keyword', limit })).map((h) => h.path);
    expect((await paths('9.0.0')).sort()).toEqual(['lib/tagged.md', 'lib/v9.md']);
    // Asked with a v, the same version: found written either way (it found neither: a trial).
    expect((await paths('v9.0.0')).sort()).toEqual(['lib/tagged.md', 'lib/v9.md']);
    expect((await store.search('V9.0.0', { mode: 'keyword' })).parsedAs).toBe('9.0.0');
    expect(await paths('ERR_REQUIRE_ESM')).toEqual(['node/errors.md']);
    // With other words: what matched the version's words across punctuation comes after what holds it.
    const mixed = await paths('9.0.0 versions');
    expect(mixed.slice(0, 2).sort()).toEqual(['lib/tagged.md', 'lib/v9.md']);
    expect(mixed.slice(2).sort()).toEqual(['lib/old.md', 'other/versions.md']);
    // Pages are cut from that one order.
    const paged = [...(await store.search('9.0.0 versions', { mode: 'keyword', limit: 1 })), ...(await store.search('9.0.0 versions', { mode: 'keyword', limit: 3, offset: 1 }))].map((h) => h.path);
    expect(paged).toEqual(mixed);
    // Required, a look-alike match is none (found in review: it only went last).
    await store.put(enc('lodash 4.17, 21 bugs'), { path: 'd/false.md' });
    await store.put(enc('lodash 4.17.21 fixes'), { path: 'd/true.md' });
    expect(await paths('lodash AND 4.17.21')).toEqual(['d/true.md']);
  });

  it('a name found nowhere as written is found as its words in a row, and says so; its words only apart, it says how to ask for them', async () => {
    const { store } = await newStore();
    await store.put(enc('# Harbour master meeting\nThe ferry leaves at noon; import node:fs first.'), { path: 'h.md', meta: { author: 'alice' } });
    await store.put(enc('The limit is in /proc/sys/fs/inotify/max_user_watches (one watch a directory).'), { path: 'inotify.txt' });
    await store.put(enc('Released 0.9.0, 0.9.5 and 19.0.0.'), { path: 'news.txt' });
    const answer = async (q: string, o: { offset?: number } = {}) => {
      const hits = await store.search(q, { mode: 'keyword', ...o });
      return [hits.map((h) => h.path), hits.fallbacks ?? []];
    };
    // Written another way (a sysctl's name is its file's path): found, and said. Before, these
    // found nothing (a collection of manual pages, where a plain BM25 found them first).
    expect(await answer('fs.inotify.max_user_watches')).toEqual([['inotify.txt'], ['"fs.inotify.max_user_watches" is in none of the documents searched as written: found as its words in a row ("fs inotify max user watches"), other characters between them']]);
    expect(await answer('fs.inotify.max_user_watches', { offset: 1 })).toEqual([[], [expect.stringMatching(/as its words in a row/)]]); // (a page past them)
    expect(await answer('harbour:master')).toEqual([['h.md'], [expect.stringMatching(/^"harbour:master" is in none .* \("harbour master"\)/)]]);
    expect(await answer('author:alice')).toEqual([['h.md'], [expect.stringMatching(/as its words in a row \("author alice"\)/)]]);
    // Words apart, not in a row: said, with how to ask for them (changed on purpose: the two above were said so).
    expect(await answer('ferry:noon')).toEqual([[], ['"ferry:noon" is in no document as written (it is read as one identifier); its words are in some, apart: search ferry noon']]);
    expect(await answer('author alice')).toEqual([['h.md'], []]);
    expect(await answer('node:fs')).toEqual([['h.md'], []]); // (found as written: nothing to say)
    expect(await answer('plan:final')).toEqual([[], []]); // (its words are in no document either)
    // A number keeps its check: 9.0.0 in the words of 0.9.0, 0.9.5 would be another version.
    expect((await answer('9.0.0'))[0]).toEqual([]);
    // A name ending in _ is found as written (its _ was taken off, and then it was in no document).
    await store.put(enc('Set MALLOC_CHECK_ to 3 to abort on heap damage.'), { path: 'malloc.txt' });
    expect(await answer('MALLOC_CHECK_')).toEqual([['malloc.txt'], []]);
    expect(await answer('MALLOC_CHECK')).toEqual([['malloc.txt'], [expect.stringMatching(/as its words in a row \("MALLOC CHECK"\)/)]]);
  });
});

describe('hybrid search with identifiers, the real model', () => {
  let model: Embedder & { close?: () => Promise<void> };
  beforeAll(async () => {
    model = await loadMiniLmOnWorker();
  }, 120_000);
  afterAll(async () => {
    await model?.close?.();
  });

  it('the one document holding the identifier asked for comes first, found by the identifier', async () => {
    const { store } = await newStore();
    const docs: Record<string, string> = {
      'notes/dns.md': 'getaddrinfo EAI_AGAIN registry.npmjs.org: the resolver timed out; retry, or set a longer timeout in resolv.conf.',
      'guides/cli.md': 'How do I use the command line? Use the help flag to see how each command is used, with examples of how to use it.',
      'guides/start.md': 'Getting started: how to use this library, step by step. Use it in a project by importing it.',
      'guides/config.md': 'How do I use the configuration file? Use a JSON file; how to use each option is described below.',
      'guides/api.md': 'Using the API: how do I use the client? Create one, then use its methods.',
      'guides/plugins.md': 'How to use plugins: install, then use them from your configuration.',
      'guides/faq.md': 'Frequently asked: how do I use it offline? How do I use it behind a proxy?',
    };
    for (const [path, text] of Object.entries(docs)) await store.put(enc(text), { path });
    store.useEmbedder(model);
    const hits = await store.search('how do I use EAI_AGAIN', { mode: 'hybrid', limit: 5 });
    expect(hits[0]).toMatchObject({ path: 'notes/dns.md', matched: expect.arrayContaining(['keyword', 'exact']), exact: { rank: 1 } });
    // Asked without the identifier, the same question is the guides'.
    expect((await store.search('how do I use it', { mode: 'hybrid', limit: 3 })).map((h) => h.path)).not.toContain('notes/dns.md');
    // The exact list can be weighed out: then the order is the two lists' fusion, as before
    // (where the identifier's document came second).
    const two = await store.search('how do I use EAI_AGAIN', { mode: 'hybrid', limit: 7, weights: { exact: 0 } });
    expect(two.findIndex((h) => h.path === 'notes/dns.md')).toBe(1);
    // A question of identifiers alone is its keyword list: nothing fused twice.
    const alone = await store.search('EAI_AGAIN', { mode: 'hybrid', limit: 3 });
    expect(alone[0]).toMatchObject({ path: 'notes/dns.md', matched: ['keyword'] });
  }, 120_000);

  it('a query of identifiers alone finds, by meaning too, only documents holding one as written (its neighbours held 0.5 and 1.0.5: a trial)', async () => {
    const { store } = await newStore();
    const docs: Record<string, string> = {
      'zstd/NEWS': 'v1.5.4 (Feb 2023): faster decompression, a new streaming API.',
      'zstd/man': 'zstd 1.5.4 compresses files with Zstandard.',
      'jbig/changelog': 'version 0.5 (1995-05-28): first release of the library.',
      'fribidi/NEWS': 'Changes between 1.0.5 and 1.0.6: bidi fixes.',
      'tmux/CHANGES': 'CHANGES FROM 3.3 TO 3.3a: fix a crash; set ZSTD_CLEVEL for nothing.',
    };
    for (const [path, text] of Object.entries(docs)) await store.put(enc(text), { path });
    store.useEmbedder(model);
    // With no floor (minScore -1) semantic ranks every document: only the holders stay.
    const holders = ['zstd/NEWS', 'zstd/man'];
    expect((await store.search('1.5.4', { mode: 'semantic', minScore: -1, limit: 10 })).map((h) => h.path).sort()).toEqual(holders);
    expect((await store.search('1.5.4', { mode: 'hybrid', minScore: -1, limit: 10 })).map((h) => h.path).sort()).toEqual(holders);
    expect((await store.search('3.3a ZSTD_CLEVEL', { mode: 'hybrid', minScore: -1, limit: 10 })).map((h) => h.path)).toEqual(['tmux/CHANGES']);
    expect((await store.search('3.3a ZSTD_CLEVEL', { mode: 'semantic', minScore: -1, limit: 10 })).map((h) => h.path)).toEqual(['tmux/CHANGES']);
    // A name no document holds as written: its words in a row, on both sides (it found nothing).
    await store.put(enc('The limit is in /proc/sys/fs/inotify/max_user_watches (one watch a directory).'), { path: 'man/inotify' });
    for (const mode of ['hybrid', 'semantic'] as const) {
      const hits = await store.search('fs.inotify.max_user_watches', { mode, limit: 3 });
      expect([mode, hits[0]?.path, hits.fallbacks]).toEqual([mode, 'man/inotify', [expect.stringMatching(/found as its words in a row/)]]);
    }
  }, 120_000);
});
