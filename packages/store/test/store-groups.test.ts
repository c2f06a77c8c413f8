/**
 * Grouped compression (decision 0063, FORMAT.md §6.2): a put's new chunks compressed together
 * in group records, each chunk still its own key, row and deduplication. Pack files are read
 * here by a decoder written from FORMAT.md, with an independent zstd (fzstd) and BLAKE3
 * (@noble/hashes), not the store's.
 */
import { describe, expect, it } from 'vitest';
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { decompress as fzstd } from 'fzstd';
import { blake3 } from '@noble/hashes/blake3.js';
import { encodeChunk, ingest } from '@kura/core';
import { collect, concatBytes, expectSameBytes, newStore, randomBytes, recordsEnd, reopen, tempDir, textBytes } from './helpers/store.js';
import { GROUP_TARGET } from '../src/bytes/pack-record.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function packFiles(dir: string): string[] {
  const root = join(dir, 'packs');
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.pack'))
    .map((f) => join(root, f));
}

interface Member {
  key: string;
  raw: Uint8Array;
}

/** Every record of a pack file, decoded from FORMAT.md §6 and §6.2 alone. */
function records(file: string): { offset: number; kind: 'chunk' | 'group'; storedLen: number; members: Member[] }[] {
  const b = readFileSync(file);
  expect(b.toString('latin1', 0, 8)).toBe('KURAPACK');
  const version = b.readUInt32LE(8);
  expect([1, 3]).toContain(version); // 1: written before groups
  const end = recordsEnd(file);
  const out: ReturnType<typeof records> = [];
  for (let at = 16; at < end; ) {
    const magic = b.toString('latin1', at, at + 4);
    const codec = b[at + 4]!;
    const rawLen = b.readUInt32LE(at + 8);
    const storedLen = b.readUInt32LE(at + 12);
    if (magic === 'KCHK') {
      const payload = b.subarray(at + 48, at + 48 + storedLen);
      const raw = codec === 1 ? fzstd(payload) : new Uint8Array(payload);
      expect(raw.length).toBe(rawLen);
      out.push({ offset: at, kind: 'chunk', storedLen, members: [{ key: b.subarray(at + 16, at + 48).toString('hex'), raw }] });
    } else {
      expect([magic, version]).toEqual(['KGRP', 3]);
      expect(codec).toBe(1);
      expect(b.subarray(at + 20, at + 48).every((x) => x === 0)).toBe(true);
      const count = b.readUInt32LE(at + 16);
      expect(count).toBeGreaterThanOrEqual(2);
      const frame = b.subarray(at + 48 + count * 4, at + 48 + storedLen);
      const raw = fzstd(frame);
      expect(raw.length).toBe(rawLen);
      // The table holds each member's length; its key is the BLAKE3 of its bytes.
      const members: Member[] = [];
      let from = 0;
      for (let m = 0; m < count; m++) {
        const len = b.readUInt32LE(at + 48 + m * 4);
        members.push({ key: hex(blake3(raw.subarray(from, from + len))), raw: raw.subarray(from, from + len) });
        from += len;
      }
      expect(from).toBe(rawLen);
      out.push({ offset: at, kind: 'group', storedLen, members });
    }
    at += 48 + storedLen;
  }
  return out;
}

/** A closed store holding one grouped document of 600 KB of text, its pack file and its group record. */
async function closedStoreWithGroup(seed: number) {
  const { store, dir } = await newStore({ chunking: { avg: 4096 } });
  const data = textBytes(seed, 600_000);
  const { digest } = await store.put(data);
  await store.close();
  const file = packFiles(dir)[0]!;
  return { dir, data, digest, file, group: records(file).find((r) => r.kind === 'group')! };
}

describe('grouped compression', () => {
  it("a put's new chunks are compressed in groups of >= 1 MiB that an independent decoder reads back, each member under its own BLAKE3 key", async () => {
    const { store, dir } = await newStore();
    const data = textBytes(1, 5_000_000);
    const { digest, chunks, newBytesStored } = await store.put(data);
    await store.close();
    const all = packFiles(dir).flatMap(records);
    const groups = all.filter((r) => r.kind === 'group');
    expect(groups.length).toBeGreaterThanOrEqual(4);
    // Every group but a put's last holds at least GROUP_TARGET raw bytes; a member is never split.
    const sizes = groups.map((g) => g.members.reduce((n, m) => n + m.raw.length, 0));
    expect(sizes.filter((n) => n < GROUP_TARGET).length).toBeLessThanOrEqual(1);
    const members = new Map<string, Uint8Array>();
    for (const r of all) for (const m of r.members) {
      expect(hex(blake3(m.raw))).toBe(m.key); // (a chunk record's key is its header's)
      members.set(m.key, m.raw);
    }
    expect(members.size).toBe(chunks);
    // The document is its chunks in order (the manifest), and the rows name each member's place.
    const db = new Database(join(dir, 'kura.db'), { readonly: true });
    const doc = db.prepare('SELECT manifest FROM documents WHERE digest = ?').get(Buffer.from(digest.slice(7), 'hex')) as { manifest: Buffer };
    const rows = db.prepare('SELECT key, offset, raw_len, stored_len, codec, group_at FROM chunks').all() as { key: Buffer; offset: number; raw_len: number; stored_len: number; codec: number; group_at: number | null }[];
    db.close();
    const parts: Uint8Array[] = [];
    for (let e = 0; e < doc.manifest.length; e += 36) parts.push(members.get(doc.manifest.subarray(e, e + 32).toString('hex'))!);
    expectSameBytes(concatBytes(parts), data);
    const byOffset = new Map(all.map((r) => [r.offset, r]));
    for (const row of rows) {
      const rec = byOffset.get(row.offset)!;
      expect(row.stored_len).toBe(rec.storedLen);
      if (rec.kind === 'chunk') expect([row.codec === 2, row.group_at]).toEqual([false, null]);
      else {
        expect(row.codec).toBe(2);
        let at = 0;
        const m = rec.members.find((x) => {
          const here = at;
          at += x.raw.length;
          return here === row.group_at;
        });
        expect(m?.key).toBe(row.key.toString('hex'));
      }
    }
    // Smaller than the same chunks compressed alone (the format before groups).
    let alone = 0;
    for await (const c of ingest(data, { compression: false })) alone += 48 + encodeChunk(c.payload).payload.length;
    expect(newBytesStored).toBeLessThan(alone * 0.97);
    const s = await reopen(dir);
    expectSameBytes(await s.getBytes(digest), data);
    expect((await s.verify(undefined, { readData: true })).ok).toBe(true);
  });

  it('the same through an ingest worker (a file) and on the store thread (a stream); groups stay per put, deduplication per chunk', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 4096 } });
    const base = textBytes(2, 1_500_000);
    const file = join(tempDir(), 'a.txt');
    writeFileSync(file, base);
    const a = await store.put(file);
    // An edit in the middle: the second put writes only the chunks around it.
    const edited = concatBytes([base.subarray(0, 700_000), textBytes(3, 5_000), base.subarray(700_000)]);
    const b = await store.put(new Blob([edited]).stream());
    expect(b.chunks).toBeGreaterThan(200);
    expect(b.newChunks).toBeLessThan(8);
    expect(b.newBytesStored).toBeLessThan(20_000);
    expect(packFiles(dir).length).toBeGreaterThan(0);
    // Deleting the first leaves the second whole: its shared chunks live inside the first's groups.
    await store.delete(a.digest);
    await store.gc();
    expectSameBytes(await store.getBytes(b.digest), edited);
    expect((await store.verify(undefined, { readData: true })).ok).toBe(true);
    await store.close();
    expect(packFiles(dir).flatMap(records).filter((r) => r.kind === 'group').length).toBeGreaterThanOrEqual(2);
  });

  it('ranges inside grouped documents read exactly their bytes', async () => {
    const { store } = await newStore({ chunking: { avg: 4096 } });
    const data = textBytes(4, 900_000);
    const { digest } = await store.put(data);
    await fc.assert(
      fc.asyncProperty(fc.nat(data.length), fc.nat(70_000), async (start, n) => {
        const end = Math.min(data.length, start + n);
        expectSameBytes(await store.getRange(digest, start, end), data.subarray(start, end));
        expectSameBytes(await collect(store.getRangeStream(digest, start, end)), data.subarray(start, end));
      }),
      { numRuns: 60 },
    );
  });

  it('incompressible data stays in raw chunk records; a small document is one chunk record', async () => {
    const { store, dir } = await newStore();
    await store.put(randomBytes(5, 1_000_000));
    await store.put(textBytes(6, 900));
    await store.close();
    const all = packFiles(dir).flatMap(records);
    expect(all.every((r) => r.kind === 'chunk')).toBe(true);
  });

  it('damage in a group record — header, member table, frame — is CORRUPT_DATA and verify names it', async () => {
    const { dir, data, digest, file, group } = await closedStoreWithGroup(7);
    const frameAt = group.offset + 48 + group.members.length * 4;
    for (const at of [group.offset, group.offset + 8, group.offset + 16, group.offset + 30, group.offset + 48, group.offset + 60, frameAt + 10, group.offset + 48 + group.storedLen - 1]) {
      const bytes = readFileSync(file);
      bytes[at] ^= 0x20;
      writeFileSync(file, bytes);
      const s = await reopen(dir);
      const report = await s.verify(undefined, { readData: true });
      expect(report.ok, `flip at ${at - group.offset} of the group`).toBe(false);
      expect(report.damagedChunks.length).toBeGreaterThan(0);
      await expect(s.getBytes(digest)).rejects.toMatchObject({ code: 'CORRUPT_DATA' });
      await s.close();
      bytes[at] ^= 0x20;
      writeFileSync(file, bytes);
    }
    const s = await reopen(dir);
    expectSameBytes(await s.getBytes(digest), data);
  });

  it('forged group lengths are refused before anything is allocated for them: a 1 GiB group, a member past its group', async () => {
    const { dir, digest, file, group } = await closedStoreWithGroup(9);
    const original = readFileSync(file);
    // Header and member table agree on 1 GiB (the first member made to fit): the claim is over the bound.
    const bomb = Buffer.from(original);
    bomb.writeUInt32LE(bomb.readUInt32LE(group.offset + 8) + (1 << 30), group.offset + 8);
    bomb.writeUInt32LE(bomb.readUInt32LE(group.offset + 48) + (1 << 30), group.offset + 48);
    writeFileSync(file, bomb);
    let s = await reopen(dir);
    await expect(s.getBytes(digest)).rejects.toMatchObject({ code: 'CORRUPT_DATA' });
    expect(process.memoryUsage().rss).toBeLessThan(1 << 30);
    await s.close();
    writeFileSync(file, original);
    // A row that places its member past any group's end.
    const db = new Database(join(dir, 'kura.db'));
    const key = group.members[1]!.key;
    db.prepare('UPDATE chunks SET group_at = ? WHERE key = ?').run(1 << 30, Buffer.from(key, 'hex'));
    db.close();
    s = await reopen(dir);
    await expect(s.chunk(key)).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'too-large' });
    const report = await s.verify(undefined, { readData: true });
    expect(report.damagedChunks.map((c) => c.key)).toEqual([key]);
  });

  it('a put of bytes verify found damaged writes the members again as records of their own', async () => {
    const { dir, data, digest, file, group } = await closedStoreWithGroup(8);
    const bytes = readFileSync(file);
    bytes[group.offset + 48 + group.storedLen - 5] ^= 1; // the frame (no zstd checksum: the members it spoils fail their keys)
    writeFileSync(file, bytes);
    const s = await reopen(dir);
    const damaged = (await s.verify(undefined, { readData: true })).damagedChunks.map((c) => c.key);
    expect(damaged.length).toBeGreaterThan(0);
    expect(damaged.every((k) => group.members.some((m) => m.key === k))).toBe(true);
    const again = await s.put(data);
    expect(again.newChunks).toBe(damaged.length);
    expectSameBytes(await s.getBytes(digest), data);
    expect((await s.verify(undefined, { readData: true })).ok).toBe(true);
    await s.close();
    const db = new Database(join(dir, 'kura.db'), { readonly: true });
    for (const k of damaged) {
      expect(db.prepare('SELECT codec, group_at FROM chunks WHERE key = ?').get(Buffer.from(k, 'hex'))).toMatchObject({ group_at: null });
    }
    db.close();
  });

  it('a store from before groups (schema 17, pack version 1) reads as it is, takes groups beside its records, and GC compacts its old packs', async () => {
    const dir = join(tempDir(), 'store');
    cpSync(join(import.meta.dirname, 'fixtures', 'store-schema17'), dir, { recursive: true });
    const old = packFiles(dir);
    expect(old.map((f) => readFileSync(f).readUInt32LE(8))).toEqual(old.map(() => 1));
    const s = await reopen(dir);
    const listed = (await s.list({})).items.map((e) => [e.path, e.version, e.digest]);
    expect(listed).toEqual([
      ['src/notes/big.txt', 1, 'sha256:07658d4d9824d58e11d4894d41b9e3350f6b869828ab90ea210f6500c3090724'],
      ['src/readme.md', 1, 'sha256:7ee2e7cf704c8507e88d97622a320680cf295033037d1b1cfe7b32658bc7e4e5'],
      ['src/notes/small.txt', 2, 'sha256:34a7762423d5264a44a4c982d412d693239c27045abbdb820a647f0d4b1957d4'],
    ]);
    expect((await s.verify(undefined, { readData: true })).ok).toBe(true);
    // A new version of big.txt: an edit in the middle shares the old records' chunks; the rest is new text, grouped.
    const big = await s.getBytes('sha256:07658d4d9824d58e11d4894d41b9e3350f6b869828ab90ea210f6500c3090724');
    const edited = concatBytes([big.subarray(0, 50_000), textBytes(11, 2_000), big.subarray(50_000), textBytes(12, 400_000)]);
    const put = await s.put(edited, { path: 'src/notes/big.txt' });
    expect(put.chunks - put.newChunks).toBeGreaterThan(15);
    // The old version and the snapshot go; GC compacts or drops the old packs.
    await s.deleteVersion('src/notes/big.txt', 1);
    for (const snap of await s.snapshots()) await s.deleteSnapshot(snap.id);
    const report = await s.gc();
    expect(report.packsCompacted + report.packsDeleted).toBeGreaterThan(0);
    await s.close();
    const after = packFiles(dir).flatMap(records);
    expect(after.some((r) => r.kind === 'group')).toBe(true);
    expect(after.some((r) => r.kind === 'chunk')).toBe(true);
    const again = await reopen(dir);
    expectSameBytes(await again.getBytes(put.digest), edited);
    expect((await again.verify(undefined, { readData: true })).ok).toBe(true);
  });

  it("a snapshot's small files are compressed in groups across files, restored byte for byte", async () => {
    const src = join(tempDir(), 'tree');
    const files = new Map<string, Uint8Array>();
    for (let i = 0; i < 600; i++) {
      const rel = join(`d${i % 6}`, `f${i}.txt`);
      files.set(rel, textBytes(1000 + i, 1000 + ((i * 2654435761) % 3000)));
    }
    for (const [rel, bytes] of files) {
      mkdirSync(join(src, rel, '..'), { recursive: true });
      writeFileSync(join(src, rel), bytes);
    }
    const { store, dir } = await newStore();
    const snap = await store.snapshot(src);
    expect(snap.files).toBe(600);
    const out = join(tempDir(), 'out');
    await store.restore(snap.id, out);
    for (const [rel, bytes] of files) expectSameBytes(new Uint8Array(readFileSync(join(out, rel))), bytes, rel);
    expect((await store.verify(undefined, { readData: true })).ok).toBe(true);
    await store.close();
    const groups = packFiles(dir).flatMap(records).filter((r) => r.kind === 'group');
    // Each file is one chunk: a group of many members holds many files.
    expect(groups.length).toBeGreaterThan(0);
    expect(groups.reduce((n, g) => n + g.members.length, 0)).toBeGreaterThan(500);
    const stored = groups.reduce((n, g) => n + 48 + g.storedLen, 0);
    let alone = 0;
    for (const bytes of files.values()) alone += 48 + encodeChunk(bytes).payload.length;
    expect(stored).toBeLessThan(alone * 0.8);
  });

  it("putFiles: small files share group records, and each file is credited its share of them (the first was credited all, the others 0)", async () => {
    const src = join(tempDir(), 'small');
    mkdirSync(src);
    const paths: string[] = [];
    for (let i = 0; i < 40; i++) {
      paths.push(join(src, `f${i}.txt`));
      writeFileSync(paths[i]!, textBytes(3000 + i, 500 + i * 37));
    }
    const { store, dir } = await newStore();
    let credited = 0;
    for await (const o of store.putFiles(paths.map((path) => ({ path })))) {
      expect(o.result!.newChunks).toBe(1);
      expect(o.result!.newBytesStored, o.path).toBeGreaterThan(0);
      credited += o.result!.newBytesStored;
    }
    await store.close();
    const written = packFiles(dir).flatMap(records).reduce((n, r) => n + 48 + r.storedLen, 0);
    expect(packFiles(dir).flatMap(records).some((r) => r.kind === 'group' && r.members.length > 1)).toBe(true);
    expect(credited).toBe(written); // the shares add up to every record written, exactly
  });

  it('a chunk that comes again in the same document is stored once, on the store thread and on a worker', async () => {
    const { store } = await newStore({ chunking: { avg: 4096 } });
    const block = textBytes(13, 300_000);
    const data = concatBytes([block, textBytes(14, 1_500_000), block, textBytes(15, 1_500_000), block]);
    const alone = await store.put(concatBytes([block, textBytes(14, 1_500_000), textBytes(15, 1_500_000)]), { path: 'reference' });
    for (const [how, input] of [
      ['worker', data],
      ['store thread', new Blob([data]).stream()],
    ] as const) {
      const { store: s } = await newStore({ chunking: { avg: 4096 } });
      const r = await s.put(input);
      // The block's second and third times are shared: no more stored than without them.
      expect(r.newBytesStored, how).toBeLessThan(alone.newBytesStored * 1.02);
      expectSameBytes(await s.getBytes(r.digest), data);
    }
  });
});
