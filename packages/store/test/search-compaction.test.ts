/**
 * The keyword index's compaction (decision 0038) on real SQLite files: the index merged into
 * one segment answers every query as before, ranks alike, and gives its freed pages back to the
 * file system; it stops when told to and goes on from there; a store that indexed enough text
 * leaves a smaller database when it closes.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SearchCompaction } from '../src/search/compaction.js';
import { SEARCH_TABLE, inlineIndex } from '../src/search/index-writer.js';
import { openSqlite } from '../src/node/sqlite.js';
import { reopen, tempDir, textBytes } from './helpers/store.js';

const dec = new TextDecoder();

/** A search table filled in `batches` transactions (one FTS5 segment each, merged as automerge sees fit). */
function fragmentedIndex(batches: number, perBatch: number) {
  const db = openSqlite(join(tempDir(), 'search.db'));
  db.exec(`CREATE VIRTUAL TABLE ${SEARCH_TABLE}`);
  const insert = db.prepare('INSERT INTO search(rowid, path, tags, meta, body) VALUES (?, ?, ?, ?, ?)');
  const del = db.prepare('DELETE FROM search WHERE rowid = ?');
  let id = 0;
  for (let b = 0; b < batches; b++) {
    db.transaction(() => {
      for (let i = 0; i < perBatch; i++, id++) insert.run(id + 1, `docs/${id}.txt`, `t${id % 7}`, '', dec.decode(textBytes(id + 1, 3000)));
      if (b % 3 === 2) for (let i = 0; i < perBatch / 4; i++) del.run(id - i * 3); // deletes leave traces until a merge
    });
  }
  return db;
}

const QUERIES = ['alpha', 'the quick', '"lorem ipsum"', 'dolo*', 'tags:t3', 'zzzznothing'];
function answers(db: ReturnType<typeof openSqlite>) {
  const q = db.prepare<{ rowid: number; r: number }>('SELECT rowid, bm25(search) AS r FROM search WHERE search MATCH ? ORDER BY r, rowid');
  return QUERIES.map((x) => q.all(x).map((row) => [row.rowid, Math.round(row.r * 1e9)]));
}
const pragma = (db: ReturnType<typeof openSqlite>, name: string) => Number(Object.values(db.prepare<Record<string, number>>(`PRAGMA ${name}`).get()!)[0]);

describe('search index compaction', () => {
  it('merges the index into one segment: the same answers and ranks, fewer pages, none left free', async () => {
    const db = fragmentedIndex(40, 40);
    expect(pragma(db, 'auto_vacuum')).toBe(2); // incremental: a new database is made so
    // (A writer opened mends the BM25 totals the deletes above left counting them: decision 0082.)
    const c = new SearchCompaction(inlineIndex(db, true).writer!, 0);
    const before = answers(db);
    expect(before.flat().length).toBeGreaterThan(100);
    const pages = pragma(db, 'page_count');
    c.note(1 << 30);
    expect(c.due).toBe(true);
    expect(await c.run()).toBe(true);
    expect(c.due).toBe(false); // the count starts again
    expect(answers(db)).toEqual(before);
    expect(pragma(db, 'freelist_count')).toBe(0);
    expect(pragma(db, 'page_count')).toBeLessThan(pages * 0.95);
    db.close();
  });

  it('stops when told to, changing nothing it has not finished, and goes on from there', async () => {
    const db = fragmentedIndex(30, 40);
    const c = new SearchCompaction(inlineIndex(db, true).writer!, 0);
    const before = answers(db);
    c.note(1 << 30);
    expect(await c.run(() => true)).toBe(false);
    expect(c.due).toBe(true);
    let steps = 0;
    expect(await c.run(() => ++steps > 3)).toBe(false); // three steps, then stopped
    expect(answers(db)).toEqual(before); // merged or not, the same answers
    expect(await c.run()).toBe(true);
    expect(answers(db)).toEqual(before);
    db.close();
  });

  it('is not due until a process has indexed enough text: 8 MiB and a quarter of the database', () => {
    const db = fragmentedIndex(1, 10);
    const c = new SearchCompaction(inlineIndex(db, true).writer!);
    c.note((8 << 20) - 1);
    expect(c.due).toBe(false);
    c.note(1);
    expect(c.due).toBe(true);
    db.close();
  });

  it('a store that indexed 9 MiB of text leaves a compacted database when it closes', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const { Store } = await import('../src/node/index.js');
    const store = await Store.init(dir);
    for (let i = 0; i < 180; i++) await store.put(textBytes(1000 + i, 50_000), { path: `t/${i}.txt`, mediaType: 'text/plain' });
    const hits = (await store.search('alpha', { limit: 50 })).map((h) => h.path);
    await store.close();
    const reopened = await reopen(dir);
    expect((await reopened.search('alpha', { limit: 50 })).map((h) => h.path)).toEqual(hits);
    await reopened.close();
    // Merged into one segment: a merge finds nothing left to do (it changes fewer than two rows).
    const db = openSqlite(join(dir, 'search.db'));
    expect(pragma(db, 'freelist_count')).toBe(0);
    const changes = () => db.prepare<{ n: number }>('SELECT total_changes() AS n').get()!.n;
    const at = changes();
    db.exec(`INSERT INTO search(search, rank) VALUES('merge', -64)`);
    expect(changes() - at).toBeLessThan(2);
    db.close();
  });
});
