import { closeSync, openSync, readSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collect, expectSameBytes, newStore, randomBytes, recordsEnd, reopen, textBytes } from './helpers/store.js';

function packFiles(dir: string): string[] {
  const root = join(dir, 'packs');
  return readdirSync(root).flatMap((sub) => readdirSync(join(root, sub)).map((f) => join(root, sub, f)));
}

function flipByte(file: string, at: number): void {
  const fd = openSync(file, 'r+');
  const b = Buffer.alloc(1);
  readSync(fd, b, 0, 1, at);
  b[0]! ^= 0x40;
  writeSync(fd, b, 0, 1, at);
  closeSync(fd);
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
});
