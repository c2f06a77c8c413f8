/**
 * A commit's jobs (decision 0047, FORMAT.md §15.2): on an object store a batch of puts is
 * published without being tried first, and the replay decides each job — a refused one changes
 * nothing and the others apply, the same on the writer, on every other server and in a rebuild.
 * The commits here are written as another server would write them (frames made by hand), and
 * through the writer's own publish.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import { MemoryObjectStore } from '../src/objects/memory-objects.js';
import { listAll, type ObjectStore } from '../src/objects/object-store.js';
import { decodeCommit, encodeBody } from '../src/catalog/commits.js';
import { encodeFrame, readFrames, segmentName } from '../src/catalog/frame.js';
import type { Op } from '../src/catalog/ops.js';
import type { StoreContext } from '../src/store-context.js';
import { canonicalDump } from './helpers/dump.js';
import { failure } from './helpers/failure.js';

const text = (s: string) => new TextEncoder().encode(s);
const dirs: string[] = [];
const open: Store[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close().catch(() => undefined)));
});
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** An object store that outlives the Stores on it. */
function shared(inner: ObjectStore): ObjectStore {
  return new Proxy(inner, {
    get: (t, k) => {
      if (k === 'close') return async () => undefined;
      const v = Reflect.get(t, k, t) as unknown;
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}

async function server(objects: ObjectStore, init = false): Promise<Store & { cacheDir: string }> {
  const cacheDir = mkdtempSync(join(tmpdir(), 'kura-jobs-'));
  dirs.push(cacheDir);
  const s = init ? await Store.initObjects(shared(objects), { cacheDir }) : await Store.openObjects(shared(objects), { cacheDir });
  open.push(s);
  return Object.assign(s, { cacheDir });
}

const dump = (s: { cacheDir: string }) => canonicalDump(join(s.cacheDir, 'kura.db'));

async function logKeys(objects: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for await (const o of listAll(objects, 'log/')) out.push(o.key);
  return out;
}

/** The newest commit in the bucket, decoded. */
async function newest(objects: ObjectStore) {
  const key = (await logKeys(objects)).at(-1)!;
  const frame = readFrames(await objects.get(key)).frames[0]!;
  return decodeCommit(frame);
}

/** A put of bytes the store holds (no chunk is placed) at `path`. */
const putExisting = (digest: string, size: number, path: string): Op => ({ op: 'put', digest, size, manifest: '00'.repeat(36), packs: [], places: [], entry: { path } });

/** A put of new bytes whose chunk is in a pack no row names (as after GC reclaimed it): MISSING_CHUNKS wherever it applies. */
const putReclaimed = (path: string): Op => ({
  op: 'put',
  digest: `sha256:${'ab'.repeat(32)}`,
  size: 5,
  manifest: `${'cd'.repeat(32)}05000000`,
  packs: ['0'.repeat(32)],
  places: [0, 0, 100, 13, 0],
  entry: { path },
});

describe("a commit's jobs", () => {
  it('a commit from another server: its refused job changes nothing, the jobs around it apply, alike on every server and in a new cache', async () => {
    const objects = new MemoryObjectStore();
    const a = await server(objects, true);
    const first = await a.put(text('shared bytes'), { path: 'one.txt' });
    const head = await newest(objects);
    const ops = [putExisting(first.digest, 12, 'two.txt'), putReclaimed('refused.txt'), putExisting(first.digest, 12, 'three.txt')];
    const { bytes } = encodeFrame(head.seq + 1, head.hash, encodeBody('feedfeedfeedfeed', Date.now(), ops, [1, 1, 1]));
    expect(await objects.create(`log/${segmentName(head.seq + 1)}`, bytes)).toBe(true);

    expect((await a.refresh()).commits).toBe(1);
    expect((await a.list()).items.map((i) => i.path).sort()).toEqual(['one.txt', 'three.txt', 'two.txt']);
    expect((await failure(a.stat('refused.txt'))).code).toBe('NOT_FOUND');
    expect((await failure(a.getBytes(`sha256:${'ab'.repeat(32)}`))).code).toBe('NOT_FOUND');
    // A server from an empty cache replays the same commit to the same rows.
    const b = await server(objects);
    expect(dump(b)).toBe(dump(a));
    expect(await b.getBytes((await b.stat('three.txt')).digest)).toEqual(text('shared bytes'));
    // And the store goes on: the next commit follows it.
    await b.put(text('after'), { path: 'four.txt' });
    await a.refresh();
    expect(dump(a)).toBe(dump(b));
    expect((await a.verify()).ok).toBe(true);
  });

  it('a commit without jobs is one job that must apply, and any error but a refusal stops the replay: applied later or never, never otherwise', async () => {
    const objects = new MemoryObjectStore();
    const a = await server(objects, true);
    await a.put(text('x'), { path: 'x.txt' });
    const head = await newest(objects);
    // Without jobs (as a local writer logs, having tried its operations): a refusal is damage.
    const whole = encodeFrame(head.seq + 1, head.hash, encodeBody('feedfeedfeedfeed', Date.now(), [putReclaimed('r.txt')]));
    await objects.create(`log/${segmentName(head.seq + 1)}`, whole.bytes);
    expect((await failure(a.refresh())).code).toBe('MISSING_CHUNKS');
    expect((await failure(server(objects))).code).toBe('MISSING_CHUNKS');
    expect((await a.list()).items.map((i) => i.path)).toEqual(['x.txt']); // nothing of it applied

    const objects2 = new MemoryObjectStore();
    const c = await server(objects2, true);
    await c.put(text('y'), { path: 'y.txt' });
    const h2 = await newest(objects2);
    // With jobs, an operation no replay knows is not a refusal: the replay stops there.
    const unknown = encodeFrame(h2.seq + 1, h2.hash, encodeBody('feedfeedfeedfeed', Date.now(), [{ op: 'no-such-op' } as unknown as Op], [1]));
    await objects2.create(`log/${segmentName(h2.seq + 1)}`, unknown.bytes);
    expect((await failure(c.refresh())).code).toBe('INTERNAL');
    // Jobs that do not divide the operations: the commit is damaged.
    const objects3 = new MemoryObjectStore();
    const d = await server(objects3, true);
    await d.put(text('z'), { path: 'z.txt' });
    const h3 = await newest(objects3);
    const torn = encodeFrame(h3.seq + 1, h3.hash, encodeBody('feedfeedfeedfeed', Date.now(), [putExisting((await d.stat('z.txt')).digest, 1, 'w.txt')], [2]));
    await objects3.create(`log/${segmentName(h3.seq + 1)}`, torn.bytes);
    const e = await failure(d.refresh());
    expect(e.code).toBe('CORRUPT_DATA');
    expect(e.message).toMatch(/jobs do not divide its 1 operations/);
  });

  it("the writer's publish: puts go untried and each caller gets its job's outcome; a job a caller's input can fail is tried first and never reaches the log when refused", async () => {
    const objects = new MemoryObjectStore();
    const a = await server(objects, true);
    const first = await a.put(text('shared bytes'), { path: 'one.txt' });
    const log = (a as unknown as { ctx: StoreContext }).ctx.log;

    const outcomes = await log.publish([[putExisting(first.digest, 12, 'w1.txt')], [putReclaimed('refused.txt')], [putExisting(first.digest, 12, 'w2.txt')]]);
    expect(Array.isArray(outcomes[0])).toBe(true);
    expect(((outcomes[1] as { failed: { code: string } }).failed).code).toBe('MISSING_CHUNKS');
    expect(Array.isArray(outcomes[2])).toBe(true);
    const logged = await newest(objects);
    expect(logged.jobs).toEqual([1, 1, 1]); // the refused put is in the log, decided by its replay
    expect((await a.list()).items.map((i) => i.path).sort()).toEqual(['one.txt', 'w1.txt', 'w2.txt']);

    const meta: Op = { op: 'meta', updates: [{ target: { path: 'missing.txt' }, change: { addTags: ['t'] } }] };
    const mixed = await log.publish([[meta], [putExisting(first.digest, 12, 'w3.txt')]]);
    expect(((mixed[0] as { failed: { code: string } }).failed).code).toBe('NOT_FOUND');
    expect(Array.isArray(mixed[1])).toBe(true);
    const tried = await newest(objects);
    expect(tried.ops.map((o) => o.op)).toEqual(['put']);
    expect(tried.jobs).toEqual([1]);

    const b = await server(objects);
    expect(dump(b)).toBe(dump(a));
  });
});
