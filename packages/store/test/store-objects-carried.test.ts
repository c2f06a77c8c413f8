/**
 * Small packs carried by their commit's log object (decision 0044, FORMAT.md §15.4): a commit
 * of small puts is one request; other servers read those packs from the log object, catch up
 * without downloading them, find damage in them, and GC compacts them without deleting any log
 * object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import { MemoryObjectStore } from '../src/objects/memory-objects.js';
import { FIRST_READ, ObjectLogStore } from '../src/catalog/object-log.js';
import { listAll, type ByteRange, type ObjectStore } from '../src/objects/object-store.js';
import { decodeFrame, encodeFrame, ZERO_HASH } from '../src/catalog/frame.js';
import { CARRY_MAX } from '../src/bytes/writer.js';
import { PACK_HEADER_SIZE, RECORD_HEADER_SIZE } from '../src/bytes/pack-record.js';
import { HookedObjectStore } from './helpers/hooked-objects.js';
import { canonicalDump } from './helpers/dump.js';
import { batchEnded } from './helpers/store.js';
import { OBJECT_BATCH_MS } from '../src/catalog/own-commits.js';

const dirs: string[] = [];
const open: Store[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close().catch(() => undefined)));
});
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Counts calls by operation and key prefix, and the bytes GETs answered. */
class CountingObjects extends HookedObjectStore {
  readonly calls: string[] = [];
  got = 0;
  constructor(inner: ObjectStore) {
    super(inner);
    this.before = (op, key) => void this.calls.push(`${op} ${key.split('/')[0]}`);
  }
  override async get(key: string, range?: ByteRange): Promise<Uint8Array> {
    const bytes = await super.get(key, range);
    this.got += bytes.length;
    return bytes;
  }
  count(call: string): number {
    return this.calls.filter((c) => c === call).length;
  }
  reset(): void {
    this.calls.length = 0;
    this.got = 0;
  }
}

async function server(objects: ObjectStore, init = false, gcMarginMs?: number): Promise<Store & { view: CountingObjects; cacheDir: string }> {
  const view = new CountingObjects(objects);
  const cacheDir = mkdtempSync(join(tmpdir(), 'kura-carried-'));
  dirs.push(cacheDir);
  if (init) await (await Store.initObjects(view, { cacheDir })).close();
  const s = await Store.openObjects(view, { cacheDir, ...(gcMarginMs === undefined ? {} : { gcMarginMs }) });
  open.push(s);
  return Object.assign(s, { view, cacheDir });
}

/** Bytes that do not compress. */
function noise(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 65536) crypto.getRandomValues(out.subarray(i, Math.min(n, i + 65536)));
  return out;
}

async function sizes(objects: ObjectStore, prefix: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for await (const o of listAll(objects, prefix)) out.set(o.key, o.size);
  return out;
}

const log = (objects: ObjectStore) => new ObjectLogStore(objects);

describe('packs carried by their commits', () => {
  it('a commit of small puts is one request; another server reads the pack from the log object and catches up without downloading it', async () => {
    const objects = new MemoryObjectStore();
    const a = await server(objects, true);
    const b = await server(objects);
    a.view.reset();
    const small = noise(CARRY_MAX - 16 * 1024); // (its pack, header and index included, under CARRY_MAX)
    const put = await a.put(small, { path: 'small.bin' });
    expect(a.view.count('create log')).toBe(1);
    expect(a.view.calls.filter((c) => c.endsWith(' packs'))).toEqual([]);
    expect((await sizes(objects, 'packs/')).size).toBe(0);
    const [carrier] = [...(await sizes(objects, 'log/'))].filter(([, size]) => size > small.length);
    expect(carrier).toBeDefined();

    // B catches up: it reads the commit's frame, not the pack after it (FIRST_READ at most).
    b.view.reset();
    await b.refresh();
    expect(b.view.got).toBeLessThan(FIRST_READ + 1);
    expect((await b.stat('small.bin')).digest).toBe(put.digest);
    b.view.reset();
    expect(await b.getBytes(put.digest)).toEqual(small);
    expect(b.view.calls.filter((c) => c.startsWith('get'))).toEqual(b.view.calls.filter((c) => c === 'get log')); // from the log object
    expect(b.view.count('get log')).toBeGreaterThan(0);

    // A new server from the bucket alone: the same rows, the pack's place included.
    const c = await server(objects);
    expect(await c.getBytes(put.digest)).toEqual(small);
    await a.refresh();
    expect(canonicalDump(join(c.cacheDir, 'kura.db'))).toBe(canonicalDump(join(a.cacheDir, 'kura.db')));

    // A larger put gets a pack of its own, uploaded before its commit.
    a.view.reset();
    await a.put(noise(CARRY_MAX + 1), { path: 'large.bin' });
    expect(a.view.count('create packs')).toBe(1);
    expect(a.view.count('create log')).toBe(1);
  });

  it('damage in a carried pack is found by the server that reads it, never returned as good', async () => {
    const objects = new MemoryObjectStore();
    const a = await server(objects, true);
    const doc = new TextEncoder().encode('carried, then damaged in the bucket\n'.repeat(100));
    const put = await a.put(doc, { path: 'd.txt' });
    const [key, size] = [...(await sizes(objects, 'log/'))].find(([, n]) => n > doc.length / 10)!;
    const bytes = await objects.get(key);
    const frame = decodeFrame(bytes, 0)!;
    expect(new TextDecoder().decode(frame.body)).toContain('"inline":true');
    expect(size - frame.length).toBeGreaterThan(PACK_HEADER_SIZE);
    bytes[frame.length + PACK_HEADER_SIZE + RECORD_HEADER_SIZE + 3]! ^= 0x40;
    await objects.put(key, bytes);
    const b = await server(objects);
    await expect(b.getBytes(put.digest)).rejects.toMatchObject({ code: 'CORRUPT_DATA' });
    expect((await b.verify(undefined, { readData: true })).damagedDocuments.map((d) => d.digest)).toEqual([put.digest]);
  });

  it('GC compacts carried packs and drops their rows, deleting no log object; what is left reads back everywhere', async () => {
    const objects = new MemoryObjectStore();
    const a = await server(objects, true, 0);
    const docs = Array.from({ length: 12 }, (_, i) => noise(20_000 + i));
    const puts: { digest: string }[] = [];
    // Three commits of four puts each (a carried pack each), then three of every four deleted.
    for (let g = 0; g < 3; g++) puts.push(...(await Promise.all([0, 1, 2, 3].map((j) => a.put(docs[g * 4 + j]!, { path: `d/${g * 4 + j}` })))));
    expect((await sizes(objects, 'packs/')).size).toBe(0);
    await batchEnded(OBJECT_BATCH_MS); // (read through another connection below)
    const rows = (sql: string) => {
      const db = new Database(join(a.cacheDir, 'kura.db'), { readonly: true });
      try {
        return (db.prepare(sql).all() as { name: string }[]).map((r) => r.name);
      } finally {
        db.close();
      }
    };
    const carried = rows('SELECT name FROM packs WHERE log_seq IS NOT NULL');
    expect(carried.length).toBeGreaterThanOrEqual(3);
    for (let i = 0; i < docs.length; i++) if (i % 4 !== 0) await a.deletePath(`d/${i}`);
    const logBefore = await sizes(objects, 'log/');
    a.view.reset();
    await a.gc(); // (on an object store a first GC marks; the next, a margin later, deletes: decision 0041)
    const report = await a.gc();
    expect(report.chunksRemoved).toBeGreaterThan(0);
    expect(report.packsCompacted).toBeGreaterThan(0);
    expect(report.packsDeleted).toBe(0);
    expect(a.view.calls.filter((c) => c.startsWith('delete'))).toEqual([]);
    const logAfter = await sizes(objects, 'log/');
    for (const [k, n] of logBefore) expect(logAfter.get(k)).toBe(n); // every log object, whole
    // The carried packs' rows are gone (their live chunks moved), and with a margin of 0 their
    // drops are forgotten at once (a forget-packs commit names each), with no object deleted.
    expect(rows('SELECT name FROM packs').filter((n) => carried.includes(n))).toEqual([]);
    expect(rows('SELECT name FROM dropped_packs')).toEqual([]);
    const forgotten: string[] = [];
    for (const key of logAfter.keys()) {
      const body = JSON.parse(new TextDecoder().decode(decodeFrame(await log(objects).readSegment(key.slice(4)), 0)!.body)) as { ops: { op: string; names?: string[] }[] };
      for (const op of body.ops) if (op.op === 'forget-packs') forgotten.push(...op.names!);
    }
    expect(carried.filter((n) => !forgotten.includes(n))).toEqual([]);
    const b = await server(objects);
    for (let i = 0; i < docs.length; i += 4) expect(await b.getBytes(puts[i]!.digest)).toEqual(docs[i]);
    for (let i = 1; i < docs.length; i += 4) await expect(b.stat(`d/${i}`)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await b.verify(undefined, { readData: true })).toMatchObject({ ok: true });
    await a.refresh();
    expect(canonicalDump(join(b.cacheDir, 'kura.db'))).toBe(canonicalDump(join(a.cacheDir, 'kura.db')));
  });
});

describe('reading a commit object', () => {
  it('answers the frame alone, whether it is shorter or longer than the first read, with a pack after it or not', async () => {
    const objects = new MemoryObjectStore();
    for (const [seq, bodyLength, tail] of [
      [1, 100, 0],
      [2, 100, 5000],
      [3, FIRST_READ + 50_000, 0], // longer than the first read
      [4, FIRST_READ + 50_000, 700 * 1024],
      [5, FIRST_READ - 80, 10], // the frame ends exactly at the first read's end
    ] as const) {
      const body = 'x'.repeat(bodyLength);
      const { bytes } = encodeFrame(seq, ZERO_HASH, body);
      const object = new Uint8Array(bytes.length + tail);
      object.set(bytes);
      object.fill(0xab, bytes.length);
      const name = String(seq).padStart(20, '0');
      await log(objects).createSegment(name, object);
      const read = await log(objects).readSegment(name);
      expect(read).toEqual(bytes);
      expect(decodeFrame(read, 0)?.seq).toBe(seq);
    }
  });

  it('answers a torn or foreign object as it is: no commit in it', async () => {
    const objects = new MemoryObjectStore();
    const { bytes } = encodeFrame(1, ZERO_HASH, 'y'.repeat(400 * 1024));
    await objects.put('log/00000000000000000001', bytes.subarray(0, 300 * 1024)); // shorter than its header says
    await objects.put('log/00000000000000000002', new TextEncoder().encode('not a frame'));
    expect(decodeFrame(await log(objects).readSegment('00000000000000000001'), 0)).toBeUndefined();
    expect(new TextDecoder().decode(await log(objects).readSegment('00000000000000000002'))).toBe('not a frame');
  });
});

describe('verify on object storage', () => {
  it("reads each commit object's frame once: the catalog's replay takes what log-verify read (decision 0073)", async () => {
    const objects = new MemoryObjectStore();
    const a = await server(objects, true);
    for (let i = 0; i < 12; i++) await a.put(noise(2_000 + i), { path: `p/${i}.bin` });
    await a.setMeta('p/3.bin', { k: 'v' });
    // Frames are read from the start of their object (a carried pack's bytes, which verify
    // checks too, lie after the frame).
    const frames: string[] = [];
    const get = a.view.get.bind(a.view);
    a.view.get = (key, range) => {
      if (key.startsWith('log/') && (range?.offset ?? 0) === 0) frames.push(key);
      return get(key, range);
    };
    const r = await a.verify();
    expect(r).toMatchObject({ ok: true, catalogChecked: true, damagedCatalog: [] });
    const commits = [...(await sizes(objects, 'log/'))].length;
    expect(commits).toBeGreaterThan(12);
    // Each commit object read once by the two of them (its frame fits the first read).
    expect(frames.length).toBe(commits);
    expect(new Set(frames).size).toBe(frames.length);
  });
});
