import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { batchEnded, concatBytes, expectSameBytes, newStore, randomBytes, reopen, tempDir, textBytes } from './helpers/store.js';

describe('delete, exclusiveSize and gc', () => {
  it('frees the chunks only the deleted document used, and reports the bytes', async () => {
    const { store } = await newStore();
    const shared = randomBytes(1, 500_000);
    const a = concatBytes([shared, randomBytes(2, 300_000)]);
    const b = concatBytes([shared, randomBytes(3, 300_000)]);
    const ra = await store.put(a);
    const rb = await store.put(b);
    const exclusive = await store.exclusiveSize(ra.digest);
    expect(exclusive).toBeGreaterThan(250_000);
    expect(exclusive).toBeLessThan(400_000);
    expect(await store.delete(ra.digest)).toBe(true);
    expect(await store.delete(ra.digest)).toBe(false);
    expect(await store.has(ra.digest)).toBe(false);
    const before = await store.stats();
    const report = await store.gc();
    expect(report.chunksRemoved).toBeGreaterThan(0);
    const after = await store.stats();
    expect(after.storedBytes).toBe(before.storedBytes); // stats count live chunks only
    expect(after.chunks).toBe(before.chunks);
    expectSameBytes(await store.getBytes(rb.digest), b);
    expect((await store.verify()).ok).toBe(true);
  });

  it("frees what a snapshot stopped before its commit left: documents nothing holds (gc freed nothing, for good: a trial)", async () => {
    const { store } = await newStore();
    // A snapshot's files are put unlisted, and held once the snapshot commits: stopped before,
    // they are held by nothing.
    const left = randomBytes(71, 300_000);
    const { digest } = await store.put(left, {}, { listed: false });
    const kept = await store.put(textBytes(72, 5_000), { path: 'kept.txt' });
    expect((await store.document(digest, { unlisted: true })).size).toBe(300_000);
    const report = await store.gc();
    expect(report).toMatchObject({ documentsRemoved: 1 });
    expect(report.chunksRemoved).toBeGreaterThan(0);
    await expect(store.document(digest, { unlisted: true })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await store.getBytes(kept.digest)).length).toBe(5_000);
    expect((await store.verify()).ok).toBe(true);
    // A snapshot's files stay once it has committed; a second GC removes nothing more.
    const src = join(tempDir(), 'src');
    mkdirSync(src);
    writeFileSync(join(src, 'a.bin'), left);
    await store.snapshot(src);
    expect((await store.gc()).documentsRemoved).toBe(0);
    expectSameBytes(await (await store.document(digest, { unlisted: true })).bytes(), left);
  });

  it('deletes empty packs and compacts mostly-garbage packs, freeing disk', async () => {
    const { store, dir } = await newStore();
    const keep = await store.put(randomBytes(10, 200_000));
    const drop: string[] = [];
    for (let i = 0; i < 5; i++) drop.push((await store.put(randomBytes(20 + i, 400_000))).digest);
    await store.close(); // seals the pack
    const s = await (await import('./helpers/store.js')).reopen(dir);
    for (const d of drop) await s.delete(d);
    const before = await s.stats();
    const report = await s.gc();
    expect(report.packsCompacted + report.packsDeleted).toBeGreaterThan(0);
    expect(report.bytesFreed).toBeGreaterThan(1_500_000);
    const after = await s.stats();
    expect(after.packBytes).toBeLessThan(before.packBytes - 1_500_000);
    expect(report.bytesFreed).toBe(before.packBytes - after.packBytes); // nothing counted twice
    expectSameBytes(await s.getBytes(keep.digest), randomBytes(10, 200_000));
    expect((await s.verify()).ok).toBe(true);
  });

  it("frees garbage in the writer's own open pack, as a long-lived writer (a tab, a server) needs", async () => {
    const { store } = await newStore();
    const keep = await store.put(randomBytes(10, 200_000), { path: 'keep.bin' });
    await store.put(randomBytes(11, 3_000_000), { path: 'big.bin' });
    await store.deletePath('big.bin');
    const before = await store.stats();
    const report = await store.gc(); // (the pack is still open: it freed 0 B until a reopen)
    expect(report.packsCompacted).toBe(1); // (and its file deleted)
    expect(report.bytesFreed).toBeGreaterThan(2_900_000);
    // What the disk got back, exactly: the index the seal wrote, then deleted, is not counted
    // as freed (it was, 57 KB over a 21 MB pack: a trial).
    expect(report.bytesFreed).toBe(before.packBytes - (await store.stats()).packBytes);
    expectSameBytes(await store.getBytes(keep.digest), randomBytes(10, 200_000));
    const next = await store.put(randomBytes(12, 2_000_000), { path: 'next.bin' }); // (into a new open pack)
    expectSameBytes(await store.getBytes(next.digest), randomBytes(12, 2_000_000));
    // A mostly live open pack (over the 1 MiB GC looks at) stays open: nothing moved or freed.
    const packs = (await store.stats()).packs;
    expect((await store.gc())).toMatchObject({ bytesFreed: 0, packsCompacted: 0 });
    expect((await store.stats()).packs).toBe(packs);
    expect((await store.verify()).ok).toBe(true);
  });

  it('counts the bytes failed puts left in the open pack, and GC frees them', async () => {
    const { store } = await newStore();
    const keep = await store.put(textBytes(13, 50_000), { path: 'keep.txt' });
    async function* failing(seed: number) {
      for (let i = 0; i < 5; i++) yield randomBytes(seed * 10 + i, 1_000_000);
      throw new Error('the source failed');
    }
    for (const seed of [1, 2]) await expect(store.put(failing(seed), { path: `x${seed}` })).rejects.toThrow('the source failed');
    await expect(store.put(randomBytes(30, 4_000_000), { expectDigest: `sha256:${'0'.repeat(64)}` })).rejects.toMatchObject({ code: 'DIGEST_MISMATCH' });
    const before = await store.stats();
    expect(before.packBytes).toBeGreaterThan(10_000_000); // (it said 69: the open pack's size at its opening)
    const report = await store.gc();
    expect(report.bytesFreed).toBeGreaterThan(10_000_000);
    expect((await store.stats()).packBytes).toBeLessThan(100_000);
    expect(report.bytesFreed).toBe(before.packBytes - (await store.stats()).packBytes);
    expectSameBytes(await store.getBytes(keep.digest), textBytes(13, 50_000));
    expect((await store.verify()).ok).toBe(true);
  });

  it('settles on a pack of tiny chunks: a second GC finds nothing to do (it recopied the pack every run)', async () => {
    const { store, dir } = await newStore();
    for (let i = 1; i <= 9; i++) await store.put(new TextEncoder().encode(`${i}\n`), { path: `t/${i}` });
    await store.close(); // (seals the pack)
    for (let run = 0; run < 3; run++) {
      const s = await reopen(dir);
      const report = await s.gc();
      expect([run, report.packsCompacted, report.packsDeleted, report.bytesFreed]).toEqual([run, 0, 0, 0]);
      await s.close();
    }
  });

  it('gc racing concurrent puts loses nothing', async () => {
    const { store } = await newStore({ chunking: { avg: 4096 } });
    // Documents to delete share chunks with documents being put during GC.
    const bases = Array.from({ length: 6 }, (_, i) => randomBytes(500 + i, 150_000));
    const victims = await Promise.all(bases.map((b, i) => store.put(concatBytes([b, textBytes(i, 1000)]))));
    for (const v of victims) await store.delete(v.digest);
    const expected = new Map<string, Uint8Array>();
    const puts: Promise<void>[] = [];
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < bases.length; i++) {
        const data = concatBytes([bases[i]!, randomBytes(1000 * round + i, 20_000)]);
        puts.push(store.put(data).then((r) => void expected.set(r.digest, data)));
      }
      puts.push(store.gc().then(() => undefined));
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(puts);
    await store.gc();
    for (const [digest, data] of expected) expectSameBytes(await store.getBytes(digest), data, digest);
    const v = await store.verify();
    expect(v.damagedChunks).toEqual([]);
    expect(v.ok).toBe(true);
    expect(v.documentsChecked).toBe(expected.size);
  });
});

/** An input that pauses before part `at` until released, so a test can act mid-put. */
function gated(parts: Uint8Array[], at: number) {
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const atGate = new Promise<void>((r) => (reached = r));
  async function* source() {
    for (let i = 0; i < parts.length; i++) {
      if (i === at) {
        reached();
        await gate;
      }
      yield parts[i]!;
    }
  }
  return { source: source(), atGate, release };
}

describe('gc during a put in progress (deterministic interleavings)', () => {
  it('a chunk a put has decided to share is not collected, though its refs are 0', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 4096 } });
    const shared = randomBytes(1, 200_000);
    const old = await store.put(shared);
    await store.delete(old.digest); // every chunk of `shared` now has refs = 0
    const tail = randomBytes(2, 50_000);
    const g = gated([shared, tail], 1);
    const put = store.put(g.source);
    await g.atGate; // the put has placed `shared`'s chunks (as shared) and waits
    const report = await store.gc();
    // Only the old document's last chunk may go: it ended at that document's end, and the
    // put, whose boundary there is not final yet, has not claimed it.
    expect(report.chunksRemoved).toBeLessThanOrEqual(1);
    g.release();
    const r = await put;
    expectSameBytes(await store.getBytes(r.digest), concatBytes([shared, tail]));
    expect((await store.verify()).ok).toBe(true);
    void dir;
  });

  it('a sealed pack holding records of a put in progress is not deleted or compacted', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 4096 } });
    await store.close();
    const { reopen } = await import('./helpers/store.js');
    const s = await reopen(dir, { packSize: 300_000 });
    const mine = randomBytes(3, 100_000);
    const g = gated([mine, randomBytes(4, 10_000)], 1);
    const put = s.put(g.source);
    await g.atGate; // `mine` is written (uncommitted) into the open pack
    // Another put fills and seals that pack, then its document goes away: the pack's only
    // rows are garbage, and `mine` has no rows yet.
    const filler = await s.put(randomBytes(5, 400_000));
    await s.delete(filler.digest);
    await s.gc();
    g.release();
    const r = await put;
    expectSameBytes(await s.getBytes(r.digest), concatBytes([mine, randomBytes(4, 10_000)]));
    expect((await s.verify()).ok).toBe(true);
  });
});

describe('gc beside another live writer', () => {
  it('names the damaged chunks a compaction could not copy, and does not call their pack compacted (it did, at every run)', async () => {
    const { store, dir } = await newStore({ compression: false });
    const keep = randomBytes(31, 100_000);
    const kept = await store.put(keep, { path: 'keep.bin' });
    const big = await store.put(randomBytes(32, 3_000_000), { path: 'big.bin' });
    await store.close();
    const { readdirSync, readFileSync, writeFileSync } = await import('node:fs');
    const packFile = readdirSync(join(dir, 'packs'), { recursive: true, withFileTypes: true }).find((f) => f.isFile() && readFileSync(join(f.parentPath, f.name)).includes(keep.subarray(0, 64)))!;
    const bytes = readFileSync(join(packFile.parentPath, packFile.name));
    bytes[bytes.indexOf(keep.subarray(0, 64)) + 10]! ^= 0x01;
    writeFileSync(join(packFile.parentPath, packFile.name), bytes);
    const s = await reopen(dir);
    try {
      await s.delete(big.digest);
      const first = await s.gc();
      expect(first.chunksDamaged.length).toBeGreaterThan(0);
      expect(first.packsCompacted).toBe(0);
      const again = await s.gc();
      expect(again).toMatchObject({ packsCompacted: 0, chunksDamaged: first.chunksDamaged });
      // The document reads as damaged, never as good.
      await expect(s.getBytes(kept.digest)).rejects.toMatchObject({ code: 'CORRUPT_DATA' });
    } finally {
      await s.close();
    }
  });

  it('says what waits for the margin while another writer is open, and why, instead of freeing 0 B without a word', async () => {
    const { store: init, dir } = await newStore();
    await init.close();
    const a = await reopen(dir, { gcMarginMs: 60_000 });
    const b = await reopen(dir); // another writer alive: a's GC keeps unused chunks for the margin
    try {
      const r = await a.put(randomBytes(7, 300_000));
      await a.delete(r.digest);
      const before = Date.now();
      const report = await a.gc();
      expect(report).toMatchObject({ chunksRemoved: 0, margin: 'writers' });
      expect(report.chunksWaiting).toBe(r.chunks);
      expect(report.chunkBytesWaiting).toBeGreaterThanOrEqual(300_000);
      expect(Date.parse(report.waitingUntil!)).toBeGreaterThanOrEqual(before + 60_000);
      await b.close();
      // Alone again: they go, and nothing waits.
      const alone = await a.gc();
      expect(alone).toMatchObject({ chunksRemoved: r.chunks, chunksWaiting: 0, chunkBytesWaiting: 0 });
      expect(alone.margin).toBeUndefined();
      expect(alone.waitingUntil).toBeUndefined();
    } finally {
      await a.close();
      await b.close().catch(() => undefined);
    }
  });

  it("leaves another writer's pack alone for the margin after its seal (its late commits may name it)", async () => {
    const { store: init, dir } = await newStore();
    await init.close();
    const a = await reopen(dir, { packSize: 64 * 1024, gcMarginMs: 0 });
    const b = await reopen(dir, { gcMarginMs: 60_000 });
    const packRows = () => {
      const db = new Database(join(dir, 'kura.db'), { readonly: true });
      try {
        return db.prepare('SELECT name, sealed FROM packs ORDER BY id').all() as { name: string; sealed: number }[];
      } finally {
        db.close();
      }
    };
    // a's open pack loses its only document's chunks (a's own GC, margin 0: marked, then gone).
    const z = await a.put(randomBytes(40, 40_000));
    await batchEnded();
    const first = packRows().at(-1)!;
    await a.delete(z.digest);
    await a.gc();
    await new Promise((r) => setTimeout(r, 5));
    await a.gc();
    // Now a fills that pack: sealed just now, holding a little of the next document (which
    // makes it one to compact rather than drop: neither may happen).
    await a.put(randomBytes(41, 40_000));
    await batchEnded();
    const sealed = packRows().find((p) => p.name === first.name);
    expect(sealed?.sealed).toBeGreaterThan(1); // sealed, and when
    const report = await b.gc();
    expect(report.packsDeleted + report.packsCompacted).toBe(0);
    expect(packRows().map((p) => p.name)).toContain(first.name);
    expect(existsSync(join(dir, 'packs', first.name.slice(0, 2), `${first.name}.pack`))).toBe(true);
    // Its own writer's GC takes it (nothing of a's is in flight).
    const own = await a.gc();
    expect(own.packsDeleted + own.packsCompacted).toBeGreaterThan(0);
    expect(packRows().map((p) => p.name)).not.toContain(first.name);
  });
});
