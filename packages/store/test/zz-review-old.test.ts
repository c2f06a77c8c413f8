import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from './zz-oldsrc/node/index.js';
import { mkdtempSync } from 'node:fs'; import { tmpdir } from 'node:os';
const newStore = async () => { const dir = join(mkdtempSync(join(tmpdir(), 'zzold-')), 's'); return { store: await Store.init(dir), dir }; };

const text = (t: string) => new TextEncoder().encode(t);
const latin1 = (t: string) => Uint8Array.from([...t].map((c) => c.charCodeAt(0)));
const named = (hits: { path: string | null; version?: number }[]) => hits.map((h) => (h.version === undefined ? h.path : `${h.path}@${h.version}`));

describe('review 8dcddd1', () => {
  it('F1a: a Latin-1 file typed text/csv: its current version is found by the keyword index but not through history', async () => {
    const { store } = await newStore();
    await store.put(latin1('name;city\nJos\xe9;Malm\xf6\nzebra;crossing\n'), { path: 'people.csv', mediaType: 'text/csv' });
    expect(named(await store.search('zebra'))).toEqual(['people.csv']);
    expect(named(await store.search('zebra', { allVersions: true }))).toEqual(['people.csv@1']);
  });

  it('F1b: HTML stored as text/plain: an attribute word found latest-only, not through history; and the history search changes the keyword index', async () => {
    const { store } = await newStore();
    await store.put(text('<!doctype html><html><body><a class="quokka" href="x">hello</a></body></html>'), { path: 'page.txt', mediaType: 'text/plain' });
    expect(named(await store.search('quokka'))).toEqual(['page.txt']);
    expect(named(await store.search('quokka', { allVersions: true }))).toEqual(['page.txt@1']);
  });

  it('F1c: side effect: after a history search, re-indexing the entry (a tag added) loses the word from the keyword index', async () => {
    const { store } = await newStore();
    await store.put(text('<!doctype html><html><body><a class="quokka" href="x">hello</a></body></html>'), { path: 'page.txt', mediaType: 'text/plain' });
    expect(named(await store.search('quokka'))).toEqual(['page.txt']);
    await store.search('hello', { allVersions: true });
    await store.addTags('page.txt', ['t']);
    expect(named(await store.search('quokka'))).toEqual(['page.txt']);
  });

  it('F2: a word with a private-use character (FTS5 token char, JS split char) is missed', async () => {
    const { store } = await newStore();
    await store.put(text('prompt git\uE0A0main branch'), { path: 'ps1.txt' });
    expect(named(await store.search('git\uE0A0main'))).toEqual(['ps1.txt']);
    expect(named(await store.search('git\uE0A0main', { allVersions: true }))).toEqual(['ps1.txt@1']);
  });

  it('F3: two history searches at once write a path\'s spans twice: duplicate hits', async () => {
    const { store, dir } = await newStore();
    for (let i = 0; i < 300; i++) {
      await store.put(text(`otter ${i} first`), { path: `p/${String(i).padStart(3, '0')}.txt` });
      await store.put(text(`otter ${i} second`), { path: `p/${String(i).padStart(3, '0')}.txt` });
    }
    await Promise.all([store.search('otter', { allVersions: true, limit: 1000 }), store.search('otter', { allVersions: true, limit: 1000 })]);
    const all = named(await store.search('otter', { allVersions: true, limit: 1000 }));
    expect(all.length - new Set(all).size).toBe(0);
    await store.close();
    const db = new Database(join(dir, 'kura.db'), { readonly: true });
    const dup = db.prepare('SELECT p.path, s.first, s.last, COUNT(*) AS n FROM history_spans s JOIN history_paths p ON p.id = s.path_id GROUP BY s.path_id, s.first HAVING n > 1').all();
    db.close();
    expect(dup).toEqual([]);
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBe(600);
  });

  it('F5: a document two entries show with different media types: the one entry picked decides (LIMIT 1)', async () => {
    const { store } = await newStore();
    const doc = text('the puffin colony report');
    await store.put(doc, { path: 'a.dat', mediaType: 'application/octet-stream' });
    await store.put(doc, { path: 'b.txt', mediaType: 'text/plain' });
    expect(named(await store.search('puffin'))).toEqual(['b.txt']);
    expect(named(await store.search('puffin', { allVersions: true })).sort()).toEqual(['a.dat@1', 'b.txt@1']);
  });

  it('F4: a store opened read-only finds no version at all before a writable history search was made (the old code found the current ones)', async () => {
    const { store, dir } = await newStore();
    await store.put(text('a gannet'), { path: 'g.txt' });
    expect(named(await store.search('gannet'))).toEqual(['g.txt']);
    await store.close();
    const ro = await Store.open(dir, { readonly: true });
    try {
      expect(named(await ro.search('gannet'))).toEqual(['g.txt']);
      expect(named(await ro.search('gannet', { allVersions: true }))).toEqual(['g.txt@1']);
    } finally {
      await ro.close();
    }
  });
});
