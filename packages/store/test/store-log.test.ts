/**
 * The commit log (FORMAT.md §15): frames that are torn or damaged are never read as commits;
 * the database is a replay of the log (deleting kura.db, or `Store.rebuild`, gives the same
 * catalog row for row, ids and counts included, and the same search results); a commit the
 * log holds and the database lacks (a crash between the append and COMMIT) is applied at the
 * next open; a torn tail is cut off.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { decodeFrame, encodeFrame, readFrames, FRAME_OVERHEAD } from '../src/catalog/frame.js';
import { commitsAfter, decodeCommit, emptyHead, encodeBody } from '../src/catalog/commits.js';
import type { Op } from '../src/catalog/ops.js';
import { packHeader } from '../src/bytes/pack-record.js';
import { FsLogStore } from '../src/node/fs-log.js';
import { Store } from '../src/node/index.js';
import { canonicalDump } from './helpers/dump.js';
import { batchEnded, newStore, reopen, tempDir, track } from './helpers/store.js';
import { rng } from './helpers/random.js';

const textBytes = (s: string) => new TextEncoder().encode(s);

const WORDS = ['otter', 'heron', 'maple', 'granite', 'lantern', 'quartz', 'meadow', 'falcon', 'harbor', 'willow'];

/** A document of words (searchable) and random bytes (so chunks differ), from the generator. */
function docOf(r: () => number, size: number): Uint8Array {
  const words = Array.from({ length: 40 }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
  const tail = new Uint8Array(size);
  for (let i = 0; i < size; i++) tail[i] = Math.floor(r() * 256);
  return new Uint8Array([...textBytes(words + '\n'), ...tail]);
}

/**
 * Every kind of change the catalog knows, seeded: puts (same and different bytes, same and
 * different paths, pathless), tags and metadata (single and batched), deletes of versions,
 * paths and documents, snapshots of a real directory and their removal, chunk uploads and
 * commits, and GC with compaction (small packs).
 */
async function workload(store: Store, scratch: string, seed: number): Promise<void> {
  const r = rng(seed);
  const paths = Array.from({ length: 12 }, (_, i) => `dir${i % 3}/file${i}.txt`);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const docs: Uint8Array[] = Array.from({ length: 8 }, () => docOf(r, 500 + Math.floor(r() * 6000)));
  const digests: string[] = [];
  for (let step = 0; step < 140; step++) {
    const x = r();
    try {
      if (x < 0.35) {
        const res = await store.put(pick(docs), r() < 0.85 ? { path: pick(paths), tags: r() < 0.3 ? [pick(WORDS)] : [] } : {});
        digests.push(res.digest);
      } else if (x < 0.45) {
        await store.addTags(pick(paths), [pick(WORDS)]);
      } else if (x < 0.52) {
        await store.setMeta(pick(paths), { [pick(WORDS)]: r() < 0.8 ? pick(WORDS) : null });
      } else if (x < 0.55) {
        // 20 updates: the set-based batch path (meta-batch.ts).
        await store.updateMeta(paths.map((p) => ({ path: p, addTags: [pick(WORDS)], meta: { batch: String(step) } })));
      } else if (x < 0.6) {
        const p = pick(paths);
        const versions = await store.versions(p).catch(() => []);
        if (versions.length) await store.deleteVersion(p, pick(versions).version);
      } else if (x < 0.63) {
        await store.deletePath(pick(paths));
      } else if (x < 0.66 && digests.length) {
        await store.delete(pick(digests));
      } else if (x < 0.72) {
        // A real directory: some files shared with the store, some new.
        const d = join(scratch, `snap${step}`);
        mkdirSync(join(d, 'sub'), { recursive: true });
        writeFileSync(join(d, 'a.txt'), pick(docs));
        writeFileSync(join(d, 'sub', 'b.txt'), docOf(r, 300));
        await store.snapshot(d, { label: `step ${step}`, mtime: false });
      } else if (x < 0.75) {
        const snaps = await store.snapshots();
        if (snaps.length) await store.deleteSnapshot(pick(snaps).id);
      } else if (x < 0.78) {
        const bytes = docOf(r, 2000);
        const keys: string[] = [];
        const put = await store.putChunk(bytes.subarray(0, 1000));
        keys.push(put.key);
        keys.push((await store.putChunk(bytes.subarray(1000))).key);
        await store.commitChunks(keys, { path: `uploaded/${step}` });
      } else if (x < 0.8) {
        await store.gc();
      } else {
        await store.put(docOf(r, 3000), { path: pick(paths), mediaType: 'text/plain', meta: { step: String(step) } });
      }
    } catch (e) {
      // A delete of what is gone, a version just removed: NOT_FOUND is an answer, not a failure.
      if ((e as { code?: string }).code !== 'NOT_FOUND') throw e;
    }
  }
  await store.gc();
}

async function searches(store: Store): Promise<string[]> {
  const out: string[] = [];
  for (const q of WORDS.slice(0, 5)) for (const h of await store.search(q, { limit: 50 })) out.push(`${q} ${h.path} ${h.digest} ${h.snippet}`);
  return out;
}

/**
 * The next frame of the store's log, as a writer would append it: chained on the newest commit,
 * by `writer`, carrying `ops`. Also where the newest segment is and the head's seq.
 */
async function nextFrame(dir: string, writer: string, ops: Op[]): Promise<{ bytes: Uint8Array; segment: string; seq: number }> {
  const { commits, last } = await commitsAfter(new FsLogStore(dir), emptyHead());
  const head = commits[commits.length - 1]!.frame;
  return { bytes: encodeFrame(head.seq + 1, head.hash, encodeBody(writer, Date.now(), ops)).bytes, segment: join(dir, 'log', last!.segment), seq: head.seq };
}

function removeDatabase(dir: string): void {
  for (const f of ['kura.db', 'kura.db-wal', 'kura.db-shm']) rmSync(join(dir, f), { force: true });
}

describe('commit frames', () => {
  const body = encodeBody('0123456789abcdef', 1700000000000, [{ op: 'delete-path', path: 'a/b.txt' }]);
  const { bytes, hash } = encodeFrame(7, new Uint8Array(32).fill(9), body);

  it('read back whole: seq, prev, body and hash', () => {
    const f = decodeFrame(bytes, 0)!;
    expect(f.seq).toBe(7);
    expect([...f.prev]).toEqual(new Array(32).fill(9));
    expect(new TextDecoder().decode(f.body)).toBe(body);
    expect(Buffer.from(f.hash).equals(Buffer.from(hash))).toBe(true);
    expect(f.length).toBe(FRAME_OVERHEAD + body.length); // (ASCII: a byte per character)
    // The hash is SHA-256 of the bytes before it (an independent hasher).
    const { createHash } = require('node:crypto') as typeof import('node:crypto');
    expect(createHash('sha256').update(bytes.subarray(0, bytes.length - 32)).digest('hex')).toBe(Buffer.from(hash).toString('hex'));
  });

  it('the header is little-endian: a seq past 2^32 and a body past 64 KiB, read by an independent DataView', () => {
    const seq = 2 ** 40 + 2 ** 32 + 0x01020304; // each of the u64's bytes distinct
    const big = encodeBody('0123456789abcdef', 1, [{ op: 'delete-path', path: 'x'.repeat(70_000) }]);
    const framed = encodeFrame(seq, new Uint8Array(32), big).bytes;
    const view = new DataView(framed.buffer, framed.byteOffset);
    expect(String.fromCharCode(...framed.subarray(0, 4))).toBe('KLG1');
    expect(view.getUint32(4, true)).toBe(big.length);
    expect(view.getBigUint64(8, true)).toBe(BigInt(seq));
    expect(decodeFrame(framed, 0)!.seq).toBe(seq);
  });

  it('a frame cut at any byte is not a commit', () => {
    for (let n = 0; n < bytes.length; n++) expect(decodeFrame(bytes.subarray(0, n), 0), `cut at ${n}`).toBeUndefined();
  });

  it('a frame with any one bit flipped is not a commit', () => {
    for (let i = 0; i < bytes.length; i++) {
      for (const bit of [0, 3, 7]) {
        const bad = bytes.slice();
        bad[i]! ^= 1 << bit;
        expect(decodeFrame(bad, 0), `byte ${i} bit ${bit}`).toBeUndefined();
      }
    }
  });

  it('a body that is not ASCII is framed as its UTF-8 bytes', () => {
    const text = encodeBody('0123456789abcdef', 1, [{ op: 'delete-path', path: 'ünïcödé — 名前.txt' }]);
    const f = decodeFrame(encodeFrame(1, new Uint8Array(32), text).bytes, 0)!;
    expect(new TextDecoder().decode(f.body)).toBe(text);
    expect(f.body.length).toBe(new TextEncoder().encode(text).length);
  });

  it('a segment reads up to its first bad frame', () => {
    const a = encodeFrame(1, new Uint8Array(32), body);
    const b = encodeFrame(2, a.hash, body);
    const seg = new Uint8Array([...a.bytes, ...b.bytes, ...b.bytes.subarray(0, 30)]);
    const read = readFrames(seg);
    expect(read.frames.map((f) => f.seq)).toEqual([1, 2]);
    expect(read.end).toBe(a.bytes.length + b.bytes.length);
  });
});

describe('a commit that fails inside a batch of commits (decision 0049)', () => {
  it('rolls the batch back and applies its acknowledged commits again: none is lost, to this process, another connection or a rebuild', async () => {
    const { store, dir } = await newStore();
    await store.put(textBytes('first'), { path: 'a' });
    const b = await store.put(textBytes('second'), { path: 'b' });
    await batchEnded();
    // Awaited one after another, without a turn of the event loop between them (metadata
    // commits do not wait for one, as a put's group commit does): one batch.
    await store.setMeta('a', { k: '1' });
    await store.addTags('a', ['t']);
    await store.setMeta('b', { k: '0' });
    const logged = async () => (await commitsAfter(new FsLogStore(dir), emptyHead())).commits.map((c) => c.frame.seq);
    const seqs = await logged();
    await expect(store.setMeta('missing', { k: '2' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await logged()).toEqual(seqs); // the failed commit is not in the log
    // At once, to this process: what was acknowledged before the failure.
    expect(await store.stat('a')).toMatchObject({ meta: { k: '1' }, tags: ['t'] });
    expect(new TextDecoder().decode(await store.getBytes(b.digest))).toBe('second');
    expect(await store.stat('b')).toMatchObject({ digest: b.digest, meta: { k: '0' } });
    await store.setMeta('b', { k: '3' }); // and the log goes on from there
    await batchEnded();
    const other = await reopen(dir); // another connection
    expect(await other.stat('a')).toMatchObject({ meta: { k: '1' }, tags: ['t'] });
    expect((await other.stat('b')).meta).toEqual({ k: '3' });
    await other.close();
    await store.close();
    const dump = canonicalDump(join(dir, 'kura.db'));
    removeDatabase(dir);
    const rebuilt = await reopen(dir);
    expect((await rebuilt.verify()).damagedDocuments).toEqual([]);
    await rebuilt.close();
    expect(canonicalDump(join(dir, 'kura.db'))).toBe(dump);
  });
});

describe('the database is a replay of the log', () => {
  for (const seed of [1, 2, 3]) {
    it(`deleting kura.db loses nothing: same catalog row for row and same search results (seed ${seed})`, async () => {
      const { store: created, dir } = await newStore({ chunking: { avg: 1024 } });
      await created.close();
      const store = await reopen(dir, { packSize: 16 * 1024 }); // small packs: rotation and compaction
      await workload(store, tempDir('kura-scratch-'), seed);
      await store.close();
      // Scored by an index made at once, as the rebuilt catalog's is: FTS5 counts every row a
      // contentless index ever took in BM25's document count (a row indexed again counts
      // twice), so an index that followed the workload ranks otherwise (decision 0081).
      for (const f of ['search.db', 'search.db-wal', 'search.db-shm']) rmSync(join(dir, f), { force: true });
      const indexed = await reopen(dir);
      const before = await searches(indexed);
      expect(before.length).toBeGreaterThan(0);
      await indexed.close();
      const dump = canonicalDump(join(dir, 'kura.db'));
      expect(dump).toMatch(/# snapshots\nid=/); // the workload reached every table it means to
      expect(dump).toMatch(/# chunk_holds\nkey=/);
      expect(dump).toMatch(/# tags\nentry_id=/);
      expect(dump).toMatch(/# meta\nentry_id=/);
      expect(dump).toMatch(/version=3 /); // paths with several versions
      expect(dump).toMatch(/path=null/); // pathless entries
      expect(dump.split('\n').filter((l) => l.startsWith('id=') && l.includes('sealed=1')).length).toBeGreaterThan(2); // packs rotated

      removeDatabase(dir);
      const rebuilt = await reopen(dir);
      expect(await searches(rebuilt)).toEqual(before);
      const report = await rebuilt.verify();
      expect(report.damagedChunks.length + report.damagedDocuments.length).toBe(0);
      await rebuilt.close();
      expect(canonicalDump(join(dir, 'kura.db'))).toBe(dump);

      // `Store.rebuild` (kura rebuild) replaces a database it never reads: here, garbage.
      writeFileSync(join(dir, 'kura.db'), 'not a database');
      const r = await Store.rebuild(dir);
      expect(r.checkpoint).toBeUndefined();
      expect(r.seq).toBeGreaterThan(100);
      expect(canonicalDump(join(dir, 'kura.db'))).toBe(dump);
    }, 120_000);
  }

  it('a commit the log holds and the database lacks (a crash before COMMIT) is applied at the next open', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 1024 } });
    await store.put(textBytes('hello'), { path: 'notes/a.txt' });
    await store.close();
    const log = new FsLogStore(dir);
    const frame = await nextFrame(dir, 'feedfacefeedface', [{ op: 'meta', updates: [{ target: { path: 'notes/a.txt' }, change: { addTags: ['recovered'] } }] }]);
    appendFileSync(frame.segment, frame.bytes);

    const again = await reopen(dir);
    expect((await again.stat('notes/a.txt')).tags).toEqual(['recovered']);
    await again.addTags('notes/a.txt', ['after']); // the next commit chains on the recovered one
    await again.close();
    const after = await commitsAfter(log, emptyHead());
    expect(after.commits.map((c) => c.frame.seq)).toEqual(Array.from({ length: frame.seq + 2 }, (_, i) => i + 1));
    expect(decodeCommit(after.commits[after.commits.length - 1]!.frame).ops).toEqual([
      { op: 'meta', updates: [{ target: { path: 'notes/a.txt' }, change: { addTags: ['after'] } }] },
    ]);
  });

  it('a frame a dead writer left is applied by the next commit of a writer that was open all along', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 1024 } });
    await store.put(textBytes('hello'), { path: 'a.txt' });
    await batchEnded(); // the write lock is free for another process
    // Another process appended this under the write lock and died before its COMMIT.
    const frame = await nextFrame(dir, 'deaddeaddeaddead', [{ op: 'meta', updates: [{ target: { path: 'a.txt' }, change: { addTags: ['stranded'] } }] }]);
    appendFileSync(frame.segment, frame.bytes);
    await store.put(textBytes('world'), { path: 'b.txt' });
    expect((await store.stat('a.txt')).tags).toEqual(['stranded']);
    await store.close();
    const after = await commitsAfter(new FsLogStore(dir), emptyHead());
    expect(after.commits.map((c) => c.frame.seq)).toEqual(after.commits.map((_, i) => i + 1));
    expect(decodeCommit(after.commits[frame.seq]!.frame).writer).toBe('deaddeaddeaddead');
  });

  it('a pack file whose row only a dead writer\'s stranded commit holds is no orphan to GC', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 1024 } });
    await store.put(textBytes('hello'), { path: 'a.txt' });
    await batchEnded();
    // Another process committed a pack row to the log, created the file (and would have put
    // documents into it), and died before its COMMIT: this writer's database lacks the row.
    const name = 'ab'.repeat(16);
    const frame = await nextFrame(dir, 'deaddeaddeaddead', [{ op: 'pack', name, writer: 'deaddeaddeaddead' }]);
    appendFileSync(frame.segment, frame.bytes);
    const file = join(dir, 'packs', 'ab', `${name}.pack`);
    mkdirSync(join(dir, 'packs', 'ab'), { recursive: true });
    writeFileSync(file, packHeader());
    const report = await store.gc();
    expect(report.orphansDeleted).toBe(0);
    expect(existsSync(file)).toBe(true);
    // Applied before GC decided: the pack is known, and (its writer dead, nothing in it) goes
    // as an empty pack at the next GC, row first.
    expect((await store.gc()).packsDeleted).toBe(1);
    expect(existsSync(file)).toBe(false);
    expect((await store.verify()).ok).toBe(true);
  });

  it('a snapshot operation logged without an id (before schema 9) replays to the id its row derives, every time', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 1024 } });
    await store.put(textBytes('hello'), { path: 'a.txt' });
    await store.close();
    const frame = await nextFrame(dir, 'feedfacefeedface', [{ op: 'snapshot', root: { type: 'dir', name: '', mode: 0o755, entries: [] }, label: 'old' }]);
    appendFileSync(frame.segment, frame.bytes);
    const s = await reopen(dir);
    const [snap] = await s.snapshots();
    const db = new Database(join(dir, 'kura.db'), { readonly: true });
    const row = db.prepare('SELECT id, created_at, tree FROM snapshots').get() as { id: number; created_at: number; tree: Uint8Array };
    db.close();
    // The derivation FORMAT.md §13 states, computed here independently.
    const expected = createHash('sha256').update(`kura-snapshot ${row.id} ${row.created_at} ${Buffer.from(row.tree).toString('hex')}`).digest('hex').slice(0, 32);
    expect(snap).toMatchObject({ id: expected, label: 'old' });
    await s.close();
    removeDatabase(dir);
    await Store.rebuild(dir);
    const r = await reopen(dir);
    expect((await r.snapshots()).map((x) => x.id)).toEqual([expected]);
  });

  it('a checkpoint bounds the replay: a rebuild starts there and gives the same catalog', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 1024 } });
    await workload(store, tempDir('kura-scratch-'), 7);
    const { seq } = await store.checkpoint();
    expect(readdirSync(join(dir, 'checkpoints'))).toEqual([String(seq).padStart(20, '0')]);
    await store.put(textBytes('after the checkpoint'), { path: 'late.txt', tags: ['late'] });
    await store.deletePath('dir0/file0.txt');
    await store.close();
    const dump = canonicalDump(join(dir, 'kura.db'));
    writeFileSync(join(dir, 'kura.db'), 'damaged');
    const r = await Store.rebuild(dir);
    expect(r.checkpoint).toBe(seq);
    expect(r.commits).toBe(r.seq - seq);
    expect(r.commits).toBeLessThan(5);
    expect(canonicalDump(join(dir, 'kura.db'))).toBe(dump);
  });

  it('a damaged checkpoint is damage to verify, and a rebuild goes on without it (from the log), giving the same catalog', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 1024 } });
    await workload(store, tempDir('kura-scratch-'), 5);
    const { seq } = await store.checkpoint();
    await store.put(textBytes('after the checkpoint'), { path: 'late.txt' });
    await store.close();
    const file = join(dir, 'checkpoints', String(seq).padStart(20, '0'));
    const bytes = readFileSync(file);
    bytes[bytes.length >> 1]! ^= 0x01;
    writeFileSync(file, bytes);
    // It said ok, and the rebuild then failed on it with the whole log there (a trial).
    const s = await reopen(dir);
    const v = await s.verify();
    expect(v.ok).toBe(false);
    expect(v.damagedLog).toEqual([{ reason: 'checkpoint', seq, message: expect.stringMatching(/checkpoint .* is damaged.*older checkpoint, or the log/) }]);
    await s.close();
    const dump = canonicalDump(join(dir, 'kura.db'));
    writeFileSync(join(dir, 'kura.db'), 'damaged');
    const r = await Store.rebuild(dir);
    expect(r.checkpoint).toBeUndefined();
    expect(r.commits).toBe(r.seq);
    expect(canonicalDump(join(dir, 'kura.db'))).toBe(dump);
  });

  it('the log goes on in a new segment past 1 MiB, and a rebuild reads across segments', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 1024 } });
    await store.put(textBytes('x'), { path: 'x' });
    const big = 'v'.repeat(4000);
    for (let i = 0; i < 300; i++) await store.setMeta('x', { [`k${i}`]: big }); // ~1.2 MB of commits
    await store.close();
    const segments = readdirSync(join(dir, 'log')).filter((n) => /^\d{20}$/.test(n));
    expect(segments.length).toBeGreaterThanOrEqual(2);
    // Each segment is named for its first commit.
    for (const name of segments) {
      const { frames } = readFrames(new Uint8Array(readFileSync(join(dir, 'log', name))));
      if (frames.length) expect(frames[0]!.seq).toBe(Number(name));
    }
    const dump = canonicalDump(join(dir, 'kura.db'));
    removeDatabase(dir);
    const again = await reopen(dir);
    expect(Object.keys((await again.stat('x')).meta).length).toBe(300);
    await again.close();
    expect(canonicalDump(join(dir, 'kura.db'))).toBe(dump);
  });

  it('a frame torn at any length (a crash mid-append) is cut off and never applied', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 1024 } });
    await store.put(textBytes('hello'), { path: 'a.txt' });
    await store.close();
    const { bytes: frame, segment } = await nextFrame(dir, 'feedfacefeedface', [{ op: 'delete-path', path: 'a.txt' }]);
    const intact = readFileSync(segment);
    for (const n of [1, 4, 8, 47, 48, 60, frame.length - 33, frame.length - 1]) {
      writeFileSync(segment, Buffer.concat([intact, frame.subarray(0, n)]));
      const s = track(await Store.open(dir));
      expect((await s.stat('a.txt')).path, `torn at ${n}`).toBe('a.txt');
      expect(statSync(segment).size).toBe(intact.length);
      await s.close();
    }
  });

  it('opening without kura.db read-only is refused with a way out; the configuration object makes it a store', async () => {
    const { store, dir } = await newStore();
    await store.put(textBytes('x'), { path: 'x' });
    await store.close();
    removeDatabase(dir);
    await expect(Store.open(dir, { readonly: true })).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('kura rebuild') });
    expect(existsSync(join(dir, 'kura-store.json'))).toBe(true);
    await expect(Store.init(dir)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    const s = await reopen(dir);
    expect((await s.stat('x')).size).toBe(1);
  });

  it('a database ahead of its log (the log was lost) is refused as damage, not silently trusted', async () => {
    const { store, dir } = await newStore();
    await store.put(textBytes('x'), { path: 'x' });
    await store.close();
    for (const f of readdirSync(join(dir, 'log'))) rmSync(join(dir, 'log', f));
    await expect(Store.open(dir)).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'log-behind' });
    // ...and a rebuild from that log keeps the database that has more (verify's advice,
    // followed, replaced it with an empty one, and GC then took every pack for an orphan: a trial).
    await expect(Store.rebuild(dir)).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'log-behind', message: expect.stringMatching(/kura\.db was kept/) });
    const db = new Database(join(dir, 'kura.db'), { readonly: true });
    expect((db.prepare("SELECT COUNT(*) AS n FROM entries WHERE path = 'x'").get() as { n: number }).n).toBe(1);
    db.close();
    expect((await Store.rebuild(dir, { force: true })).seq).toBe(0); // (insisted on: as asked)
  });

  it('damage inside the newest segment is not cut as a torn append: the commits after it stay, and the open says so', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 1024 } });
    for (let i = 0; i < 20; i++) await store.put(textBytes(`note ${i}`), { path: `n/${i}.txt` });
    await store.close();
    const [segment] = readdirSync(join(dir, 'log')).map((f) => join(dir, 'log', f));
    const before = readFileSync(segment!);
    const damaged = Buffer.from(before);
    damaged[200]! ^= 0x01; // inside an early commit, every later one intact
    writeFileSync(segment!, damaged);
    removeDatabase(dir);
    // It replayed the commits before the damage, cut the rest as a torn tail, and the next
    // write made that for good (a trial: 200 entries and a snapshot gone, verify ok).
    await expect(Store.open(dir)).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'log', message: expect.stringMatching(/is damaged at offset .*a whole commit follows.*nothing was cut/) });
    await expect(Store.rebuild(dir)).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'log', message: expect.stringMatching(/kura rebuild --force; in a browser, BrowserStore.rebuild\(name, \{ force: true \}\)\) cuts the log there/) });
    expect(readFileSync(segment!).equals(damaged)).toBe(true);
    // The way out, asked for: the log is cut at the damage, what followed kept beside it, and
    // the store opens with what came before.
    const r = await Store.rebuild(dir, { force: true });
    expect(r.cut).toHaveLength(1);
    const kept = readFileSync(join(dir, r.cut![0]!));
    expect(Buffer.concat([readFileSync(segment!), kept]).equals(damaged)).toBe(true);
    const s = await reopen(dir);
    expect((await s.list()).items.length).toBeLessThan(20);
    await s.put(textBytes('after the cut'), { path: 'after.txt' });
    expect((await s.verify()).ok).toBe(true);
    await s.close();
  });

  it('the newest commit damaged at its full length is damage, not a torn append: never cut without a word', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 1024 } });
    await store.put(textBytes('first acknowledged doc'), { path: 'a.txt' });
    await store.put(textBytes('second acknowledged doc'), { path: 'b.txt' });
    await store.close();
    const [segment] = readdirSync(join(dir, 'log')).map((f) => join(dir, 'log', f));
    const intact = readFileSync(segment!);
    const frames = readFrames(intact).frames;
    const last = frames[frames.length - 1]!;
    // A bit flipped in its magic, length, seq, prev, body or hash: each time, with kura.db gone
    // (a rebuild) and with it (a writer's open), the commit is reported, and nothing is cut.
    for (const at of [0, 4, 5, 9, 20, FRAME_OVERHEAD - 32 + 4, last.length - 40, last.length - 1]) {
      const damaged = Buffer.from(intact);
      damaged[last.offset + at]! ^= 0x10;
      writeFileSync(segment!, damaged);
      removeDatabase(dir);
      await expect(Store.rebuild(dir), `byte ${at}`).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'log', message: expect.stringMatching(new RegExp(`damaged at offset ${last.offset}: .*nothing was cut`)) });
      await expect(Store.open(dir), `byte ${at}`).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'log' });
      expect(readFileSync(segment!).equals(damaged), `byte ${at}`).toBe(true);
    }
    // Asked for, the cut keeps what it cuts; the store opens with the commits before.
    const r = await Store.rebuild(dir, { force: true });
    expect(readFileSync(join(dir, r.cut![0]!)).length).toBe(last.length);
    expect(r.seq).toBe(last.seq - 1);
    const s = track(await Store.open(dir));
    expect((await s.stat('a.txt')).path).toBe('a.txt');
    expect((await s.verify()).ok).toBe(true);
    await s.close();
  });

  it('what a power loss leaves of an append (its region as zeros, in part or whole) is a torn append: cut, the store opens', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 1024 } });
    await store.put(textBytes('hello'), { path: 'a.txt' });
    await store.close();
    const { bytes: frame, segment } = await nextFrame(dir, 'feedfacefeedface', [{ op: 'delete-path', path: 'a.txt' }]);
    const intact = readFileSync(segment);
    const tails = [
      new Uint8Array(frame.length), // nothing of it reached the disk
      Buffer.concat([frame.subarray(0, 48), new Uint8Array(frame.length - 48)]), // its header only
      Buffer.concat([frame.subarray(0, frame.length - 32), new Uint8Array(32)]), // all but its hash
    ];
    for (const [i, tail] of tails.entries()) {
      writeFileSync(segment, Buffer.concat([intact, tail]));
      removeDatabase(dir);
      await Store.rebuild(dir);
      const s = track(await Store.open(dir));
      expect((await s.stat('a.txt')).path, `tail ${i}`).toBe('a.txt');
      expect(statSync(segment).size, `tail ${i}`).toBe(intact.length);
      await s.close();
    }
    // Bytes that begin no frame are no append's.
    writeFileSync(segment, Buffer.concat([intact, Buffer.from('garbage, not a frame')]));
    await expect(Store.open(dir)).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'log', message: expect.stringMatching(/no commit's/) });
  });

  it('a segment cut shorter than what the database applied from it refuses new commits (they landed where no replay reaches)', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 1024 } });
    for (let i = 0; i < 5; i++) await store.put(textBytes(`note ${i}`), { path: `n/${i}.txt` });
    await store.close();
    const [segment] = readdirSync(join(dir, 'log')).map((f) => join(dir, 'log', f));
    const bytes = readFileSync(segment!);
    writeFileSync(segment!, bytes.subarray(0, bytes.length - 10));
    // A put was acknowledged, and lost at the next rebuild (a trial).
    await expect(Store.open(dir)).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'log', message: expect.stringMatching(/fewer than the .* the database applied from it: the log was cut/) });
    expect(readFileSync(segment!).length).toBe(bytes.length - 10);
  });
});
