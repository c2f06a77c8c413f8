/**
 * The index at the end of every pack its writer sealed (FORMAT.md §6), read here by a decoder
 * written from the format text alone (DataView and node:crypto, nothing from src but the
 * store), against the records in the file and the chunk rows in the database.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { randomBytes, textBytes } from '../../core/test/helpers/data.js';
import { PackIndexBuilder, decodePackIndex, recordHeader } from '../src/bytes/pack-record.js';
import { Store } from '../src/node/index.js';
import { tempDir, track } from './helpers/store.js';

interface Entry {
  offset: number;
  codec: number;
  raw: number;
  stored: number;
  key: string;
}

/** The index at the end of `pack`, or undefined when it has none; throws when it is damaged. */
function readIndex(pack: Buffer): { entries: Entry[]; start: number } | undefined {
  if (pack.toString('latin1', pack.length - 4) !== 'KEND') return undefined;
  const length = pack.readUInt32LE(pack.length - 8);
  const start = pack.length - length;
  const index = pack.subarray(start);
  const hashAt = length - 40;
  expect(createHash('sha256').update(index.subarray(0, hashAt)).digest('hex')).toBe(index.subarray(hashAt, hashAt + 32).toString('hex'));
  expect(index.toString('latin1', 0, 4)).toBe('KIDX');
  expect(index.readUInt32LE(4)).toBe(1);
  const count = index.readUInt32LE(8);
  expect(12 + count * 52).toBe(hashAt);
  const entries = Array.from({ length: count }, (_, i) => {
    const e = 12 + i * 52;
    expect(index.subarray(e + 9, e + 12).equals(Buffer.alloc(3))).toBe(true);
    return { offset: Number(index.readBigUInt64LE(e)), codec: index[e + 8]!, raw: index.readUInt32LE(e + 12), stored: index.readUInt32LE(e + 16), key: index.subarray(e + 20, e + 52).toString('hex') };
  });
  return { entries, start };
}

/** Every pack file: its index checked against its records and the database's chunk rows. */
function checkPacks(dir: string): { indexed: number; records: number } {
  const db = new Database(join(dir, 'kura.db'), { readonly: true });
  const packs = db.prepare('SELECT id, name, size, sealed FROM packs').all() as { id: number; name: string; size: number; sealed: number }[];
  const rows = db.prepare('SELECT key, pack_id, offset, raw_len, stored_len, codec, group_at FROM chunks').all() as { key: Buffer; pack_id: number; offset: number; raw_len: number; stored_len: number; codec: number; group_at: number | null }[];
  db.close();
  let indexed = 0;
  let records = 0;
  for (const p of packs) {
    const file = readFileSync(join(dir, 'packs', p.name.slice(0, 2), `${p.name}.pack`));
    expect(file.length, `pack ${p.name}: its row's size`).toBe(p.size);
    const index = readIndex(file);
    expect(index !== undefined, `pack ${p.name} (sealed ${p.sealed}) has an index`).toBe(p.sealed > 0);
    if (!index) continue;
    indexed++;
    // The records lie end to end from the header to the index, each as its entry says.
    let at = 16;
    // Members of each group record, from the record's own table.
    const members = new Map<number, Map<number, number>>();
    for (const e of index.entries) {
      expect(e.offset).toBe(at);
      if (e.codec === 2) {
        // A group record (FORMAT.md §6.2): "KGRP", codec 1, its raw and stored lengths, its
        // member count (which the entry holds in place of a key), its table of members' lengths.
        expect(file.toString('latin1', at, at + 4)).toBe('KGRP');
        expect(file[at + 4]).toBe(1);
        const count = file.readUInt32LE(at + 16);
        expect([file.readUInt32LE(at + 8), file.readUInt32LE(at + 12), file.subarray(at + 16, at + 48).toString('hex')]).toEqual([e.raw, e.stored, e.key]);
        const table = new Map<number, number>(); // place -> length (a member's key is the BLAKE3 of its bytes, which the reads check)
        let member = 0;
        for (let m = 0; m < count; m++) {
          const length = file.readUInt32LE(at + 48 + m * 4);
          table.set(member, length);
          member += length;
        }
        expect(member).toBe(e.raw);
        members.set(at, table);
      } else {
        expect(file.toString('latin1', at, at + 4)).toBe('KCHK');
        expect([file[at + 4], file.readUInt32LE(at + 8), file.readUInt32LE(at + 12), file.subarray(at + 16, at + 48).toString('hex')]).toEqual([e.codec, e.raw, e.stored, e.key]);
      }
      at += 48 + e.stored;
      records++;
    }
    expect(at).toBe(index.start);
    // Every chunk row in this pack is an entry at its offset, or a member of the group record there.
    const byOffset = new Map(index.entries.map((e) => [e.offset, e]));
    for (const r of rows.filter((r) => r.pack_id === p.id)) {
      const e = byOffset.get(r.offset)!;
      if (r.codec === 2) {
        expect([e.codec, e.stored]).toEqual([2, r.stored_len]);
        expect(members.get(r.offset)!.get(r.group_at!)).toBe(r.raw_len);
      } else {
        expect(r.group_at).toBeNull();
        expect(e).toEqual({ offset: r.offset, codec: r.codec, raw: r.raw_len, stored: r.stored_len, key: r.key.toString('hex') });
      }
    }
    // The store's own decoder reads the same.
    expect(decodePackIndex(new Uint8Array(file), p.name)!.map((e) => [e.offset, e.key])).toEqual(index.entries.map((e) => [e.offset, e.key]));
  }
  return { indexed, records };
}

describe('pack index', () => {
  it('every pack its writer sealed ends with an index of its records, also after GC compacts', async () => {
    const dir = join(tempDir(), 'store');
    const store = track(await Store.init(dir, { chunking: { avg: 1024 } }));
    await store.close();
    const s = track(await Store.open(dir, { packSize: 64 * 1024 }));
    const digests: string[] = [];
    for (let i = 0; i < 60; i++) digests.push((await s.put(i % 2 ? randomBytes(i, 9_000) : textBytes(i, 7_000), { path: `f${i}` })).digest);
    await s.close();
    const first = checkPacks(dir);
    expect(first.indexed).toBeGreaterThan(3);
    // Most of every pack becomes garbage: GC copies the live records into new packs.
    const g = track(await Store.open(dir, { packSize: 64 * 1024 }));
    for (let i = 0; i < 60; i++) if (i % 5) await g.deletePath(`f${i}`);
    const report = await g.gc();
    expect(report.packsCompacted + report.packsDeleted).toBeGreaterThan(0);
    await g.close();
    const after = checkPacks(dir);
    expect(after.indexed).toBeGreaterThan(0);
    const r = track(await Store.open(dir));
    for (let i = 0; i < 60; i += 5) expect((await r.getBytes(digests[i]!)).length).toBeGreaterThan(0);
    expect((await r.verify()).ok).toBe(true);
  });

  it('a damaged index is CORRUPT_DATA; a pack without one has none', () => {
    const entries = [{ offset: 16, codec: 0, rawLen: 5, storedLen: 5, key: 'ab'.repeat(32) }];
    // Built by hand from FORMAT.md §6, then read by the store's decoder.
    const body = Buffer.alloc(12 + 52);
    body.write('KIDX', 0, 'latin1');
    body.writeUInt32LE(1, 4);
    body.writeUInt32LE(1, 8);
    body.writeBigUInt64LE(16n, 12);
    body.writeUInt32LE(5, 24);
    body.writeUInt32LE(5, 28);
    Buffer.from('ab'.repeat(32), 'hex').copy(body, 32);
    const tail = Buffer.alloc(8);
    tail.writeUInt32LE(body.length + 40, 0);
    tail.write('KEND', 4, 'latin1');
    const index = Buffer.concat([body, createHash('sha256').update(body).digest(), tail]);
    const pack = Buffer.concat([Buffer.from('KURAPACK\x01\x00\x00\x00\x00\x00\x00\x00', 'latin1'), Buffer.alloc(53), index]);
    expect(decodePackIndex(new Uint8Array(pack), 'p')).toEqual(entries);
    expect(decodePackIndex(new Uint8Array(pack.subarray(0, 69)), 'p')).toBeUndefined();
    for (const at of [pack.length - index.length + 4, pack.length - index.length + 20, pack.length - 30]) {
      const bad = Buffer.from(pack);
      bad[at] ^= 1;
      expect(() => decodePackIndex(new Uint8Array(bad), 'p'), `byte ${at}`).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA', reason: 'pack-index' }));
    }
    // A whole index but for its "KEND" (zeroed, in a trial) is damage, not a pack without one;
    // bytes that only look like an index's length are a pack without one.
    for (const end of [Buffer.alloc(4), Buffer.from('KENd')]) {
      const cut = Buffer.from(pack);
      end.copy(cut, pack.length - 4);
      expect(() => decodePackIndex(new Uint8Array(cut), 'p'), end.toString('hex')).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA', reason: 'pack-index', message: expect.stringMatching(/^pack p: its index ends with [0-9a-f]{8} where "KEND" should be/) }));
    }
    const noIndex = Buffer.concat([pack.subarray(0, 16 + 53), Buffer.from([64, 0, 0, 0, 1, 2, 3, 4])]);
    expect(decodePackIndex(new Uint8Array(noIndex), 'p')).toBeUndefined();
  });

  it('an index built record by record is the one FORMAT.md §6 describes, past 2^32 and past its first buffer', () => {
    // 600 entries (the builder starts with room for 256), offsets up to ~2^40, from their
    // records' headers: each field read back by this file's own decoder, from the bytes alone.
    const builder = new PackIndexBuilder();
    const expected: Entry[] = [];
    for (let i = 0; i < 600; i++) {
      const key = createHash('sha256').update(String(i)).digest('hex');
      const e = { offset: 16 + i * 2 ** 31 + (i % 7), codec: i % 2, raw: 1000 + i, stored: 900 + i, key };
      const header = recordHeader({ key, codec: e.codec, rawLen: e.raw, storedLen: e.stored });
      if (i % 3 === 0) header.fill(0xff, 5, 8); // a copied record's stray bytes stay out of the index
      builder.add(header, e.offset);
      expected.push(e);
    }
    expect(builder.count).toBe(600);
    const index = Buffer.from(builder.encode());
    const read = readIndex(Buffer.concat([Buffer.alloc(16), index]))!;
    expect(read.start).toBe(16);
    expect(read.entries).toEqual(expected);
    // An empty pack's index: no entries, still whole.
    expect(readIndex(Buffer.from(new PackIndexBuilder().encode()))!.entries).toEqual([]);
  });
});
