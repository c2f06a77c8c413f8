/**
 * FTS5's BM25 totals in a contentless_delete table, kept true (search/fts-totals.ts, decision
 * 0082). The reference is FTS5 itself: an index written by any sequence of adds, re-indexes and
 * deletes must score every query exactly as a table made at once from the rows left does — on
 * both SQLite builds the store runs on (better-sqlite3's file index, the wasm one inline).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sqlite3InitModule from '@sqlite.org/sqlite-wasm';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { SqlDatabase } from '../src/backend/sql.js';
import { openMemoryDatabase } from '../src/backend/sqlite-wasm.js';
import { openSqlite } from '../src/node/sqlite.js';
import { decodeVarints, deletesKeepTotals, encodeVarints, FtsTotals } from '../src/search/fts-totals.js';
import { IndexStatements, SEARCH_TABLE, type IndexFields, type IndexRow } from '../src/search/index-writer.js';

const sqlite3 = await sqlite3InitModule();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const builds: [string, () => SqlDatabase][] = [
  [
    'better-sqlite3 (a file)',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'kura-fts-totals-'));
      dirs.push(dir);
      return openSqlite(join(dir, 'search.db'));
    },
  ],
  ['sqlite-wasm (memory)', () => openMemoryDatabase(sqlite3)],
];

const WORDS = ['apple', 'banana', 'cherry', 'damson', 'elder', 'fig', 'grape', 'haw', 'ilama', 'jujube'];
const QUERIES = ['apple', 'banana OR fig', 'cherry', 'grape haw', 'jujube OR apple OR elder', 'damson'];

function withIndex(open: () => SqlDatabase): SqlDatabase {
  const db = open();
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${SEARCH_TABLE}`);
  return db;
}

/** Each query's (rowid, bm25) pairs, weighted as FORMAT.md §10 weighs the columns. */
function scores(db: SqlDatabase): [number, number][][] {
  const q = db.prepare<{ id: number; s: number }>("SELECT rowid AS id, bm25(search, 4.0, 3.0, 2.0, 1.0) AS s FROM search WHERE search MATCH ? ORDER BY rowid");
  return QUERIES.map((m) => q.all(m).map((r) => [r.id, r.s] as [number, number]));
}

/** The averages record: rows, then tokens of each of the four columns (zeros where FTS5 never wrote one). */
function record(db: SqlDatabase): number[] {
  const block = db.prepare<{ block: Uint8Array }>('SELECT block FROM search_data WHERE id = 1').get()?.block;
  const values = block ? decodeVarints(block) : [];
  return [0, 1, 2, 3, 4].map((i) => values[i] ?? 0);
}

const text = fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 12 }).map((w) => w.join(' '));
const fields: fc.Arbitrary<IndexFields> = fc.tuple(fc.option(text, { nil: null }), text, text, text);
/** Batches of rows for ids 1-12: a row (added or replaced) or null (deleted), an id maybe twice in one batch. */
const batches = fc.array(fc.array(fc.tuple(fc.integer({ min: 1, max: 12 }), fc.option(fields, { nil: null })), { minLength: 1, maxLength: 6 }), {
  minLength: 1,
  maxLength: 10,
});

describe.each(builds)('the index totals on %s', (_, open) => {
  it('is the record FTS5 writes, read back (known answer: rows, then tokens per column)', () => {
    const db = withIndex(open);
    const st = new IndexStatements(db);
    st.write([
      [1, ['a/b.txt', 'red', '', 'apple banana']],
      [2, [null, '', 'x y z', 'cherry']],
    ]);
    // path: a, b, txt = 3 tokens; tags 1; meta 3; body 2 + 1.
    expect(record(db)).toEqual([2, 3, 1, 3, 3]);
    db.close();
  });

  it('scores every query as an index made at once from the rows left, after any adds, re-indexes and deletes', () => {
    fc.assert(
      fc.property(batches, (bs) => {
        const db = withIndex(open);
        const st = new IndexStatements(db);
        const left = new Map<number, IndexFields>();
        for (const b of bs) {
          st.write(b as IndexRow[]);
          for (const [id, f] of b) {
            if (f) left.set(id, f);
            else left.delete(id);
          }
        }
        const fresh = withIndex(open);
        new IndexStatements(fresh).write([...left].map(([id, f]) => [id, f] as IndexRow));
        expect(record(db)).toEqual(record(fresh));
        expect(scores(db)).toEqual(scores(fresh));
        db.close();
        fresh.close();
      }),
      // (Every row deleted in the end: FTS5's record of no rows against a table never written.)
      { numRuns: 60, examples: [[[[[1, ['a.txt', 'red', '', 'apple']]], [[1, null]]]]] },
    );
  });

  it('mends an index whose deletes FTS5 left counted (one written by SQLite 3.53) when a writer opens it', () => {
    const db = withIndex(open);
    const fresh = withIndex(open);
    const row = (id: number) => [id, `doc${id}.txt`, '', '', `${WORDS[id % 10]} ${WORDS[(id * 3) % 10]} apple`] as const;
    const insFresh = fresh.prepare('INSERT INTO search(rowid, path, tags, meta, body) VALUES (?, ?, ?, ?, ?)');
    for (let id = 1; id <= 20; id++) insFresh.run(...row(id));
    const ins = db.prepare('INSERT INTO search(rowid, path, tags, meta, body) VALUES (?, ?, ?, ?, ?)');
    for (let round = 0; round < 5; round++) {
      for (let id = 1; id <= 20; id++) {
        db.prepare('DELETE FROM search WHERE rowid = ?').run(id);
        ins.run(...row(id));
      }
    }
    // What FTS5 alone leaves where it does not take deleted rows out (3.53): every re-index
    // counted again, five times the rows. A build that takes them out is given that record.
    const drifted = record(fresh).map((v) => v * 5);
    if (deletesKeepTotals(db)) db.writingShadowTables(() => db.prepare('UPDATE search_data SET block = ? WHERE id = 1').run(encodeVarints(drifted)));
    expect(record(db)).toEqual(drifted);
    expect(scores(db)).not.toEqual(scores(fresh));
    new IndexStatements(db);
    expect(record(db)).toEqual(record(fresh));
    expect(scores(db)).toEqual(scores(fresh));
    db.close();
    fresh.close();
  });

  it('leaves a true record alone, and an empty table empty', () => {
    const db = withIndex(open);
    const totals = new FtsTotals(db, 'search', 4);
    expect(totals.mend()).toBe(false);
    new IndexStatements(db).write([[7, ['p', 't', 'm', 'b']]]);
    expect(totals.mend()).toBe(false);
    new IndexStatements(db).write([[7, null]]);
    expect(record(db)).toEqual([0, 0, 0, 0, 0]);
    db.close();
  });
});

describe('SQLite varints (the averages record and _docsize)', () => {
  it('match known encodings', () => {
    expect([...encodeVarints([0, 1, 127])]).toEqual([0, 1, 0x7f]);
    expect([...encodeVarints([128])]).toEqual([0x81, 0x00]);
    expect([...encodeVarints([16383, 16384])]).toEqual([0xff, 0x7f, 0x81, 0x80, 0x00]);
    // A ninth byte carries 8 bits whole (sqlite3GetVarint), its high bit no continuation.
    expect(decodeVarints(Uint8Array.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0xff, 0x05]))).toEqual([255, 5]);
  });

  it('round-trip any counts', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2 ** 50 })), (vs) => {
        expect(decodeVarints(encodeVarints(vs))).toEqual(vs);
      }),
    );
  });

  it('refuse a record cut short', () => {
    expect(() => decodeVarints(Uint8Array.from([0x81]))).toThrow(RangeError);
  });
});
