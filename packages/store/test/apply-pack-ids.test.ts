/**
 * Which pack row a put's chunks point at (catalog/ops.ts): a put names packs by name, and the
 * replay remembers the row the commit's own `pack` operation just made (ApplyContext.madePack)
 * instead of looking it up for every put. These apply operations straight to a real catalog
 * database and read the rows back, for the cases where remembering would go wrong: a `pack`
 * operation that changes nothing (its row was there already, another insert since), an
 * application rolled back and another commit applied in its place, a pack dropped in between.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqlite } from '../src/node/sqlite.js';
import { migrate } from '../src/catalog/schema.js';
import { prepareStatements } from '../src/catalog/statements.js';
import { applyOp, type ApplyContext, type CommitPlace, type Op } from '../src/catalog/ops.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function catalog(): ApplyContext & { pack(name: string): number | undefined; chunkPack(key: string): number | undefined } {
  const dir = mkdtempSync(join(tmpdir(), 'kura-packids-'));
  dirs.push(dir);
  const db = openSqlite(join(dir, 'kura.db'));
  migrate(db);
  const st = prepareStatements(db);
  return {
    db,
    st,
    pack: (name) => db.prepare<{ id: number }>('SELECT id FROM packs WHERE name = ?').get(name)?.id,
    chunkPack: (key) => db.prepare<{ pack_id: number }>('SELECT pack_id FROM chunks WHERE key = ?').get(Buffer.from(key, 'hex'))?.pack_id,
  };
}

const hex = (byte: number) => byte.toString(16).padStart(2, '0').repeat(32);
const packName = (byte: number) => byte.toString(16).padStart(2, '0').repeat(16);

/** A put of one 10-byte chunk (key `hex(byte)`) stored in `pack` at `offset`. */
function put(byte: number, pack: string, offset: number): Op {
  return {
    op: 'put',
    digest: `sha256:${hex(byte + 1)}`,
    size: 10,
    manifest: `${hex(byte)}0a000000`,
    packs: [pack],
    places: [0, 0, offset, 18, 0],
    entry: { path: `doc-${byte}` },
  };
}

const carried = (name: string): Op => ({ op: 'pack', name, writer: 'w', inline: true });

describe('the pack row a put names', () => {
  it("a commit's pack operation that changes nothing: its puts point at the pack's own row, not at the row inserted last", () => {
    const c = catalog();
    const p = packName(1);
    const first: CommitPlace = { seq: 1, end: 100 };
    c.db.transaction(() => {
      applyOp(c, carried(p), 1, first);
      applyOp(c, put(0x10, p, 4), 1, first);
    });
    // Another pack since (the connection's last insert is now its row), then a commit that
    // carries the same pack again — as after a create whose answer was lost — and names it.
    const second: CommitPlace = { seq: 2, end: 100 };
    const third: CommitPlace = { seq: 3, end: 100 };
    c.db.transaction(() => applyOp(c, { op: 'pack', name: packName(2), writer: 'w' }, 2, second));
    c.db.transaction(() => {
      applyOp(c, carried(p), 3, third);
      applyOp(c, put(0x20, p, 40), 3, third);
    });
    expect(c.pack(p)).toBeDefined();
    expect(c.pack(packName(2))).not.toBe(c.pack(p));
    expect(c.chunkPack(hex(0x10))).toBe(c.pack(p));
    expect(c.chunkPack(hex(0x20))).toBe(c.pack(p));
  });

  it('an application rolled back, then another commit in its place that names the pack without making it: refused, not pointed at a row that went', () => {
    const c = catalog();
    const p = packName(3);
    const at: CommitPlace = { seq: 1, end: 100 };
    expect(() =>
      c.db.transaction(() => {
        applyOp(c, carried(p), 1, at);
        applyOp(c, put(0x30, p, 4), 1, at);
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(c.pack(p)).toBeUndefined();
    // Another pack's row takes the id the rolled-back one had (straight, as no operation of
    // this application), then another commit takes the same seq.
    c.db.transaction(() => c.st.packInsert.run(packName(4), 16, 2, 'w'));
    const other: CommitPlace = { seq: 1, end: 100 };
    expect(() => c.db.transaction(() => applyOp(c, put(0x40, p, 4), 2, other))).toThrow(expect.objectContaining({ code: 'MISSING_CHUNKS' }));
    expect(c.chunkPack(hex(0x40))).toBeUndefined();
  });

  it('a pack dropped after its commit made it: a later put of the same application that names it is refused', () => {
    const c = catalog();
    const p = packName(5);
    const at: CommitPlace = { seq: 1, end: 100 };
    expect(() =>
      c.db.transaction(() => {
        applyOp(c, carried(p), 1, at);
        applyOp(c, { op: 'drop-packs', names: [p] }, 1, at);
        applyOp(c, put(0x50, p, 4), 1, at);
      }),
    ).toThrow(expect.objectContaining({ code: 'MISSING_CHUNKS' }));
  });
});
