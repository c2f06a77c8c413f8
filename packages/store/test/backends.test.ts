/**
 * Conformance suites: every PackStore and SqlDatabase implementation must pass the same tests
 * (the contracts in src/backend/*.ts). The PackStore checks (conformance/packs.ts) also run
 * against the OPFS store inside Chromium (apps/web/test/opfs-conformance.test.ts).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryPackStore } from '../src/backend/memory-packs.js';
import type { PackStore } from '../src/backend/packs.js';
import type { SqlDatabase } from '../src/backend/sql.js';
import { FsPackStore } from '../src/node/fs-packs.js';
import { openSqlite } from '../src/node/sqlite.js';
import sqlite3InitModule from '@sqlite.org/sqlite-wasm';
import { openMemoryDatabase } from '../src/backend/sqlite-wasm.js';
import { tempDir } from './helpers/store.js';
import { packChecks } from './conformance/packs.js';

const sqlite3 = await sqlite3InitModule();

const packStores: [string, () => PackStore][] = [
  ['memory', () => new MemoryPackStore()],
  ['file system', () => new FsPackStore(join(tempDir(), 'packs'))],
];

describe.each(packStores)('PackStore conformance: %s', (_name, make) => {
  for (const check of packChecks) it(check.name, () => check.run(make));
});

const databases: [string, () => SqlDatabase][] = [
  ['better-sqlite3 (file)', () => openSqlite(join(tempDir(), 'conf.db'))],
  ['better-sqlite3 (memory)', () => openSqlite(':memory:')],
  ['sqlite-wasm (memory)', () => openMemoryDatabase(sqlite3)],
];

describe.each(databases)('SqlDatabase conformance: %s', (_name, make) => {
  it('round-trips integers, text, blobs and null', () => {
    const db = make();
    db.exec('CREATE TABLE t (i INTEGER, s TEXT, b BLOB, n TEXT) STRICT');
    db.prepare('INSERT INTO t VALUES (?, ?, ?, ?)').run(2 ** 52, 'héllo', new Uint8Array([0, 255, 7]), null);
    const row = db.prepare<{ i: number; s: string; b: Uint8Array; n: null }>('SELECT * FROM t').get()!;
    expect(row.i).toBe(2 ** 52);
    expect(row.s).toBe('héllo');
    expect(row.b).toBeInstanceOf(Uint8Array);
    expect([...row.b]).toEqual([0, 255, 7]);
    expect(row.n).toBeNull();
    db.close();
  });

  it('round-trips edge values: empty and large text and blobs, non-BMP text, number limits, bigint and real parameters', () => {
    const db = make();
    db.exec('CREATE TABLE v (id INTEGER PRIMARY KEY, x ANY) STRICT');
    const big = new Uint8Array(3 << 20).map((_, i) => (i * 131) >>> 3);
    const values: [unknown, unknown][] = [
      ['', ''],
      [new Uint8Array(0), new Uint8Array(0)],
      ['a😀b\u00e9\u4e2d', 'a😀b\u00e9\u4e2d'],
      ['x'.repeat(200_000), 'x'.repeat(200_000)],
      [big, big],
      [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
      [-Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER],
      [0, 0],
      [1.5, 1.5],
      [-2.25e300, -2.25e300],
      [7n, 7],
      [null, null],
    ];
    const insert = db.prepare('INSERT INTO v (x) VALUES (?)');
    for (const [v] of values) insert.run(v as never);
    const rows = db.prepare<{ x: unknown }>('SELECT x FROM v ORDER BY id').all();
    rows.forEach((r, i) => {
      const want = values[i]![1];
      if (want instanceof Uint8Array) {
        expect(r.x).toBeInstanceOf(Uint8Array);
        expect(Buffer.compare(Buffer.from(r.x as Uint8Array), Buffer.from(want))).toBe(0);
      } else expect(r.x).toStrictEqual(want);
    });
    db.close();
  });

  it('transactions commit, roll back on throw, and nest as savepoints', () => {
    const db = make();
    db.exec('CREATE TABLE t (x INTEGER PRIMARY KEY)');
    const ins = db.prepare('INSERT INTO t VALUES (?)');
    const count = () => db.prepare<{ n: number }>('SELECT COUNT(*) AS n FROM t').get()!.n;
    db.transaction(() => ins.run(1));
    expect(() =>
      db.transaction(() => {
        ins.run(2);
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(count()).toBe(1);
    db.transaction(() => {
      ins.run(3);
      expect(db.inTransaction()).toBe(true);
      try {
        db.transaction(() => {
          ins.run(4);
          ins.run(4); // constraint violation rolls back the savepoint only
        });
      } catch {
        // expected
      }
    });
    expect(db.prepare<{ x: number }>('SELECT x FROM t ORDER BY x').all().map((r) => r.x)).toEqual([1, 3]);
    expect(db.inTransaction()).toBe(false);
  });

  it('iterates and reports changes and rowids', () => {
    const db = make();
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    const r = db.prepare('INSERT INTO t(v) VALUES (?)').run('a');
    expect(Number(r.lastInsertRowid)).toBe(1);
    db.prepare('INSERT INTO t(v) VALUES (?)').run('b');
    expect([...db.prepare<{ v: string }>('SELECT v FROM t ORDER BY id').iterate()].map((x) => x.v)).toEqual(['a', 'b']);
    expect(db.prepare('UPDATE t SET v = ?').run('z').changes).toBe(2);
  });

  it('throws SQLite errors with the extended result code as `code`, as better-sqlite3 does', () => {
    const db = make();
    db.exec('CREATE TABLE k (id INTEGER PRIMARY KEY, u TEXT UNIQUE)');
    const insert = db.prepare('INSERT INTO k VALUES (?, ?)');
    insert.run(1, 'a');
    const codeOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return (e as { code?: unknown }).code;
      }
      return 'no error';
    };
    expect(codeOf(() => insert.run(1, 'b'))).toBe('SQLITE_CONSTRAINT_PRIMARYKEY');
    expect(codeOf(() => insert.run(2, 'a'))).toBe('SQLITE_CONSTRAINT_UNIQUE');
    expect(insert.run(2, 'b').changes).toBe(1); // the statement works after a failure
    db.close();
  });

  it('refuses a wrong parameter count and a statement re-entered while iterating', () => {
    const db = make();
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES (1), (2)');
    expect(() => db.prepare('SELECT * FROM t WHERE id = ?').get()).toThrow();
    expect(() => db.prepare('SELECT * FROM t WHERE id = ?').get(1, 2)).toThrow();
    const all = db.prepare<{ id: number }>('SELECT id FROM t ORDER BY id');
    const seen: number[] = [];
    expect(() => {
      for (const r of all.iterate()) {
        seen.push(r.id);
        all.all();
      }
    }).toThrow();
    expect([...all.iterate()].map((r) => r.id)).toEqual([1, 2]); // usable again afterwards
  });

  it('a transaction function returning a promise is refused and rolled back', () => {
    const db = make();
    db.exec('CREATE TABLE t (x INTEGER)');
    expect(() => db.transaction((async () => db.prepare('INSERT INTO t VALUES (1)').run()) as () => unknown)).toThrow();
    expect(db.inTransaction()).toBe(false);
  });
});
