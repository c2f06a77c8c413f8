/**
 * Search through history (decision 0056): older versions (`allVersions`) and one snapshot's
 * files (`snapshot`); each document's text indexed once, whatever holds it; a snapshot's words
 * gone once GC has dropped what only it held.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import { decodeVarints } from '../src/search/fts-totals.js';
import { newStore, tempDir } from './helpers/store.js';

const text = (t: string) => new TextEncoder().encode(t);
const named = (hits: { path: string | null; version?: number }[]) => hits.map((h) => (h.version === undefined ? h.path : `${h.path}@${h.version}`));

describe('search through history', () => {
  it('finds a word only an older version has with allVersions, and not without', async () => {
    const { store } = await newStore();
    await store.put(text('Meeting notes: the zeppelin budget was approved.'), { path: 'notes.md' });
    await store.put(text('Meeting notes: the budget moved to next year.'), { path: 'notes.md' });
    await store.put(text('Another file about budgets.'), { path: 'other.md' });
    expect(named(await store.search('zeppelin'))).toEqual([]);
    expect(named(await store.search('zeppelin', { allVersions: true, collapse: false }))).toEqual(['notes.md@1']);
    // The latest versions are found too, each with its number; filters hold for the paths.
    expect(named(await store.search('budget', { allVersions: true, collapse: false })).sort()).toEqual(['notes.md@1', 'notes.md@2', 'other.md@1']);
    expect(named(await store.search('budget path:notes', { allVersions: true, collapse: false })).sort()).toEqual(['notes.md@1', 'notes.md@2']);
    const hit = (await store.search('zeppelin', { allVersions: true, collapse: false }))[0]!;
    expect(hit).toMatchObject({ matched: ['keyword'], version: 1 });
    expect(hit.snippet).toContain('<mark>zeppelin</mark>');
    // A deleted path's versions are typed by name, as a read by path types them (null: a trial).
    await store.deletePath('notes.md', { keepVersions: true });
    expect((await store.search('zeppelin', { allVersions: true, collapse: false }))[0]).toMatchObject({ path: 'notes.md', version: 1, mediaType: 'text/markdown' });
    // By words only: another mode is said to be unavailable there.
    await expect(store.search('zeppelin', { allVersions: true, collapse: false, mode: 'semantic' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('shows the same bytes at several paths and versions once, the others in alsoAt; collapse: false, a hit each (a trial: 4 of 5 hits were one manual)', async () => {
    const { store } = await newStore();
    const manual = text('gold(1): Keep (don\'t delete) input files\n');
    for (const p of ['man1/gold.1', 'man1/ld.gold.1', 'x/gold.1', 'y/gold.1']) await store.put(manual, { path: p });
    await store.put(text('replaced'), { path: 'x/gold.1' });
    await store.put(text('a different page about gold files'), { path: 'z/other.1' });
    const hits = await store.search('gold files', { allVersions: true });
    expect(hits.map((h) => h.path).sort()).toEqual(['man1/gold.1', 'z/other.1'].sort());
    const one = hits.find((h) => h.path === 'man1/gold.1')!;
    expect(one.version).toBe(1);
    expect([...(one.alsoAt ?? [])].sort()).toEqual(['man1/ld.gold.1@1', 'x/gold.1@1', 'y/gold.1@1']);
    const each = await store.search('gold files', { allVersions: true, collapse: false });
    expect(named(each).sort()).toEqual(['man1/gold.1@1', 'man1/ld.gold.1@1', 'x/gold.1@1', 'y/gold.1@1', 'z/other.1@1']);
    // A page of two documents reads as far as it takes to find them.
    expect((await store.search('gold files', { allVersions: true, limit: 2 })).map((h) => h.path).sort()).toEqual(['man1/gold.1', 'z/other.1'].sort());
  });

  it('filters and pages every version without losing or repeating hits (found in review)', async () => {
    const { store } = await newStore();
    // Far better matches elsewhere: a filter must not empty the page the one match passing it is on.
    for (let i = 0; i < 100; i++) await store.put(text(`harbour harbour harbour note ${i}`), { path: `a/${i}.txt` });
    await store.put(text(`harbour ${'filler words here '.repeat(200)}`), { path: 'b/only.txt' });
    expect(named(await store.search('harbour path:b/', { allVersions: true, collapse: false, limit: 5 }))).toEqual(['b/only.txt@1']);
    expect(named(await store.search('harbour', { allVersions: true, collapse: false, limit: 5, pathPrefix: 'b/' }))).toEqual(['b/only.txt@1']);
    // Exclusions hold through versions too: `-path:` by the paths hits name, `-tag:` by the
    // current entry — and a path deleted with its versions kept has no tag to exclude it.
    expect(named(await store.search('harbour filler -path:a/', { allVersions: true, collapse: false, limit: 5 }))).toEqual(['b/only.txt@1']);
    expect(named(await store.search('harbour NOT path:a/', { allVersions: true, collapse: false, limit: 200 }))).toEqual(['b/only.txt@1']);
    await store.put(text('harbour tagged'), { path: 'c/tagged.txt', tags: ['skip'] });
    await store.put(text('harbour gone'), { path: 'c/gone.txt' });
    await store.deletePath('c/gone.txt', { keepVersions: true });
    expect(named(await store.search('harbour path:c/ -tag:skip', { allVersions: true, collapse: false, limit: 20 }))).toEqual(['c/gone.txt@1']);
    // Equal scores everywhere: pages of 7 are parts of the one order, none lost or repeated.
    for (let i = 0; i < 40; i++) {
      const path = `p/${String(39 - i).padStart(2, '0')}.txt`;
      await store.put(text(`quay boat q${String(i).padStart(2, '0')}`), { path });
      await store.put(text(`quay boat r${String(i).padStart(2, '0')}`), { path });
    }
    const all = named(await store.search('quay', { allVersions: true, collapse: false, limit: 200 }));
    expect(all).toHaveLength(80);
    const paged: (string | null)[] = [];
    for (let offset = 0; offset < all.length; offset += 7) paged.push(...named(await store.search('quay', { allVersions: true, collapse: false, limit: 7, offset })));
    expect(paged).toEqual(all);
    await store.close();
  });

  it('indexes each document once: a version made latest again leaves the history index', async () => {
    const { store, dir } = await newStore();
    const a = text('first draft with a walrus');
    await store.put(a, { path: 'draft.txt' });
    await store.put(text('second draft'), { path: 'draft.txt' });
    await store.put(a, { path: 'copy.txt' }); // the same document at another path: shown, so not history
    expect(named(await store.search('walrus', { allVersions: true, collapse: false })).sort()).toEqual(['copy.txt@1', 'draft.txt@1']);
    await store.put(text('third draft with an otter'), { path: 'copy.txt' });
    expect(named(await store.search('walrus', { allVersions: true, collapse: false })).sort()).toEqual(['copy.txt@1', 'draft.txt@1']);
    await store.put(a, { path: 'draft.txt' }); // the first draft is latest again
    expect(named(await store.search('walrus', { allVersions: true, collapse: false })).sort()).toEqual(['copy.txt@1', 'draft.txt@1', 'draft.txt@3']);
    await store.close();
    const db = new Database(join(dir, 'kura.db'), { readonly: true });
    const docs = db.prepare('SELECT COUNT(*) AS n FROM documents').get() as { n: number };
    const shown = db.prepare('SELECT COUNT(DISTINCT doc_id) AS n FROM entries').get() as { n: number };
    const history = db.prepare('SELECT COUNT(*) AS n FROM historic_docs').get() as { n: number };
    const both = db.prepare('SELECT COUNT(*) AS n FROM historic_docs h JOIN entries e ON e.doc_id = h.doc_id').get() as { n: number };
    db.close();
    expect(history.n).toBe(docs.n - shown.n); // every other document, once
    expect(both.n).toBe(0); // none indexed twice
  });

  it('finds every version of a path of many spans, page by page (history spans, 32 versions at most)', async () => {
    const { store, dir } = await newStore();
    for (let v = 1; v <= 70; v++) await store.put(text(`kestrel log\nentry w${v} written\n`), { path: 'log.txt' });
    await store.put(text('kestrel elsewhere'), { path: 'other.txt' });
    const all = named(await store.search('kestrel', { allVersions: true, collapse: false, limit: 200 }));
    expect([...all].sort()).toEqual([...Array.from({ length: 70 }, (_, i) => `log.txt@${i + 1}`), 'other.txt@1'].sort());
    const paged: (string | null)[] = [];
    for (let offset = 0; offset < all.length; offset += 9) paged.push(...named(await store.search('kestrel', { allVersions: true, collapse: false, limit: 9, offset })));
    expect(paged).toEqual(all);
    // One version's own word: that version alone, whichever span it is in.
    for (const v of [1, 32, 33, 64, 70]) expect(named(await store.search(`w${v}`, { allVersions: true, collapse: false }))).toEqual([`log.txt@${v}`]);
    // More versions later: the last span is made again, the others kept.
    for (let v = 71; v <= 75; v++) await store.put(text(`kestrel log\nentry w${v} written\n`), { path: 'log.txt' });
    expect(named(await store.search('w73 OR w2', { allVersions: true, collapse: false })).sort()).toEqual(['log.txt@2', 'log.txt@73']);
    expect(await store.search('kestrel', { allVersions: true, collapse: false, limit: 200 })).toHaveLength(76);
    await store.close();
    const db = new Database(join(dir, 'kura.db'), { readonly: true });
    const spans = db.prepare("SELECT s.id, s.first, s.last FROM history_spans s JOIN history_paths p ON p.id = s.path_id WHERE p.path = 'log.txt' ORDER BY s.first").all();
    db.close();
    expect(spans.map((r) => [(r as { first: number }).first, (r as { last: number }).last])).toEqual([
      [1, 32],
      [33, 64],
      [65, 75],
    ]);
  });

  it('makes again only the spans a change touches (a version restored: its span in place, and the last)', async () => {
    const { store, dir } = await newStore();
    const v = (n: number) => text(`tern log\nentry w${n} written\n`);
    for (let n = 1; n <= 70; n++) await store.put(v(n), { path: 'log.txt' });
    await store.search('tern', { allVersions: true, collapse: false });
    const spans = () => {
      const db = new Database(join(dir, 'kura.db'), { readonly: true });
      try {
        return db.prepare("SELECT s.id AS id, s.first AS first, s.last AS last FROM history_spans s JOIN history_paths p ON p.id = s.path_id WHERE p.path = 'log.txt' ORDER BY s.first").all() as { id: number; first: number; last: number }[];
      } finally {
        db.close();
      }
    };
    const before = spans();
    expect(before.map((x) => [x.first, x.last])).toEqual([[1, 32], [33, 64], [65, 70]]);
    // Version 1's bytes again: version 71 shows the document version 1 names.
    await store.put(v(1), { path: 'log.txt', mediaType: 'text/markdown' });
    expect(named(await store.search('w1', { allVersions: true, collapse: false })).sort()).toEqual(['log.txt@1', 'log.txt@71']);
    const after = spans();
    expect(after.map((x) => [x.first, x.last])).toEqual([[1, 32], [33, 64], [65, 71]]);
    expect(after[1]!.id).toBe(before[1]!.id); // untouched
    expect(after[0]!.id).not.toBe(before[0]!.id); // made again in place
    expect(await store.search('tern', { allVersions: true, collapse: false, limit: 200 })).toHaveLength(71);
    // Its first version forgotten, then another restored: the span keeps its range, once (found
    // in review: a remade span starting at its oldest version left was added beside the old one).
    await store.deleteVersion('log.txt', 1);
    await store.put(v(2), { path: 'log.txt' });
    const hits = named(await store.search('tern', { allVersions: true, collapse: false, limit: 200 }));
    expect(hits).toHaveLength(71);
    expect(new Set(hits).size).toBe(71);
    expect(spans().map((x) => [x.first, x.last])).toEqual([[1, 32], [33, 64], [65, 72]]);
    await store.close();
  });

  it('holds each version to the query exactly, though a span holds several versions\' lines', async () => {
    const { store } = await newStore();
    await store.put(text('alpha one\nfirst\nother line'), { path: 'n.txt' });
    await store.put(text('beta two\nfirst\ndraft'), { path: 'n.txt' });
    await store.put(text('gamma three\nfirst'), { path: 'n.txt' });
    // Each word is in a version, both in none: a span has both, no version does.
    expect(named(await store.search('alpha AND beta', { allVersions: true, collapse: false }))).toEqual([]);
    expect(named(await store.search('alpha OR beta', { allVersions: true, collapse: false })).sort()).toEqual(['n.txt@1', 'n.txt@2']);
    // A phrase across a line's end, in version 2 only (the span's lines put "other line" between).
    expect(named(await store.search('"first draft"', { allVersions: true, collapse: false }))).toEqual(['n.txt@2']);
    expect(named(await store.search('"other draft"', { allVersions: true, collapse: false }))).toEqual([]);
    // NOT and -word hold for each version.
    expect(named(await store.search('first NOT beta', { allVersions: true, collapse: false })).sort()).toEqual(['n.txt@1', 'n.txt@3']);
    expect(named(await store.search('first -gamma -alpha', { allVersions: true, collapse: false }))).toEqual(['n.txt@2']);
    expect(named(await store.search('fir*', { allVersions: true, collapse: false }))).toEqual(['n.txt@3', 'n.txt@2', 'n.txt@1']); // newest first in a span
    await store.close();
  });

  it('follows versions forgotten, paths deleted and a document that becomes a version of another path', async () => {
    const { store, dir } = await newStore();
    const shared = text('the osprey report');
    await store.put(shared, { path: 'a.txt' });
    await store.put(text('the heron report'), { path: 'a.txt' });
    expect(named(await store.search('osprey', { allVersions: true, collapse: false }))).toEqual(['a.txt@1']);
    // The same document put at b.txt, then replaced there: now an older version of two paths.
    await store.put(shared, { path: 'b.txt' });
    await store.put(text('the egret report'), { path: 'b.txt' });
    expect(named(await store.search('osprey', { allVersions: true, collapse: false })).sort()).toEqual(['a.txt@1', 'b.txt@1']);
    // (b.txt's spans alone checked: the document is found by b.txt's name too.)
    expect(named(await store.search('osprey path:b', { allVersions: true, collapse: false }))).toEqual(['b.txt@1']);
    // Versions forgotten: found no more.
    await store.forgetVersions({ keep: 1 });
    expect(named(await store.search('osprey', { allVersions: true, collapse: false }))).toEqual([]);
    expect(named(await store.search('report', { allVersions: true, collapse: false })).sort()).toEqual(['a.txt@2', 'b.txt@2']);
    // A path deleted with its versions kept is history still; deleted whole, gone.
    await store.deletePath('a.txt', { keepVersions: true });
    expect(named(await store.search('heron', { allVersions: true, collapse: false }))).toEqual(['a.txt@2']);
    // (Path filters hold for the path, which has no entry now: found by the property test.)
    expect(named(await store.search('heron path:a', { allVersions: true, collapse: false, pathPrefix: 'a' }))).toEqual(['a.txt@2']);
    expect(named(await store.search('heron tag:x', { allVersions: true, collapse: false }))).toEqual([]);
    await store.deletePath('a.txt');
    expect(named(await store.search('heron', { allVersions: true, collapse: false }))).toEqual([]);
    expect(named(await store.search('report', { allVersions: true, collapse: false }))).toEqual(['b.txt@2']);
    await store.close();
    // Every row taken out is out of BM25's totals too (decision 0082): FTS5 3.53 left them counted.
    const db = new Database(join(dir, 'kura.db'), { readonly: true });
    for (const [table, columns] of [['history', 2], ['history_span_text', 1]] as const) {
      const sums = new Array<number>(columns + 1).fill(0);
      for (const { sz } of db.prepare(`SELECT sz FROM ${table}_docsize`).all() as { sz: Buffer }[]) {
        sums[0]! += 1;
        decodeVarints(sz).forEach((v, c) => (sums[c + 1]! += v));
      }
      const block = (db.prepare(`SELECT block FROM ${table}_data WHERE id = 1`).get() as { block: Buffer }).block;
      expect(decodeVarints(block), table).toEqual(sums);
    }
    db.close();
  });

  it('finds each version by the text its index holds (found in review of the spans)', async () => {
    const { store, dir } = await newStore();
    // Latin-1 bytes typed as text (content alone says binary), HTML typed as plain text (the
    // keyword index has its markup, content alone would extract it), one document at a binary
    // and a text path: every version is found as a plain search finds the latest.
    const latin1 = (t: string) => Uint8Array.from(t, (c) => c.charCodeAt(0));
    await store.put(latin1('caf\xe9;zebra;crossing'), { path: 'people.csv', mediaType: 'text/csv' });
    await store.put(text('<html><body><p class="quokka">hi</p></body></html>'), { path: 'page.txt', mediaType: 'text/plain' });
    await store.put(text('a puffin on the cliff'), { path: 'a.dat', mediaType: 'application/octet-stream' });
    await store.put(text('a puffin on the cliff'), { path: 'b.txt', mediaType: 'text/plain' });
    await store.put(text('private \uE0A0 git\uE0A0main then'), { path: 'pua.txt' });
    await store.put(text('replaced'), { path: 'pua.txt' });
    for (const [q, want] of [
      ['zebra', ['people.csv@1']],
      ['quokka', ['page.txt@1']],
      ['puffin', ['a.dat@1', 'b.txt@1']],
      ['git\uE0A0main', ['pua.txt@1']],
    ] as const) {
      expect(named(await store.search(q, { allVersions: true, collapse: false })).sort(), q).toEqual(want);
    }
    // Searching history changes nothing a plain search finds (no extraction kept for a shown document).
    await store.addTags('page.txt', ['re-index']);
    expect(named(await store.search('quokka'))).toEqual(['page.txt']);
    // After spans are made: an entry's media type changed, and a document shown by a new entry
    // with another media type than the path it is an older version of (spans made again).
    // (Bytes no sniff takes for text — a NUL — but text by a media type. Latin-1 alone is text
    // by its bytes since schema 21.)
    await store.put(latin1('caf\xe9;gnu;crossing\x00'), { path: 'g.bin', mediaType: 'application/octet-stream' });
    await store.put(latin1('caf\xe9;ibex;crossing\x00'), { path: 'x.bin', mediaType: 'application/octet-stream' });
    await store.put(text('other'), { path: 'x.bin' });
    expect(named(await store.search('gnu OR ibex', { allVersions: true, collapse: false }))).toEqual([]);
    await store.updateMeta([{ path: 'g.bin', mediaType: 'text/csv' }]);
    await store.put(latin1('caf\xe9;ibex;crossing\x00'), { path: 'y.csv', mediaType: 'text/csv' });
    expect(named(await store.search('gnu', { allVersions: true, collapse: false }))).toEqual(['g.bin@1']);
    expect(named(await store.search('ibex', { allVersions: true, collapse: false })).sort()).toEqual(['x.bin@1', 'y.csv@1']);
    // Two searches through history at once: one sync, no span made twice, no hit twice.
    for (let i = 0; i < 300; i++) {
      await store.put(text(`auk note ${i}`), { path: `p/${i}.txt` });
      await store.put(text(`auk note ${i} again`), { path: `p/${i}.txt` });
    }
    await Promise.all([store.search('auk', { allVersions: true, collapse: false }), store.search('auk', { allVersions: true, collapse: false })]);
    const hits = named(await store.search('auk', { allVersions: true, collapse: false, limit: 1000 }));
    expect(hits).toHaveLength(600);
    expect(new Set(hits).size).toBe(600);
    await store.close();
    const db = new Database(join(dir, 'kura.db'), { readonly: true });
    expect(db.prepare('SELECT COUNT(*) AS n FROM (SELECT path_id, first FROM history_spans GROUP BY path_id, first HAVING COUNT(*) > 1)').get()).toEqual({ n: 0 });
    db.close();
    // A store opened read-only finds what entries show, and what the history index held.
    const ro = await Store.open(dir, { readonly: true });
    try {
      expect(named(await ro.search('auk note 7 again', { allVersions: true, collapse: false, limit: 3 }))[0]).toBe('p/7.txt@2');
      await ro.close();
    } finally {
      await ro.close().catch(() => undefined);
    }
  });

  it('second review: emoji inside words, read-only opens after writes, pages of a probed query, two stores syncing at once', async () => {
    const { store, dir } = await newStore();
    // FTS5 keeps characters assigned after Unicode 6.1 (emoji) inside a word.
    await store.put(text('notes on rust🦀lang'), { path: 'x.txt' });
    expect(named(await store.search('rust🦀lang', { allVersions: true, collapse: false }))).toEqual(['x.txt@1']);
    // Pages of a query spans over-match (AND across versions), decoys and matches mixed.
    for (let i = 0; i < 35; i++) {
      await store.put(text(`alpha decoy ${i}`), { path: `d/${i}.txt` });
      await store.put(text(`beta decoy ${i}`), { path: `d/${i}.txt` });
    }
    for (const p of ['m.txt', 'n.txt']) for (let v = 1; v <= 20; v++) await store.put(text(`alpha beta ${p} ${v}`), { path: p });
    const all = named(await store.search('alpha AND beta', { allVersions: true, collapse: false, limit: 100 }));
    expect([...all].sort()).toEqual([...Array.from({ length: 20 }, (_, i) => `m.txt@${i + 1}`), ...Array.from({ length: 20 }, (_, i) => `n.txt@${i + 1}`)].sort());
    const paged: (string | null)[] = [];
    for (let offset = 0; offset < all.length; offset += 10) paged.push(...named(await store.search('alpha AND beta', { allVersions: true, collapse: false, limit: 10, offset })));
    expect(paged).toEqual(all);
    // Written after the last search through history, then opened read-only: found.
    await store.put(text('a marmot'), { path: 'x.txt' });
    await store.put(text('marmot again'), { path: 'b.txt' });
    await store.close();
    const ro = await Store.open(dir, { readonly: true });
    try {
      expect(named(await ro.search('marmot', { allVersions: true, collapse: false })).sort()).toEqual(['b.txt@1', 'x.txt@2']);
    } finally {
      await ro.close();
    }
    // Two stores on one directory (two processes) bringing spans up to date at once: a path of
    // ~6 MiB of distinct lines is written in several transactions by each.
    const big = (v: number) => text(Array.from({ length: 5000 }, (_, i) => `line ${v}-${i} of the skua log ${'w'.repeat(70)}`).join('\n'));
    const a = await Store.open(dir);
    for (let v = 1; v <= 12; v++) await a.put(big(v), { path: 'big.log' });
    const b = await Store.open(dir);
    try {
      await Promise.all([a.search('skua', { allVersions: true, collapse: false }), b.search('skua', { allVersions: true, collapse: false })]);
      const hits = named(await a.search('skua', { allVersions: true, collapse: false, limit: 100 }));
      expect(hits).toHaveLength(12);
      expect(new Set(hits).size).toBe(12);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('a store opened read-only says how many documents its history index lacks (it answered nothing, and said nothing)', async () => {
    const { store, dir } = await newStore();
    for (const t of ['zeppelin over the bay', 'zeppelin over the bay at dawn', 'balloon over the bay at dawn']) await store.put(text(t), { path: 'notes/z.txt' });
    await store.close();
    const ro = await Store.open(dir, { readonly: true });
    try {
      const hits = await ro.search('zeppelin', { allVersions: true, collapse: false });
      expect(hits).toEqual([]);
      expect(hits.notIndexed).toBe(2); // @1 and @2: stored since the index was last brought up to date
    } finally {
      await ro.close();
    }
    const w = await Store.open(dir);
    expect(named(await w.search('zeppelin', { allVersions: true, collapse: false })).sort()).toEqual(['notes/z.txt@1', 'notes/z.txt@2']);
    await w.close();
    const again = await Store.open(dir, { readonly: true });
    try {
      const hits = await again.search('zeppelin', { allVersions: true, collapse: false });
      expect(named(hits).sort()).toEqual(['notes/z.txt@1', 'notes/z.txt@2']);
      expect(hits.notIndexed).toBeUndefined();
    } finally {
      await again.close();
    }
  });

  it('says a store opened read-only from before the history spans must be opened for writing first', async () => {
    const { store, dir } = await newStore();
    await store.put(text('a tern'), { path: 't.txt' });
    await store.close();
    const db = new Database(join(dir, 'kura.db'));
    db.exec('ALTER TABLE snapshots DROP COLUMN utc_offset'); // (as a store from before schema 22 is)
    db.pragma('user_version = 18');
    db.close();
    const old = await Store.open(dir, { readonly: true });
    try {
      await expect(old.search('tern', { allVersions: true, collapse: false })).rejects.toMatchObject({ code: 'FORMAT_MISMATCH' });
      expect((await old.search('tern')).map((h) => h.path)).toEqual(['t.txt']);
    } finally {
      await old.close();
    }
  });

  it("searches one snapshot's files, and no longer finds what only a deleted snapshot held after GC", async () => {
    const { store, dir } = await newStore();
    const src = tempDir('kura-history-src-'); // (removed after the file's tests)
    mkdirSync(join(src, 'docs'));
    writeFileSync(join(src, 'docs', 'plan.txt'), 'The narwhal migration plan.\n');
    writeFileSync(join(src, 'readme.txt'), 'Read me first.\n');
    const first = await store.snapshot(src);
    writeFileSync(join(src, 'docs', 'plan.txt'), 'The plan changed: no animals.\n');
    const second = await store.snapshot(src);
    await store.put(text('A note about the narwhal.'), { path: 'note.txt' });
    expect(named(await store.search('narwhal', { snapshot: first.id }))).toEqual(['docs/plan.txt']);
    expect(named(await store.search('narwhal', { snapshot: second.id }))).toEqual([]);
    expect(named(await store.search('narwhal'))).toEqual(['note.txt']); // snapshots are not paths
    expect(named(await store.search('read', { snapshot: second.id.slice(0, 8) }))).toEqual(['readme.txt']);
    expect(named(await store.search('narwhal OR read', { snapshot: first.id }))).toHaveLength(2);
    expect(named(await store.search('narwhal OR read -path:docs/', { snapshot: first.id }))).toEqual(['readme.txt']); // (it did nothing: a trial's review)
    await expect(store.search('x', { snapshot: 'ffffffffffff' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await store.deleteSnapshot(first.id);
    await store.gc();
    // The only copy of the narwhal plan is gone: nothing names it, nothing finds it.
    expect(named(await store.search('migration', { snapshot: second.id }))).toEqual([]);
    expect(named(await store.search('narwhal', { allVersions: true, collapse: false }))).toEqual(['note.txt@1']);
    // A snapshot's files have no tags and no media types: a filter by either holds for none.
    expect(named(await store.search('read tag:notes', { snapshot: second.id }))).toEqual([]);
    expect(named(await store.search('read', { snapshot: second.id, mediaType: 'text/plain' }))).toEqual([]);
    await store.close();
    // And the history index holds its text no more.
    const db = new Database(join(dir, 'kura.db'), { readonly: true });
    expect(db.prepare("SELECT COUNT(*) AS n FROM history WHERE history MATCH 'migration'").get()).toEqual({ n: 0 });
    db.close();
  });
});
