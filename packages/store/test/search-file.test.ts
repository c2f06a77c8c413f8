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
import { holdNextIndexBatch } from './helpers/held-index.js';

const text = (s: string) => new TextEncoder().encode(s);
const paths = async (store: Awaited<ReturnType<typeof reopen>>, q: string) => (await store.search(q, { mode: 'keyword', limit: 50 })).map((h) => h.path).sort();
/** One value read from search.db, read-only, through a connection of the test's own. */
const fromIndex = (dir: string, sql: string) => {
  const db = new Database(join(dir, 'search.db'), { readonly: true });
  try {
    return db.prepare(sql).pluck().get();
  } finally {
    db.close();
  }
};
const rows = (dir: string) => fromIndex(dir, 'SELECT COUNT(*) FROM search') as number;
/** search.db's `index_of` id: a new one each time the index is made again. */
const indexId = (dir: string) => fromIndex(dir, 'SELECT catalog FROM index_of') as string;
const removeIndex = (dir: string) => {
  for (const f of ['search.db', 'search.db-wal', 'search.db-shm']) rmSync(join(dir, f), { force: true });
};

/**
 * Damage to FTS5's own records (decision 0083): its structure record overwritten past its
 * cookie or cut short, or a segment cut short — what a torn write or a bad sector leaves. (SQLite keeps no checksums: a flipped
 * term is not found, by SQLite or anyone.)
 */
const damageIndex = (dir: string, how: 'structure' | 'cookie' | 'segment') => {
  const db = new Database(join(dir, 'search.db'));
  db.unsafeMode(true);
  if (how === 'structure' || how === 'cookie') {
    // (Cut below its 4-byte cookie, FTS5 reads it as an index of no segments: no SQLite check finds it.)
    const s = (db.prepare('SELECT block FROM search_data WHERE id = 10').get() as { block: Buffer }).block;
    db.prepare('UPDATE search_data SET block = ? WHERE id = 10').run(how === 'cookie' ? s.subarray(0, 3) : s.fill(0xff, 4));
  } else {
    const { id, block } = db.prepare('SELECT id, block FROM search_data WHERE id > 10 ORDER BY length(block) DESC LIMIT 1').get() as { id: number; block: Buffer };
    db.prepare('UPDATE search_data SET block = ? WHERE id = ?').run(block.subarray(0, 10), id);
  }
  db.close();
};
const birds = (i: number) => text(`a tern and a ${i % 3 ? 'plover' : 'curlew'} on the shore, note ${i} ${'sand and shingle '.repeat(40)}`);

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

  it('a search meeting a damaged index has it made again and answers in full; a reader is told CORRUPT_DATA search-index', async () => {
    for (const how of ['structure', 'segment'] as const) {
      const { store, dir } = await newStore();
      for (let i = 0; i < 60; i++) await store.put(birds(i), { path: `b/${i}.txt` });
      const before = (await store.search('curlew', { mode: 'keyword', limit: 100 })).map((h) => [h.path, h.score]);
      expect(before).toHaveLength(20);
      // Damaged under a store that is open (another connection, as a bad disk would).
      damageIndex(dir, how);
      expect((await store.search('curlew', { mode: 'keyword', limit: 100 })).map((h) => [h.path, h.score])).toEqual(before);
      await store.close();
      expect(rows(dir)).toBe(60);
      // Read-only, the index cannot be written: the damage is said, with what is damaged.
      damageIndex(dir, how);
      const reader = await reopen(dir, { readonly: true });
      await expect(reader.search('curlew', { mode: 'keyword' })).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'search-index' });
      await reader.close();
      // A writer's open, or its first search, makes it again.
      const again = await reopen(dir);
      expect((await again.search('curlew', { mode: 'keyword', limit: 100 })).map((h) => [h.path, h.score])).toEqual(before);
      expect((await again.verify()).damagedSearchIndex).toEqual([]);
      await again.close();
    }
  });

  it('verify finds a damaged index, and a store open for writing makes it again', async () => {
    const { store, dir } = await newStore();
    for (let i = 0; i < 60; i++) await store.put(birds(i), { path: `b/${i}.txt` });
    damageIndex(dir, 'structure');
    const found = await store.verify();
    expect(found.ok).toBe(false);
    expect(found.damagedSearchIndex).toEqual([{ message: expect.stringContaining('structure record'), remade: true }]);
    expect(found.damagedChunks).toEqual([]);
    expect(await paths(store, 'plover')).toHaveLength(40);
    expect((await store.verify()).ok).toBe(true);
    await store.close();
    damageIndex(dir, 'structure');
    const reader = await reopen(dir, { readonly: true });
    const seen = await reader.verify();
    expect(seen.ok).toBe(false);
    expect(seen.damagedSearchIndex).toEqual([{ message: expect.stringContaining('structure record'), remade: false }]);
    await reader.close();
    await (await reopen(dir)).close(); // (made again at the open)
    // BM25's totals that are not the rows' (what SQLite 3.53 left before decision 0082, mended
    // at a writer's open) are found too.
    const db = new Database(join(dir, 'search.db'));
    db.unsafeMode(true);
    db.prepare('UPDATE search_data SET block = ? WHERE id = 1').run(Buffer.from([70, 1, 1, 1, 1]));
    db.close();
    const third = await reopen(dir, { readonly: true });
    expect((await third.verify()).damagedSearchIndex).toEqual([{ message: expect.stringContaining("BM25's totals"), remade: false }]);
    await third.close();
    // A structure record cut below its cookie: searches answer nothing, and no SQLite check
    // finds it. verify does (rows with words, no term); a writer's open makes it again.
    const fourth = await reopen(dir);
    expect(await paths(fourth, 'plover')).toHaveLength(40);
    await fourth.close();
    damageIndex(dir, 'cookie');
    const reading = await reopen(dir, { readonly: true });
    expect(await paths(reading, 'plover')).toEqual([]);
    expect((await reading.verify()).damagedSearchIndex).toEqual([{ message: expect.stringContaining('no term'), remade: false }]);
    await reading.close();
    const fifth = await reopen(dir);
    expect(await paths(fifth, 'plover')).toHaveLength(40);
    expect((await fifth.verify()).ok).toBe(true);
    await fifth.close();
  });

  it("a search.db restored alone from an older copy (the catalog's id, fewer batches) is found by verify and made again at a writer's open", async () => {
    const { store, dir } = await newStore();
    for (let i = 0; i < 20; i++) await store.put(birds(i), { path: `b/${i}.txt` });
    await store.close();
    const older = join(dir, 'search.db.older');
    copyFileSync(join(dir, 'search.db'), older); // (no WAL beside it: the close took it in)
    const id = indexId(dir);
    const later = await reopen(dir);
    for (let i = 20; i < 30; i++) await later.put(text(`a puffin on the cliff, note ${i}`), { path: `p/${i}.txt` });
    await later.put(text('a gannet now, where the tern was'), { path: 'b/0.txt' });
    expect(await paths(later, 'puffin')).toHaveLength(10);
    expect((await later.verify()).ok).toBe(true);
    await later.close();
    expect(indexId(dir)).toBe(id); // (an index with every batch is kept as it is)
    copyFileSync(older, join(dir, 'search.db'));
    // Read-only, the older index is what there is to search: verify says so.
    const reader = await reopen(dir, { readonly: true });
    expect(await paths(reader, 'puffin')).toEqual([]);
    const seen = await reader.verify();
    expect(seen.ok).toBe(false);
    expect(seen.damagedSearchIndex).toEqual([{ message: expect.stringContaining('older than the catalog'), remade: false }]);
    await reader.close();
    // A writer's open makes it again from the catalog.
    const writer = await reopen(dir);
    expect(await paths(writer, 'puffin')).toHaveLength(10);
    expect(await paths(writer, 'gannet')).toEqual(['b/0.txt']);
    expect(await paths(writer, 'curlew')).toHaveLength(6); // (b/0.txt's curlew is gone with its text)
    expect((await writer.verify()).ok).toBe(true);
    await writer.close();
    expect(indexId(dir)).not.toBe(id);
  });

  it("a batch in flight when another writer's open makes the index again is dropped: every entry is found", async () => {
    const { store: a, dir } = await newStore();
    for (let i = 0; i < 12; i++) await a.put(text(`a kittiwake on the ledge, note ${i}`), { path: `k/${i}.txt` });
    // A's batch is written and its answer held: in flight.
    const { entered, release } = holdNextIndexBatch(a);
    const searched = a.search('kittiwake', { mode: 'keyword' });
    await entered;
    // The catalog now says the index lacks batches (as with an older copy restored): a second
    // writer's open makes it again, under a new id, every entry queued under reused row ids.
    const id = indexId(dir);
    const db = new Database(join(dir, 'kura.db'));
    db.prepare('UPDATE search_file SET batch = batch + 1000').run();
    db.close();
    const b = await reopen(dir);
    expect(indexId(dir)).not.toBe(id);
    release();
    await searched;
    expect(await paths(a, 'kittiwake')).toHaveLength(12);
    expect(await paths(b, 'kittiwake')).toHaveLength(12);
    expect((await b.verify()).ok).toBe(true);
    await b.close();
    await a.close();
  });

  it("rows written on the store's thread, then past 256 KiB on the writer thread, are one index in order", async () => {
    const { store, dir } = await newStore();
    // Small: written on the store's thread. Then 40 documents of 16 KiB in one drain: past
    // HERE_TEXT, the writer thread starts. Then the first ones' tags change (the thread again).
    for (let i = 0; i < 5; i++) await store.put(text(`a small note about a dipper ${i}`), { path: `s/${i}.txt` });
    expect(await paths(store, 'dipper')).toHaveLength(5);
    for (let i = 0; i < 40; i++) await store.put(text(`wagtail ${i} ${'riverbank pebbles '.repeat(900)}`), { path: `w/${i}.txt` });
    expect(await paths(store, 'wagtail')).toHaveLength(40);
    for (let i = 0; i < 5; i++) await store.addTags(`s/${i}.txt`, ['seen']);
    expect(await paths(store, 'seen')).toHaveLength(5);
    await store.close();
    expect(rows(dir)).toBe(45);
    const again = await reopen(dir, { readonly: true });
    expect(await paths(again, 'dipper seen')).toHaveLength(5);
    expect((await again.verify()).damagedSearchIndex).toEqual([]);
    await again.close();
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
