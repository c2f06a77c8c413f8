/**
 * verify checks the database against a replay of its log (decision 0073): a store after every
 * kind of change verifies clean, every row of the log's tables compared; rows changed, removed
 * or added behind the store's back (another connection to kura.db) are named by table and key,
 * and `kura rebuild` mends them; a page SQLite cannot read is damage of the database; a writer
 * committing while verify runs is caught up with, not taken for damage.
 */
import { closeSync, mkdirSync, openSync, readSync, writeFileSync, writeSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import { verifyLog } from '../src/catalog/log-verify.js';
import { prepareStatements } from '../src/catalog/statements.js';
import { FsLogStore } from '../src/node/fs-log.js';
import { openSqlite } from '../src/node/sqlite.js';
import { IndexStatements } from '../src/search/index-writer.js';
import { batchEnded, newStore, randomBytes, reopen, tempDir, textBytes } from './helpers/store.js';

const CHILD = fileURLToPath(new URL('./fixtures/child.mjs', import.meta.url));

/** The tables a checkpoint holds (FORMAT.md §15.5), counted by an independent reader. */
const LOG_TABLES = ['packs', 'chunks', 'chunk_holds', 'condemned', 'dropped_packs', 'gc_lease', 'documents', 'entries', 'tags', 'meta', 'version_counters', 'versions', 'deleted_paths', 'retention_policies', 'tokens', 'trees', 'snapshots', 'sqlite_sequence'];

function rowsIn(dir: string): number {
  const db = new Database(join(dir, 'kura.db'), { readonly: true });
  try {
    return LOG_TABLES.reduce((n, t) => n + (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n, 0);
  } finally {
    db.close();
  }
}

/** Changes kura.db behind the store's back (the store closed), as a disk or a hand would. */
function tamper(dir: string, sql: string, ...params: unknown[]): void {
  const db = new Database(join(dir, 'kura.db'));
  try {
    expect(db.prepare(sql).run(...params).changes).toBeGreaterThan(0);
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** A store after puts, paths, versions, tags, metadata, deletes, a snapshot and GC. */
async function busyStore(): Promise<{ store: Store; dir: string; digests: string[] }> {
  const { store, dir } = await newStore();
  const digests: string[] = [];
  for (let i = 0; i < 12; i++) {
    const r = await store.put(i % 3 === 0 ? randomBytes(i, 40_000) : textBytes(i, 30_000), { path: `notes/n${i % 5}.md`, tags: i % 2 ? ['odd'] : [] });
    digests.push(r.digest);
  }
  await store.put(textBytes(99, 5_000)); // pathless
  await store.setMeta('notes/n1.md', { author: 'ann', topic: 'herons' });
  await store.addTags('notes/n2.md', ['draft', 'herons']);
  await store.deleteVersion('notes/n0.md', 1);
  await store.deletePath('notes/n4.md');
  const src = join(tempDir(), 'tree');
  mkdirSync(join(src, 'sub'), { recursive: true });
  writeFileSync(join(src, 'a.txt'), textBytes(7, 20_000));
  writeFileSync(join(src, 'sub', 'b.bin'), randomBytes(8, 9_000));
  await store.snapshot(src, { label: 'tree', mtime: false });
  await store.delete(digests[3]!);
  await store.gc();
  return { store, dir, digests };
}

/** A store whose log tables run past a page of the comparison (2,000 rows): 2,600 documents at 2,600 paths. */
async function longStore(): Promise<{ store: Store; dir: string }> {
  const { store, dir } = await newStore();
  for (let i = 0; i < 2_600; i += 200) {
    await Promise.all(Array.from({ length: 200 }, (_, k) => store.put(textBytes(10_000 + i + k, 300), { path: `long/${String(i + k).padStart(5, '0')}.md`, tags: (i + k) % 2 ? ['odd'] : [] })));
  }
  return { store, dir };
}

describe('verify: the database against a replay of its log', () => {
  it('a store after every kind of change verifies clean, every row of the log tables compared', async () => {
    const { store, dir } = await busyStore();
    const r = await store.verify();
    expect(r).toMatchObject({ ok: true, catalogChecked: true, damagedCatalog: [] });
    await store.close();
    expect(r.catalogRowsChecked).toBe(rowsIn(dir));
    expect(r.catalogRowsChecked).toBeGreaterThan(50);
    // Read-only, the same.
    const ro = await Store.open(dir, { readonly: true });
    expect(await ro.verify()).toMatchObject({ ok: true, catalogChecked: true, catalogRowsChecked: r.catalogRowsChecked, damagedCatalog: [] });
    await ro.close();
  });

  it('a row changed, removed or added behind the store is named by table and key; kura rebuild mends it', async () => {
    const { store, dir } = await busyStore();
    await store.close();
    const db = new Database(join(dir, 'kura.db'), { readonly: true });
    const entry = db.prepare("SELECT id FROM entries WHERE path = 'notes/n1.md' ORDER BY id DESC LIMIT 1").get() as { id: number };
    const gone = db.prepare("SELECT id FROM entries WHERE path = 'notes/n3.md' ORDER BY id DESC LIMIT 1").get() as { id: number };
    const doc = db.prepare('SELECT id FROM documents ORDER BY id LIMIT 1').get() as { id: number };
    db.close();
    // A path's byte flipped; an entry lost; a tag that was never given; a document's size wrong.
    tamper(dir, "UPDATE entries SET path = 'notes/n1.me' WHERE id = ?", entry.id);
    tamper(dir, 'DELETE FROM entries WHERE id = ?', gone.id);
    tamper(dir, "INSERT INTO tags(entry_id, tag) VALUES (?, 'forged')", entry.id);
    tamper(dir, 'UPDATE documents SET size = size + 1 WHERE id = ?', doc.id);

    const s = await reopen(dir);
    const r = await s.verify();
    expect(r.ok).toBe(false);
    expect(r.catalogChecked).toBe(true);
    const byTable = Object.fromEntries(r.damagedCatalog.map((d) => [d.table, d]));
    expect(Object.keys(byTable).sort()).toEqual(['documents', 'entries', 'tags']);
    expect(byTable.entries).toMatchObject({ reason: 'catalog', missing: 1, extra: 0, differing: 1 });
    expect(byTable.entries!.message).toContain(`id ${gone.id}`);
    expect(byTable.entries!.message).toContain(`id ${entry.id}`);
    expect(byTable.entries!.message).toContain('kura rebuild');
    expect(byTable.tags).toMatchObject({ missing: 0, extra: 1, differing: 0 });
    expect(byTable.tags!.message).toContain('"forged"');
    expect(byTable.documents).toMatchObject({ missing: 0, extra: 0, differing: 1 });
    await s.close();

    // The advice holds: rebuilt from the log, the store verifies clean, the entries as they were.
    await Store.rebuild(dir);
    const mended = await reopen(dir);
    expect(await mended.verify()).toMatchObject({ ok: true, catalogChecked: true, damagedCatalog: [] });
    expect((await mended.stat('notes/n3.md')).path).toBe('notes/n3.md');
    await expect(mended.stat('notes/n1.me')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await mended.close();
  });

  it("damage SQLite finds in its pages is damage of the database: an index that lost a row, a page it cannot read", async () => {
    const { store, dir } = await busyStore();
    await store.close();
    const db = new Database(join(dir, 'kura.db'), { readonly: true });
    const page = db.prepare("SELECT rootpage AS n FROM sqlite_master WHERE name = 'tags_entry'").get() as { n: number };
    const size = db.pragma('page_size', { simple: true }) as number;
    db.close();
    expect(page.n).toBeGreaterThan(1);
    const poke = (at: number, byte: (b: number) => number) => {
      const fd = openSync(join(dir, 'kura.db'), 'r+');
      const b = Buffer.alloc(1);
      readSync(fd, b, 0, 1, at);
      writeSync(fd, Buffer.from([byte(b[0]!)]), 0, 1, at);
      closeSync(fd);
    };
    // The index's first cell ends the page: a byte of its key changed, the index no longer
    // holds the row it had (what a lookup through it then misses: a short listing).
    poke(page.n * size - 1, (b) => b ^ 0x01);
    let s = await reopen(dir);
    let r = await s.verify();
    expect(r.ok).toBe(false);
    expect(r.damagedCatalog[0]).toMatchObject({ reason: 'database', message: expect.stringMatching(/^SQLite finds kura\.db damaged: row \d+ missing from index tags_entry: a rebuild makes the database again from the log \(kura rebuild/) });
    // And what a read through that index sees (the comparison's ORDER BY uses it): a tag the
    // log never gave, in place of one it gave.
    expect(r.catalogChecked).toBe(true);
    expect(r.damagedCatalog.slice(1)).toEqual([expect.objectContaining({ reason: 'catalog', table: 'tags', missing: 1, extra: 1, differing: 0 })]);
    await s.close();
    // The page's b-tree type byte: no page type has this value; SQLite cannot read the page.
    poke((page.n - 1) * size, () => 0xff);
    s = await reopen(dir);
    r = await s.verify();
    expect(r.ok).toBe(false);
    expect(r.damagedCatalog.filter((d) => d.reason === 'database')).toHaveLength(1);
    expect(r.damagedCatalog[0]!.message).toMatch(/damaged.*kura rebuild/);
    await s.close();
  });

  it("another connection's merge of the search index is no damage (FTS5 keeps a stale segment list per connection)", async () => {
    const { store, dir } = await busyStore();
    await store.indexStatus({ wait: true });
    expect(await store.verify()).toMatchObject({ ok: true, damagedCatalog: [] });
    // What another process's indexer does now and then: segments merged, the old ones gone.
    // (Written as the store's writer writes, which keeps BM25's totals: decision 0082.)
    const other = openSqlite(join(dir, 'search.db'));
    const st = new IndexStatements(other);
    st.write([[999999, ['x', '', '', 'kura words']]]);
    st.write([[999999, null]]);
    other.exec("INSERT INTO search(search) VALUES('optimize')");
    other.close();
    // (SQLite's integrity check on this connection, without reading the index first, reported
    // "fts5: corruption found reading blob …" here.)
    expect(await store.verify()).toMatchObject({ ok: true, damagedCatalog: [] });
    expect((await store.search('herons', { mode: 'keyword' })).map((h) => h.path)).toContain('notes/n1.md');
    await store.close();
  });

  it('tables longer than a page: every row compared, damage found on both sides of a page boundary', async () => {
    const { store, dir } = await longStore();
    const clean = await store.verify();
    await store.close();
    expect(clean).toMatchObject({ ok: true, catalogChecked: true, damagedCatalog: [] });
    expect(clean.catalogRowsChecked).toBe(rowsIn(dir));
    // Entries ordered by id: the 2,000th and 2,001st (either side of the first page's end) lost,
    // the 1,999th and the 2,500th changed, and a row past the last.
    const db = new Database(join(dir, 'kura.db'), { readonly: true });
    const ids = (db.prepare('SELECT id FROM entries ORDER BY id').all() as { id: number }[]).map((r) => r.id);
    db.close();
    expect(ids.length).toBeGreaterThan(2_500);
    tamper(dir, 'DELETE FROM entries WHERE id IN (?, ?)', ids[1999]!, ids[2000]!);
    tamper(dir, "UPDATE entries SET path = path || '~' WHERE id IN (?, ?)", ids[1998]!, ids[2499]!);
    tamper(dir, "INSERT INTO entries(id, path, doc_id, media_type, created_at, updated_at) SELECT id + 1000, path || '.copy', doc_id, media_type, created_at, updated_at FROM entries WHERE id = ?", ids.at(-1)!);
    const s = await reopen(dir);
    const r = await s.verify();
    await s.close();
    // (The row put in past the last id moved AUTOINCREMENT's counter too.)
    expect(r.damagedCatalog.map((d) => d.table)).toEqual(['entries', 'sqlite_sequence']);
    expect(r.damagedCatalog[0]).toMatchObject({ reason: 'catalog', missing: 2, extra: 1, differing: 2 });
    for (const id of [ids[1999], ids[2000], ids[1998], ids[2499], ids.at(-1)! + 1000]) expect(r.damagedCatalog[0]!.message).toContain(`id ${id}`);
  });

  it('another process committing while verify runs is caught up with, not taken for damage', async () => {
    const { store, dir } = await longStore();
    const child = spawn(process.execPath, [CHILD, 'write-normal', dir, '1', join(tempDir(), 'journal')], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const acks = () => new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
      await acks(); // writing
      const heads: number[] = [];
      const reports = [];
      for (let i = 0; i < 3; i++) {
        reports.push(await store.verify());
        heads.push((await store.stats()).documents);
      }
      for (const r of reports) expect(r).toMatchObject({ ok: true, catalogChecked: true, damagedCatalog: [] });
      // The child's commits went on throughout (documents came between verifies).
      expect(new Set(heads).size).toBeGreaterThan(1);
    } finally {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    // And once the writer stopped (killed mid-write: nothing half done counts), the same.
    expect(await store.verify()).toMatchObject({ ok: true, catalogChecked: true, damagedCatalog: [] });
    await store.close();
  });

  it('the head is read before the log: a commit landing between the two is no commit the log lost', async () => {
    const { store, dir } = await newStore();
    await store.put(textBytes(1, 1_000), { path: 'a.md' });
    await batchEnded();
    const db = openSqlite(join(dir, 'kura.db'), { readonly: true });
    const real = new FsLogStore(dir);
    // The log as it is read, and a writer's commit landing right after each segment is read.
    const readSegment = async (name: string) => {
      const bytes = await real.readSegment(name);
      await store.put(textBytes(2 + bytes.length, 1_000), { path: 'b.md' });
      await batchEnded();
      return bytes;
    };
    const log = new Proxy(real, { get: (t, k) => (k === 'readSegment' ? readSegment : typeof Reflect.get(t, k) === 'function' ? Reflect.get(t, k).bind(t) : Reflect.get(t, k)) });
    try {
      const r = await verifyLog(prepareStatements(db), log);
      expect(r.damaged).toEqual([]);
      expect(r.commitsChecked).toBeGreaterThan(0);
    } finally {
      db.close();
      await store.close();
    }
  });
});
