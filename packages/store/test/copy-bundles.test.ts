/**
 * Small pack copies in bundles (decision 0048, node/copy-bundles.ts): a server on object
 * storage appends the copy of each small pack it uploads to a bundle file instead of creating a
 * file per pack. The copies read back byte for byte (in this run and after a restart, without a
 * GET), a torn tail costs only the torn copy (read from the object store), a damaged copy is
 * read from the object store instead, and bundles go whole, least recently used first, within
 * the budget.
 */
import { appendFileSync, readFileSync, readdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import { MemoryObjectStore } from '../src/objects/memory-objects.js';
import type { ObjectStore } from '../src/objects/object-store.js';
import { CopyBundles } from '../src/node/copy-bundles.js';
import { ReadFds } from '../src/node/read-fds.js';
import { PACK_HEADER_SIZE, RECORD_HEADER_SIZE } from '../src/bytes/pack-record.js';
import { collect, randomBytes, tempDir, track } from './helpers/store.js';

const temp = () => tempDir('kura-bundles-');
const name = (i: number) => i.toString(16).padStart(32, '0');
const bytes = (n: number, seed: number) => new Uint8Array(n).map((_, i) => (i * 31 + seed * 7) % 251);

describe('CopyBundles', () => {
  it('reads each copy back whole and in ranges, in this run and after a restart; a torn tail is left out', () => {
    const dir = temp();
    const fds = new ReadFds();
    const a = new CopyBundles(dir, 10_000);
    const copies = Array.from({ length: 12 }, (_, i) => bytes(1000 + i * 97, i));
    const went = copies.map((c, i) => a.append(name(i), c));
    // 10,000 bytes a bundle: the twelve copies (~18 KB with headers) span two or more.
    expect(new Set(went.map((w) => w.id)).size).toBeGreaterThan(1);
    went.forEach((w, i) => expect(w.grew).toBe(24 + copies[i]!.length));
    copies.forEach((c, i) => {
      expect(Buffer.from(a.read(name(i), 0, c.length, fds)!).equals(Buffer.from(c))).toBe(true);
      expect(Buffer.from(a.read(name(i), 10, 50, fds)!).equals(Buffer.from(c.subarray(10, 60)))).toBe(true);
      // Past the copy's end: what it has, never the next copy's bytes.
      expect(a.read(name(i), c.length - 5, 100, fds)!.length).toBe(5);
    });
    expect(a.read(name(99), 0, 10, fds)).toBeUndefined();
    a.close();
    fds.closeAll();

    // The newest bundle loses its last 3 bytes (a crash during the append).
    const last = went.at(-1)!.id;
    const lastPath = join(dir, `${last}.bundle`);
    truncateSync(lastPath, statSync(lastPath).size - 3);
    const b = new CopyBundles(dir, 10_000);
    const found = b.scan();
    expect(found.map((f) => f.id).sort()).toEqual([...new Set(went.map((w) => w.id))].sort());
    copies.forEach((c, i) => {
      if (i === copies.length - 1) expect(b.has(name(i))).toBe(false);
      else expect(Buffer.from(b.read(name(i), 0, c.length, fds)!).equals(Buffer.from(c))).toBe(true);
    });
    // New copies go to a new bundle, never after a torn tail.
    const more = b.append(name(50), bytes(500, 50));
    expect(more.id).not.toBe(last);
    expect(Buffer.from(b.read(name(50), 0, 500, fds)!).equals(Buffer.from(bytes(500, 50)))).toBe(true);
    b.close();
    fds.closeAll();
  });

  it('stops at bytes that are not a copy, and drop removes a bundle with its copies', () => {
    const dir = temp();
    const fds = new ReadFds();
    const a = new CopyBundles(dir, 1 << 20);
    const { id } = a.append(name(1), bytes(300, 1));
    a.append(name(2), bytes(300, 2));
    a.close();
    appendFileSync(join(dir, `${id}.bundle`), Buffer.from('not a header, not a copy'));
    writeFileSync(join(dir, '0123456789abcdef.bundle'), Buffer.from('KPB0 wrong magic, no copies here'));
    writeFileSync(join(dir, 'stray.txt'), 'x');
    const b = new CopyBundles(dir, 1 << 20);
    b.scan();
    expect(b.has(name(1)) && b.has(name(2))).toBe(true);
    expect(Buffer.from(b.read(name(2), 0, 300, fds)!).equals(Buffer.from(bytes(300, 2)))).toBe(true);
    fds.closeAll();
    b.drop(id);
    expect(b.has(name(1)) || b.has(name(2))).toBe(false);
    expect(readdirSync(dir).includes(`${id}.bundle`)).toBe(false);
    expect(() => b.append('not-a-name', bytes(10, 0))).toThrow(RangeError);
  });
});

/** Counts GETs of pack bytes: small packs travel in their commit objects (log/), large ones in packs/. */
function counted(objects: MemoryObjectStore): { store: ObjectStore; gets: () => number; reset: () => void } {
  let gets = 0;
  const methods = ['head', 'put', 'create', 'replace', 'delete', 'list', 'startUpload', 'uploadPart', 'completeUpload', 'abortUpload', 'clockOffsetMs'] as const;
  const store = { location: objects.location, close: async () => undefined } as Record<string, unknown>;
  for (const m of methods) store[m] = (...args: unknown[]) => (objects[m] as (...a: unknown[]) => unknown).apply(objects, args);
  store.get = (key: string, range?: { offset: number; length: number }) => {
    if (range) gets++;
    return objects.get(key, range);
  };
  return { store: store as unknown as ObjectStore, gets: () => gets, reset: () => (gets = 0) };
}

describe('a server on object storage keeps its small packs in bundles', () => {
  it('reads back what it stored without a GET, before and after a restart, and a torn bundle costs only its torn copy', async () => {
    const objects = new MemoryObjectStore();
    const c = counted(objects);
    const cacheDir = temp();
    const a = track(await Store.initObjects(c.store, { cacheDir }));
    const docs = Array.from({ length: 40 }, (_, i) => bytes(3000 + i, i + 100));
    const digests: string[] = [];
    for (const d of docs) digests.push((await a.put(d)).digest); // one commit, one small pack each
    const copies = join(cacheDir, 'pack-copies');
    expect(readdirSync(copies, { recursive: true }).filter((f) => String(f).endsWith('.pack'))).toEqual([]);
    expect(readdirSync(join(copies, 'bundles')).filter((f) => f.endsWith('.bundle')).length).toBe(1);
    c.reset();
    for (let i = 0; i < docs.length; i++) expect(Buffer.from(await a.getBytes(digests[i]!)).equals(Buffer.from(docs[i]!))).toBe(true);
    expect(c.gets()).toBe(0);
    await a.close();

    const b = track(await Store.openObjects(c.store, { cacheDir }));
    c.reset();
    for (let i = 0; i < docs.length; i++) expect(Buffer.from(await b.getBytes(digests[i]!)).equals(Buffer.from(docs[i]!))).toBe(true);
    expect(c.gets()).toBe(0);
    await b.close();

    // The bundle's last copy torn: every document still reads whole; only that one's pack is fetched.
    const bundle = join(copies, 'bundles', readdirSync(join(copies, 'bundles'))[0]!);
    truncateSync(bundle, statSync(bundle).size - 10);
    const d = track(await Store.openObjects(c.store, { cacheDir }));
    c.reset();
    for (let i = 0; i < docs.length; i++) expect(Buffer.from(await d.getBytes(digests[i]!)).equals(Buffer.from(docs[i]!))).toBe(true);
    expect(c.gets()).toBeGreaterThan(0);
    expect(c.gets()).toBeLessThanOrEqual(2);
  });

  it('keeps its bundles within the budget, the least recently used going whole', async () => {
    const objects = new MemoryObjectStore();
    const cacheDir = temp();
    // 2 MiB: bundles of 1 MiB (the smallest), so at most two (and the one being appended to past them, for a moment).
    const a = track(await Store.initObjects(objects, { cacheDir, packCacheBytes: 2 << 20 }));
    const docs = Array.from({ length: 60 }, (_, i) => randomBytes(i + 1, 100_000));
    const digests: string[] = [];
    for (const d of docs) digests.push((await a.put(d)).digest); // ~100 KB packs, carried in their commits
    const dir = join(cacheDir, 'pack-copies', 'bundles');
    const sizes = readdirSync(dir).map((f) => statSync(join(dir, f)).size);
    expect(sizes.reduce((x, y) => x + y, 0)).toBeLessThanOrEqual(2 << 20);
    expect(sizes.length).toBeGreaterThanOrEqual(1);
    // Evicted or not, every document reads back whole (from the object store when its copy went).
    for (let i = 0; i < docs.length; i++) expect(Buffer.from(await a.getBytes(digests[i]!)).equals(Buffer.from(docs[i]!))).toBe(true);
  });

  it('reads a document whose copy is damaged from the object store: damage in the cache is not damage of the store', async () => {
    const objects = new MemoryObjectStore();
    const c = counted(objects);
    const cacheDir = temp();
    const a = track(await Store.initObjects(c.store, { cacheDir }));
    // Random bytes are stored as they are: a flipped byte is one of the document's.
    const small = randomBytes(1, 5000); // a bundled copy
    const large = randomBytes(2, 600_000); // a copy of its own (over 256 KiB)
    const s = await a.put(small);
    const l = await a.put(large, { path: 'large.bin' });
    await a.close();
    const copies = join(cacheDir, 'pack-copies');
    const bundle = join(copies, 'bundles', readdirSync(join(copies, 'bundles'))[0]!);
    const own = readdirSync(copies, { recursive: true }).map(String).filter((f) => f.endsWith('.pack'));
    expect(own.length).toBe(1);
    for (const [file, at] of [
      [bundle, 24 + PACK_HEADER_SIZE + RECORD_HEADER_SIZE + 100],
      [join(copies, own[0]!), PACK_HEADER_SIZE + RECORD_HEADER_SIZE + 300_000],
    ] as const) {
      const raw = readFileSync(file);
      raw[at] ^= 0xff;
      writeFileSync(file, raw);
    }
    const b = track(await Store.openObjects(c.store, { cacheDir }));
    for (const [doc, want] of [
      [s.digest, small],
      [l.digest, large],
    ] as const) {
      c.reset();
      expect(Buffer.from(await b.getBytes(doc)).equals(Buffer.from(want))).toBe(true); // (whole: one SHA-256 pass, then every chunk checked)
      expect(c.gets()).toBeGreaterThan(0); // from the object store
      expect(Buffer.from(await collect(b.get(doc))).equals(Buffer.from(want))).toBe(true);
    }
    const report = await b.verify(undefined, { readData: true });
    expect(report.ok).toBe(true);
    expect(report.damagedChunks).toEqual([]);
  });
});
