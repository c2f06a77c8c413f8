/**
 * A browser over its quota (FORMAT.md §6): the browser's pack store (browser/opfs-packs.ts) over
 * an in-memory origin-private file system whose writes fail past a quota. A write that fails
 * gives its pack up: a later, smaller put fits at once (no reload), what was committed before
 * stays readable, a put whose records the pack held is never acknowledged, and after reopening
 * everything acknowledged is there and verify is clean.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OpfsPackStore } from '../src/browser/opfs-packs.js';
import { FsLogStore } from '../src/node/fs-log.js';
import { openSqlite } from '../src/node/sqlite.js';
import { Store as Core } from '../src/store.js';
import { putMany } from '../src/put-many.js';
import type { StoreContext } from '../src/store-context.js';
import { randomBytes, textBytes } from '../../core/test/helpers/data.js';
import { MemoryOpfs } from './helpers/memory-opfs.js';
import { tempDir } from './helpers/store.js';

const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const MiB = 1024 * 1024;

function backends(dir: string, opfs: MemoryOpfs) {
  const db = openSqlite(join(dir, 'kura.db'));
  return { db, packs: new OpfsPackStore(opfs.directory()), log: new FsLogStore(dir), setDurability: (d: 'full' | 'normal' | 'off') => db.setDurability(d), release: () => db.close() };
}

/** A source that yields `first`, then waits for `go` before yielding `rest`. */
function held(first: Uint8Array, rest: Uint8Array) {
  let go!: () => void;
  const gate = new Promise<void>((r) => (go = r));
  async function* source() {
    yield first;
    await gate;
    yield rest;
  }
  return { source: source(), go };
}

async function reopenAndCheck(dir: string, opfs: MemoryOpfs, acked: Map<string, Uint8Array>, paths: string[]) {
  opfs.quota = Infinity;
  opfs.reload();
  const store = await Core.openBackends(backends(dir, opfs));
  for (const [digest, bytes] of acked) expect(sha(await store.getBytes(digest)), digest).toBe(digest), expect((await store.getBytes(digest)).length).toBe(bytes.length);
  expect((await store.list()).items.map((e) => e.path).sort()).toEqual(paths);
  expect((await store.verify()).ok).toBe(true);
  await store.gc();
  expect((await store.verify()).ok).toBe(true);
  for (const digest of acked.keys()) expect(sha(await store.getBytes(digest))).toBe(digest);
  await store.close();
}

describe('a browser over its quota', () => {
  it('a failed write gives its pack up: a smaller put fits at once, earlier documents stay readable, nothing acknowledged is lost', async () => {
    const dir = tempDir();
    const opfs = new MemoryOpfs();
    opfs.quota = 3 * MiB;
    const store = await Core.create(backends(dir, opfs));
    const acked = new Map<string, Uint8Array>();
    const first = randomBytes(1, 20_000);
    acked.set((await store.put(first, { path: 'first.bin' })).digest, first);

    await expect(store.put(randomBytes(2, 6 * MiB), { path: 'big.bin' })).rejects.toMatchObject({ code: 'STORAGE_FULL', cause: { name: 'QuotaExceededError' } });
    // A little room comes back (another site's data went): less than the gathered MiB the
    // failed put left, ample for a small note. Retrying the gathered bytes refused it.
    opfs.quota = opfs.used + 200_000;
    const note = textBytes(3, 20_000);
    acked.set((await store.put(note, { path: 'note.txt' })).digest, note);
    // The document committed in the pack given up reads back (reading it had retried the
    // gathered bytes too, and failed).
    expect(sha(await store.getBytes(sha(first)))).toBe(sha(first));
    expect(sha(await store.getBytes(sha(note)))).toBe(sha(note));
    expect((await store.list()).items.map((e) => e.path).sort()).toEqual(['first.bin', 'note.txt']);
    expect((await store.verify()).ok).toBe(true);
    await store.close();
    await reopenAndCheck(dir, opfs, acked, ['first.bin', 'note.txt']);
  });

  it('a put whose records were in the pack given up is refused at its commit, while puts in other packs commit', async () => {
    const dir = tempDir();
    const opfs = new MemoryOpfs();
    const store = await Core.create(backends(dir, opfs));
    const acked = new Map<string, Uint8Array>();
    // A streaming put places its first records, then waits. (A head this large: the first few
    // hundred KB of a put are taken in before any record is placed.)
    const head = randomBytes(4, 2 * MiB);
    const tail = randomBytes(5, 50_000);
    const slow = held(head, tail);
    const slowPut = store.put(slow.source, { path: 'slow.bin' });
    await new Promise((r) => setTimeout(r, 300));
    // Another put fills the gathered MiB; its write is refused.
    opfs.quota = opfs.used + 100_000;
    await expect(store.put(randomBytes(6, 3 * MiB), { path: 'big.bin' })).rejects.toMatchObject({ code: 'STORAGE_FULL', cause: { name: 'QuotaExceededError' } });
    opfs.quota = opfs.used + 2 * MiB;
    slow.go();
    const outcome = await slowPut.then(
      (r) => ({ digest: r.digest }),
      (e: unknown) => ({ error: e }),
    );
    // Its head's records were dropped with the pack: it must not be acknowledged.
    expect(outcome).toMatchObject({ error: { code: 'STORAGE_FULL', cause: { name: 'QuotaExceededError' } } });
    opfs.quota = Infinity;
    const note = textBytes(7, 30_000);
    acked.set((await store.put(note, { path: 'note.txt' })).digest, note);
    // The same bytes put again are written again, in the new pack.
    const again = new Uint8Array(head.length + tail.length);
    again.set(head);
    again.set(tail, head.length);
    acked.set((await store.put(again, { path: 'slow.bin' })).digest, again);
    expect((await store.verify()).ok).toBe(true);
    await store.close();
    await reopenAndCheck(dir, opfs, acked, ['note.txt', 'slow.bin']);
  });

  it('a seal that fails (the pack full, its index refused) acknowledges no put whose records it held', async () => {
    const dir = tempDir();
    const opfs = new MemoryOpfs();
    // Packs sealed at 1.5 MiB, so the second put fills one and seals it.
    const store = await Core.create(backends(dir, opfs), {}, 1.5 * MiB);
    const head = randomBytes(8, 1.2 * MiB);
    const tail = randomBytes(9, 20_000);
    const slow = held(head, tail);
    const slowPut = store.put(slow.source, { path: 'slow.bin' }).then(
      (r) => ({ digest: r.digest }),
      (e: unknown) => ({ error: e }),
    );
    await new Promise((r) => setTimeout(r, 300));
    // The head's records: a MiB written, the rest gathered. The big put fills the pack to its
    // target; the seal's write of what is gathered is refused.
    opfs.quota = opfs.used + 200_000;
    await expect(store.put(randomBytes(10, 2 * MiB), { path: 'big.bin' })).rejects.toMatchObject({ code: 'STORAGE_FULL', cause: { name: 'QuotaExceededError' } });
    // Room for the rest of the slow put (its last ~200 KB and the tail) in a new pack, not for
    // the head's records still gathered in the pack given up.
    opfs.quota = opfs.used + 400_000;
    slow.go();
    const outcome = await slowPut;
    // The tab is closed without close(): what was gathered and never written is gone. An
    // acknowledged put must read back in full; this one held records in the pack given up.
    const whole = new Uint8Array([...head, ...tail]);
    await reopenAndCheck(dir, opfs, 'digest' in outcome ? new Map([[outcome.digest, whole]]) : new Map(), 'digest' in outcome ? ['slow.bin'] : []);
    expect(outcome).toMatchObject({ error: { code: 'STORAGE_FULL', cause: { name: 'QuotaExceededError' } } });
    await store.close().catch(() => undefined);
  });

  it('many puts at once: a file over the quota fails alone, the smaller ones after it go in (they failed with it)', async () => {
    const dir = tempDir();
    const opfs = new MemoryOpfs();
    opfs.quota = 3 * MiB;
    const store = await Core.create(backends(dir, opfs));
    const host = { store, context: (op: string) => (store as unknown as { context(op: string): StoreContext }).context(op) };
    const files = { 'a.txt': textBytes(2, 2_000), 'big.bin': randomBytes(3, 5 * MiB), 'b.txt': new TextEncoder().encode('a small note here'), 'c.txt': textBytes(4, 1_000) };
    const items = Object.entries(files).map(([path, bytes]) => ({ source: bytes, meta: { path } }));
    // On this thread (no workers), 32 at once: their records share the open pack.
    const outcomes: [string, string][] = [];
    for await (const o of putMany(host, items, { pool: undefined, small: () => false, here: (b: Uint8Array) => b, size: (b: Uint8Array) => b.length })) {
      outcomes.push([items[o.index]!.meta.path, o.result ? 'ok' : ((o.error as Error).name ?? 'error')]);
    }
    expect(outcomes).toEqual([['a.txt', 'ok'], ['big.bin', 'StorageFullError'], ['b.txt', 'ok'], ['c.txt', 'ok']]);
    const acked = new Map(Object.entries(files).filter(([p]) => p !== 'big.bin').map(([, b]) => [sha(b), b]));
    await store.close();
    await reopenAndCheck(dir, opfs, acked, ['a.txt', 'b.txt', 'c.txt']);
  });
});
