import { closeSync, openSync, readFileSync, readSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import type { PutResult } from '../src/put.js';
import { collect, expectSameBytes, flipByte, newStore, randomBytes, recordsEnd, reopen, tempDir, textBytes } from './helpers/store.js';

function packFiles(dir: string): string[] {
  const root = join(dir, 'packs');
  return readdirSync(root).flatMap((sub) => readdirSync(join(root, sub)).map((f) => join(root, sub, f)));
}


describe('verify and damaged data', () => {
  it('a clean store verifies clean, counting every chunk and document', async () => {
    const { store } = await newStore();
    await store.put(textBytes(1, 300_000));
    await store.put(randomBytes(2, 300_000));
    const r = await store.verify();
    expect(r).toMatchObject({ ok: true, documentsChecked: 2, damagedChunks: [], damagedDocuments: [] });
    expect(r.chunksChecked).toBe((await store.stats()).chunks);
  });

  it('a byte flipped in a pack is reported with the document it breaks; get throws CORRUPT_DATA', async () => {
    const { store, dir } = await newStore();
    const good = textBytes(3, 200_000);
    const badDoc = randomBytes(4, 200_000);
    const g = await store.put(good);
    await store.close();
    const packs = packFiles(dir);
    expect(packs).toHaveLength(1);
    const size = statSync(packs[0]!).size;
    // Put the victim second, so it occupies the end of the pack, then damage its last bytes.
    const s = await reopen(dir);
    const b = await s.put(badDoc);
    await s.close();
    const victimPack = packFiles(dir).find((f) => f !== packs[0])!;
    flipByte(victimPack, recordsEnd(victimPack) - 10);
    const s2 = await reopen(dir);
    const report = await s2.verify();
    expect(report.ok).toBe(false);
    expect(report.damagedChunks).toHaveLength(1);
    expect(report.damagedChunks[0]!.documents).toEqual([b.digest]);
    expect(report.damagedDocuments.map((d) => d.digest)).toEqual([b.digest]);
    // getBytes hashes once (the whole document); on a mismatch it re-reads to name the chunk.
    await expect(s2.getBytes(b.digest)).rejects.toMatchObject({
      code: 'CORRUPT_DATA',
      digest: b.digest,
      reason: 'key-mismatch',
      key: report.damagedChunks[0]!.key,
    });
    await expect(collect(s2.get(b.digest))).rejects.toMatchObject({ code: 'CORRUPT_DATA' });
    await expect(s2.getRange(b.digest, 199_990, 200_000)).rejects.toMatchObject({ code: 'CORRUPT_DATA' });
    expectSameBytes(await s2.getBytes(g.digest), good); // undamaged documents stay readable
    expect(size).toBeGreaterThan(0);
  });

  it('damage anywhere in a record is detected: header, key, lengths, payload', async () => {
    const { store, dir } = await newStore({ compression: 3 });
    const data = textBytes(5, 50_000); // a few compressible chunks
    const { digest } = await store.put(data);
    await store.close();
    const pack = packFiles(dir)[0]!;
    const size = recordsEnd(pack);
    for (const at of [16, 20, 24, 28, 40, 60, size - 1]) {
      flipByte(pack, at);
      const s = await reopen(dir);
      const r = await s.verify();
      expect(r.ok, `flip at ${at}`).toBe(false);
      await expect(s.getBytes(digest)).rejects.toMatchObject({ code: 'CORRUPT_DATA' });
      await s.close();
      flipByte(pack, at); // undo
    }
    const s = await reopen(dir);
    expect((await s.verify()).ok).toBe(true);
  });

  it('a missing or truncated pack file is reported, never read as good', async () => {
    const { store, dir } = await newStore();
    const { digest } = await store.put(randomBytes(6, 100_000));
    await store.close();
    const pack = packFiles(dir)[0]!;
    const fd = openSync(pack, 'r+');
    const { ftruncateSync } = await import('node:fs');
    ftruncateSync(fd, recordsEnd(pack) - 100);
    closeSync(fd);
    let s = await reopen(dir);
    const cut = await s.verify();
    expect(cut.damagedDocuments.map((d) => d.digest)).toEqual([digest]);
    expect(cut.damagedPacks).toEqual([expect.objectContaining({ reason: 'pack-size' })]);
    await s.close();
    rmSync(pack);
    s = await reopen(dir);
    const r = await s.verify();
    expect(r.damagedChunks.every((c) => c.reason === 'missing-pack')).toBe(true);
    await expect(s.getBytes(digest)).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'missing-pack' });
  });
});

describe('the log', () => {
  it('a clean log verifies clean, every commit counted', async () => {
    const { store } = await newStore();
    for (let i = 0; i < 5; i++) await store.put(textBytes(10 + i, 2_000), { path: `l/${i}` });
    await store.setMeta('l/0', { k: 'v' });
    const r = await store.verify();
    expect(r).toMatchObject({ ok: true, damagedLog: [] });
    expect(r.logCommitsChecked).toBeGreaterThanOrEqual(6);
  });

  it('a byte flipped inside a commit in the middle of the log is damage (the chain breaks); so is a database whose head the log lacks', async () => {
    const { store, dir } = await newStore();
    for (let i = 0; i < 6; i++) await store.put(textBytes(20 + i, 2_000), { path: `l/${i}` });
    await store.close();
    const segments = readdirSync(join(dir, 'log')).sort();
    const segment = join(dir, 'log', segments[0]!);
    // A byte of the first commit's body: its hash no longer matches, and every later commit's
    // prev names a commit the log no longer holds intact.
    flipByte(segment, 60);
    const damaged = await reopen(dir);
    const r = await damaged.verify();
    expect(r.ok).toBe(false);
    expect(r.damagedLog).toEqual([expect.objectContaining({ reason: 'log' })]);
  });
});

describe('pack indexes', () => {
  it('a damaged or lying index is reported as the pack\'s damage; the chunks still read', async () => {
    const { store, dir } = await newStore();
    const { digest } = await store.put(randomBytes(7, 100_000));
    await store.close();
    const pack = packFiles(dir)[0]!;
    const end = recordsEnd(pack);
    expect(end).toBeLessThan(statSync(pack).size); // the writer sealed it with an index
    flipByte(pack, end + 12 + 20); // the first entry's key: the hash no longer matches
    let s = await reopen(dir);
    let r = await s.verify();
    expect(r).toMatchObject({ ok: false, packsChecked: 1, damagedChunks: [], damagedDocuments: [] });
    expect(r.damagedPacks).toEqual([expect.objectContaining({ reason: 'pack-index' })]);
    expect((await s.getBytes(digest)).length).toBe(100_000);
    await s.close();
    flipByte(pack, end + 12 + 20);
    s = await reopen(dir);
    r = await s.verify();
    expect(r).toMatchObject({ ok: true, packsChecked: 1, damagedPacks: [] });
    await s.close();
    // A pack whose magic was changed (XURAPACK) was ok (a trial).
    flipByte(pack, 0);
    s = await reopen(dir);
    r = await s.verify();
    expect(r.damagedPacks).toEqual([expect.objectContaining({ reason: 'pack-header' })]);
    expect(r.ok).toBe(false);
  });
});

/** Writes `bytes` at `at` of `file`, answering what was there. */
function patch(file: string, at: number, bytes: Buffer): Buffer {
  const fd = openSync(file, 'r+');
  const was = Buffer.alloc(bytes.length);
  readSync(fd, was, 0, bytes.length, at);
  writeSync(fd, bytes, 0, bytes.length, at);
  closeSync(fd);
  return was;
}

/**
 * Each change of `changes` (where, what bytes) made to `pack` alone: verify says the pack is
 * damaged, with the reason given, naming it; undone, verify is clean again.
 */
async function eachDamage(pack: string, changes: [number, Buffer, string][], open: () => Promise<Store>): Promise<void> {
  const name = basename(pack, '.pack');
  for (const [at, bytes, reason] of changes) {
    const was = patch(pack, at, bytes);
    const s = await open();
    const r = await s.verify();
    await s.close();
    patch(pack, at, was);
    expect(r.ok, `${bytes.toString('hex')} at ${at}`).toBe(false);
    expect(r.damagedPacks, `${bytes.toString('hex')} at ${at}`).toEqual([expect.objectContaining({ pack: name, reason, message: expect.stringContaining(`pack ${name}: `) })]);
    expect(r.damagedPacks[0]!.message).not.toContain(`pack ${name}: pack ${name}`);
  }
  const s = await open();
  expect(await s.verify()).toMatchObject({ ok: true, damagedPacks: [] });
  await s.close();
}

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};

describe("pack headers and trailers (a trial: version 7, flags 7 and a zeroed KEND verified 'ok')", () => {
  it('a plain pack: a version or flags its store does not write, or its index with its KEND changed, is the pack\'s damage', async () => {
    // 600 KB of text: group records (a version 1 pack, before them, holds none).
    const { store, dir } = await newStore({ chunking: { avg: 4096 } });
    const { digest } = await store.put(textBytes(11, 600_000));
    await store.close();
    const pack = packFiles(dir)[0]!;
    const end = statSync(pack).size - 4;
    await eachDamage(
      pack,
      [
        [8, u32(7), 'pack-header'],
        [8, u32(2), 'pack-header'], // (an encrypted store's)
        [8, u32(1), 'pack-header'], // its rows and index name group records
        [12, u32(7), 'pack-header'],
        [12, u32(1), 'pack-header'], // (sealed: an encrypted store's)
        [end, Buffer.alloc(4), 'pack-index'],
        [end, Buffer.from('KSND'), 'pack-index'],
      ],
      () => reopen(dir),
    );
    const s = await reopen(dir);
    expect((await s.getBytes(digest)).length).toBe(600_000);
  });

  it('a plain pack with no index (sealed for a writer that died) is still fine', async () => {
    const { store, dir } = await newStore();
    await store.put(randomBytes(12, 50_000));
    await store.close();
    const pack = packFiles(dir)[0]!;
    const end = recordsEnd(pack);
    const { truncateSync } = await import('node:fs');
    truncateSync(pack, end); // the index gone: what a writer that died leaves
    const db = new Database(join(dir, 'kura.db'));
    db.prepare('UPDATE packs SET size = ?').run(end);
    db.close();
    const s = await reopen(dir);
    // (The row's size changed by hand differs from the log's: the database's damage, not the pack's.)
    expect(await s.verify()).toMatchObject({ packsChecked: 1, damagedPacks: [], damagedChunks: [], damagedDocuments: [] });
  });

  it('an encrypted pack: its header checked against the only values its store writes, its KSND as every sealed pack\'s end', async () => {
    const root = join(tempDir(), 'enc');
    const cacheDir = join(tempDir('kura-enc-cache-'), 'cache');
    const options = { password: 'pack headers', cacheDir };
    const store = await Store.init(root, { ...options, encryption: { kdf: { memoryKib: 64, passes: 1, lanes: 1 } }, chunking: { avg: 4096 } });
    // Compressed, well over 256 KiB: a pack object of its own (not carried in its commit's), of group records.
    const { digest } = await store.put(textBytes(13, 3_000_000));
    await store.close();
    const packs = packFiles(root);
    expect(packs).toHaveLength(1);
    const pack = packs[0]!;
    expect(readFileSync(pack).subarray(0, 16)).toEqual(Buffer.concat([Buffer.from('KURAPACK'), u32(3), u32(1)]));
    const end = statSync(pack).size - 4;
    await eachDamage(
      pack,
      [
        [8, u32(7), 'pack-header'],
        [8, u32(1), 'pack-header'], // (a plain store's)
        [8, u32(2), 'pack-header'], // an encrypted store's before group records: its rows name group records
        [12, u32(7), 'pack-header'],
        [12, u32(0), 'pack-header'], // (not sealed: a plain store's)
        [end, Buffer.alloc(4), 'pack-index'],
        [end, Buffer.from('KEND'), 'pack-index'],
      ],
      () => Store.open(root, options),
    );
    const s = await Store.open(root, options);
    expect((await s.getBytes(digest)).length).toBe(3_000_000);
    await s.close();
  });
});

describe('repair by putting the original again', () => {
  it('after verify finds a damaged chunk, re-putting the bytes writes a fresh copy and heals the document', async () => {
    const { store, dir } = await newStore();
    const data = randomBytes(9, 300_000);
    const { digest } = await store.put(data);
    await store.close();
    const pack = packFiles(dir)[0]!;
    flipByte(pack, recordsEnd(pack) - 5);
    const s = await reopen(dir);
    expect((await s.verify()).damagedChunks).toHaveLength(1);
    const again = await s.put(data);
    expect(again.newChunks).toBe(1); // only the damaged chunk is written again
    expectSameBytes(await s.getBytes(digest), data);
    expect((await s.verify()).ok).toBe(true);
  });

  it('a mended chunk of text is stored compressed, as any new chunk (it was written raw: a trial)', async () => {
    const { store, dir } = await newStore();
    // Text as people write it (words drawn at random: it compresses ~3x, not 100x).
    const words = ['harbour', 'master', 'ship', 'arrived', 'dawn', 'cargo', 'tide', 'crane', 'berth', 'pilot', 'north', 'quay'];
    const rnd = randomBytes(3, 200_000);
    const text = Array.from({ length: 20_000 }, (_, i) => `${words[rnd[i * 3]! % 12]} ${words[rnd[i * 3 + 1]! % 12]} ${rnd[i * 3 + 2]} ${words[(rnd[i * 3]! >> 4) % 12]}\n`).join('');
    const data = new TextEncoder().encode(text);
    const { digest } = await store.put(data, { path: 'log.txt' });
    await store.close();
    const pack = packFiles(dir)[0]!;
    flipByte(pack, Math.floor(recordsEnd(pack) / 2));
    const s = await reopen(dir);
    const damaged = (await s.verify()).damagedChunks;
    expect(damaged.length).toBeGreaterThan(0);
    // Added again as `kura add` adds a file: read by an ingest worker, which sends the chunks
    // the store holds raw (it compresses only what a store lacks).
    const file = join(dir, 'log.txt');
    writeFileSync(file, data);
    let again: PutResult | undefined;
    for await (const o of s.putFiles([{ path: file, meta: { path: 'log.txt' } }], { workers: 1 })) again = o.result;
    expect(again!.newChunks).toBe(damaged.length);
    let raw = 0;
    for (const d of damaged) raw += (await s.chunk(d.key)).length;
    expect(again!.newBytesStored).toBeLessThan(raw / 2); // (raw: their lengths and headers)
    expectSameBytes(await s.getBytes(digest), data);
    expect((await s.verify()).ok).toBe(true);
  });
});
