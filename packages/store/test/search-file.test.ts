/**
 * The keyword index in a file of its own (decision 0081): search.db and kura.db agree through
 * the catalog's queue. A missing index, another catalog's, or one whose commit the catalog never
 * heard of (a crash between the two) is made whole again at the next open for writing.
 */
import { copyFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { newStore, reopen } from './helpers/store.js';

const text = (s: string) => new TextEncoder().encode(s);
const paths = async (store: Awaited<ReturnType<typeof reopen>>, q: string) => (await store.search(q, { mode: 'keyword', limit: 50 })).map((h) => h.path).sort();
const rows = (dir: string) => {
  const db = new Database(join(dir, 'search.db'), { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM search').get() as { n: number }).n;
  } finally {
    db.close();
  }
};
const removeIndex = (dir: string) => {
  for (const f of ['search.db', 'search.db-wal', 'search.db-shm']) rmSync(join(dir, f), { force: true });
};

describe('the keyword index in search.db', () => {
  it('a deleted search.db is made again at the next open, every entry indexed (a reader meanwhile searches an empty one)', async () => {
    const { store, dir } = await newStore();
    for (let i = 0; i < 20; i++) await store.put(text(`a kingfisher note ${i}`), { path: `n/${i}.txt`, tags: i % 2 ? ['odd'] : [] });
    await store.deletePath('n/3.txt');
    expect(await paths(store, 'kingfisher')).toHaveLength(19);
    await store.close();
    // Closed, the index is one file: its WAL taken in and deleted (it was left, 6 MiB, beside it).
    expect(existsSync(join(dir, 'search.db-wal'))).toBe(false);
    expect(rows(dir)).toBe(19);
    removeIndex(dir);
    // A reader finds no index and writes none: it searches an empty one.
    const reader = await reopen(dir, { readonly: true });
    expect(await paths(reader, 'kingfisher')).toEqual([]);
    await reader.close();
    expect(existsSync(join(dir, 'search.db'))).toBe(false);
    const again = await reopen(dir);
    expect(await paths(again, 'kingfisher')).toHaveLength(19);
    expect(await paths(again, 'odd')).toHaveLength(9); // ten odd ones, but n/3.txt is gone
    await again.close();
    expect(rows(dir)).toBe(19);
  });

  it('a search.db SQLite cannot read is made again: its damage does not keep the store from opening', async () => {
    const { store, dir } = await newStore();
    await store.put(text('a grebe on the lake'), { path: 'g.txt' });
    await store.close();
    removeIndex(dir);
    writeFileSync(join(dir, 'search.db'), 'not a database, '.repeat(512));
    const again = await reopen(dir);
    expect(await paths(again, 'grebe')).toEqual(['g.txt']);
    await again.close();
    expect(rows(dir)).toBe(1);
  });

  it("another catalog's search.db is emptied and made again from this one", async () => {
    const a = await newStore();
    await a.store.put(text('only in the first store: albatross'), { path: 'a.txt' });
    await a.store.close();
    const b = await newStore();
    await b.store.put(text('only in the second store: cormorant'), { path: 'b.txt' });
    await b.store.close();
    removeIndex(a.dir);
    copyFileSync(join(b.dir, 'search.db'), join(a.dir, 'search.db'));
    const again = await reopen(a.dir);
    expect(await paths(again, 'cormorant')).toEqual([]);
    expect(await paths(again, 'albatross')).toEqual(['a.txt']);
    await again.close();
    expect(rows(a.dir)).toBe(1);
  });

  it('rows committed to the index whose queue rows the catalog kept (a crash between the two) are indexed again, once each', async () => {
    const { store, dir } = await newStore();
    for (let i = 0; i < 10; i++) await store.put(text(`heron ${i} wades`), { path: `h/${i}.txt` });
    await store.close();
    // What a crash after the index's commit and before the catalog's leaves: the queue as it was.
    const db = new Database(join(dir, 'kura.db'));
    db.exec("INSERT INTO search_queue(entries) SELECT json_group_array(id) FROM entries");
    db.close();
    const again = await reopen(dir);
    const hits = await again.search('heron', { mode: 'keyword', limit: 50 });
    expect(hits.map((h) => h.path).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `h/${i}.txt`).sort());
    await again.indexStatus({ wait: true });
    await again.close();
    expect(rows(dir)).toBe(10);
  });
});
