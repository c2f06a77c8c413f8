/**
 * Fault injection in the pack store: a wrapper over a pack store — the file system's and the
 * in-memory one, the same enumeration for both — fails the k-th operation (create, append —
 * sometimes after writing part of the record —, sync, close, read, remove, list) with EIO or
 * ENOSPC, typed as a backend reports them (IO_ERROR, STORAGE_FULL). For every k over a workload
 * of puts (sharing chunks), deletes, a GC and more puts: every operation either succeeds or
 * fails with a typed error; after reopening without faults, verify is clean, every acknowledged
 * put reads back exactly and every acknowledged delete stays deleted.
 * (store-sqlite-faults.test.ts does the same below SQLite.)
 */
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryPackStore } from '../src/backend/memory-packs.js';
import { FsLogStore } from '../src/node/fs-log.js';
import type { PackInfo, PackStore, PackWriter } from '../src/backend/packs.js';
import { storageError } from '../src/errors.js';
import { FsPackStore } from '../src/node/fs-packs.js';
import { Store } from '../src/node/index.js';
import { openSqlite } from '../src/node/sqlite.js';
import { Store as Core } from '../src/store.js';
import { concatBytes, randomBytes, textBytes } from '../../core/test/helpers/data.js';
import { recordReliability } from './helpers/reliability.js';
import { tempDir } from './helpers/store.js';

const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

class InjectedFault extends Error {
  constructor(
    readonly code: 'EIO' | 'ENOSPC',
    op: string,
  ) {
    super(`${code}: injected fault in ${op}`);
  }
}

/** Counts pack operations; the `failAt`-th one fails (0: never). */
class FaultyPacks implements PackStore {
  ops = 0;
  injected = 0;
  constructor(
    readonly inner: PackStore,
    readonly failAt: number,
  ) {}

  #tick(op: string): void {
    this.ops++;
    if (this.ops === this.failAt) {
      this.injected++;
      throw storageError(new InjectedFault(this.failAt % 3 === 0 ? 'ENOSPC' : 'EIO', op));
    }
  }

  async create(name: string): Promise<PackWriter> {
    this.#tick('create');
    const w = await this.inner.create(name);
    const self = this;
    return {
      name,
      get size() {
        return w.size;
      },
      append(...parts) {
        self.ops++;
        if (self.ops === self.failAt) {
          self.injected++;
          // Half the time a short write: part of the record lands before the error.
          if (self.failAt % 2 === 0 && parts[0]) w.append(parts[0].subarray(0, Math.ceil(parts[0].length / 2)));
          throw storageError(new InjectedFault('ENOSPC', 'append'));
        }
        return w.append(...parts);
      },
      async sync() {
        self.#tick('sync');
        await w.sync();
      },
      async close() {
        self.#tick('close');
        await w.close();
      },
    };
  }

  async read(name: string, offset: number, length: number): Promise<Uint8Array> {
    this.#tick('read');
    return this.inner.read(name, offset, length);
  }

  async remove(name: string): Promise<void> {
    this.#tick('remove');
    await this.inner.remove(name);
  }

  async list(): Promise<PackInfo[]> {
    this.#tick('list');
    return this.inner.list();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

const docs = [
  randomBytes(11, 30_000),
  textBytes(12, 40_000),
  concatBytes([randomBytes(11, 30_000), textBytes(13, 5_000)]), // shares chunks with docs[0]
  randomBytes(14, 9_000),
  textBytes(15, 20_000),
  randomBytes(16, 50_000),
];
const later = [concatBytes([textBytes(12, 40_000), randomBytes(17, 3_000)]), randomBytes(18, 12_000)];

interface Outcome {
  acked: Map<string, Uint8Array>;
  deleted: Set<string>;
  failures: number;
  /** Failures that were not typed storage errors. */
  untyped: string[];
}

/** The pack store under test and how a store over it is reopened without faults. */
interface Backend {
  name: string;
  packs(dir: string): PackStore;
  reopen(dir: string, packs: PackStore): Promise<Core>;
}

const BACKENDS: Backend[] = [
  { name: 'file system', packs: (dir) => new FsPackStore(join(dir, 'packs')), reopen: (dir) => Store.open(dir) },
  {
    name: 'memory',
    packs: () => new MemoryPackStore(),
    reopen: (dir, packs) => {
      const db = openSqlite(join(dir, 'kura.db'));
      return Core.openBackends({ db, packs, log: new FsLogStore(dir), setDurability: (d) => db.setDurability(d), release: () => db.close() });
    },
  },
];

async function workload(dir: string, failAt: number, inner: PackStore): Promise<{ outcome: Outcome; packs: FaultyPacks }> {
  mkdirSync(dir, { recursive: true });
  const db = openSqlite(join(dir, 'kura.db'), { timeout: 100 });
  const packs = new FaultyPacks(inner, failAt);
  const outcome: Outcome = { acked: new Map(), deleted: new Set(), failures: 0, untyped: [] };
  const attempt = async (fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (e) {
      outcome.failures++;
      const code = (e as { code?: unknown }).code;
      if (code !== 'IO_ERROR' && code !== 'STORAGE_FULL') outcome.untyped.push(String(e));
    }
  };
  let store: Core | undefined;
  await attempt(async () => {
    store = await Core.create({ db, packs, log: new FsLogStore(dir), setDurability: (d) => db.setDurability(d) }, { chunking: { avg: 4096 }, durability: 'full' }, 64 * 1024);
  });
  if (store) {
    const s = store;
    const put = (b: Uint8Array) =>
      attempt(async () => {
        const r = await s.put(b);
        outcome.acked.set(r.digest, b);
      });
    for (const d of docs) await put(d);
    for (const d of [docs[0]!, docs[3]!]) {
      await attempt(async () => {
        if (await s.delete(sha(d))) {
          outcome.acked.delete(sha(d));
          outcome.deleted.add(sha(d));
        }
      });
    }
    await attempt(async () => void (await s.gc()));
    for (const d of later) await put(d);
    await s.close().catch(() => undefined);
  } else {
    db.close();
  }
  return { outcome, packs };
}

describe('fault injection in the pack store', () => {
  for (const backend of BACKENDS) {
    it(`${backend.name}: each failing operation fails with a typed error; after reopening, verify is clean and nothing acknowledged is lost`, { timeout: 240_000 }, async () => {
      // A run without faults counts the operations to enumerate.
      const clean = await workload(join(tempDir(), 'store'), 0, backend.packs(tempDir()));
      expect(clean.outcome.failures).toBe(0);
      const total = clean.packs.ops;
      expect(total).toBeGreaterThan(20);
      let injected = 0;
      let failedOps = 0;
      let checked = 0;
      for (let k = 1; k <= total; k++) {
        const dir = join(tempDir(), 'store');
        const inner = backend.packs(dir);
        const { outcome, packs } = await workload(dir, k, inner);
        injected += packs.injected;
        failedOps += outcome.failures;
        expect(outcome.untyped, `fault at op ${k}: errors that are not IO_ERROR or STORAGE_FULL`).toEqual([]);
        let reopened: Core;
        try {
          reopened = await backend.reopen(dir, inner);
        } catch (e) {
          // Only a store whose creation itself failed may be missing.
          expect(outcome.acked.size, `fault at op ${k}: store does not open (${String(e)})`).toBe(0);
          continue;
        }
        const report = await reopened.verify();
        expect(report.damagedChunks, `fault at op ${k}`).toEqual([]);
        expect(report.ok, `fault at op ${k}: ${JSON.stringify(report.damagedPacks)}`).toBe(true);
        for (const [digest, bytes] of outcome.acked) {
          expect(sha(await reopened.getBytes(digest)), `fault at op ${k}: ${digest}`).toBe(digest);
          expect((await reopened.getBytes(digest)).length).toBe(bytes.length);
          checked++;
        }
        for (const digest of outcome.deleted) expect(await reopened.has(digest), `fault at op ${k}: deleted ${digest}`).toBe(false);
        // The store keeps working after the fault: a new put and a GC succeed.
        const r = await reopened.put(randomBytes(1000 + k, 5000));
        expect(sha(await reopened.getBytes(r.digest))).toBe(r.digest);
        await reopened.gc();
        expect((await reopened.verify()).ok).toBe(true);
        await reopened.close();
      }
      expect(injected).toBe(total);
      const memory = backend.name === 'memory';
      recordReliability(memory ? 'faults-packs-memory' : 'faults-packs', `pack-store faults (EIO, ENOSPC, short writes) at every operation of puts, deletes and GC — ${backend.name} packs`, {
        'fault positions enumerated': total,
        'faults injected': injected,
        'operations that failed (each IO_ERROR or STORAGE_FULL)': failedOps,
        'acknowledged documents re-read after reopening': checked,
        'acknowledged documents lost or wrong': 0,
        'stores that verify found damaged': 0,
      });
    });
  }
});

describe('a pack store that stays full (a browser over its quota)', () => {
  it('close() still lets go of the database and the store after its last write fails; reopened, nothing acknowledged is lost', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'packs'), { recursive: true });
    /** Every append past the first `room` bytes fails, as long as the store is open. */
    let room = 100_000;
    const inner = new FsPackStore(join(dir, 'packs'));
    const full: PackStore = {
      ...inner,
      create: async (name) => {
        const w = await inner.create(name);
        return {
          name,
          get size() {
            return w.size;
          },
          append(...parts) {
            const n = parts.reduce((s, p) => s + p.length, 0);
            if (n > room) throw storageError(new InjectedFault('ENOSPC', 'append'));
            room -= n;
            return w.append(...parts);
          },
          sync: () => w.sync(),
          close: () => w.close(),
        };
      },
      read: (n, o, l) => inner.read(n, o, l),
      remove: (n) => inner.remove(n),
      list: () => inner.list(),
      close: () => inner.close(),
    };
    const sqlite = openSqlite(join(dir, 'kura.db'));
    let dbClosed = false;
    const db = new Proxy(sqlite, { get: (t, k) => (k === 'close' ? () => ((dbClosed = true), t.close()) : Reflect.get(t, k)) });
    let released = false;
    const store = await Core.create({ db, packs: full, log: new FsLogStore(dir), setDurability: (d) => sqlite.setDurability(d), release: () => void (released = true) });
    const small = textBytes(40, 20_000);
    const acked = await store.put(small, { path: 'small.txt' });
    await expect(store.put(randomBytes(41, 400_000), { path: 'big.bin' })).rejects.toMatchObject({ code: 'STORAGE_FULL' });
    // The failed write gave its pack up (FORMAT.md §6); a little room, and a small put goes
    // into a new one, which then cannot be sealed (its index does not fit): close says so,
    // and still closes.
    room = 50_000;
    const second = textBytes(42, 5_000);
    const ackedSecond = await store.put(second, { path: 'second.txt' });
    room = 0;
    await expect(store.close()).rejects.toMatchObject({ code: 'STORAGE_FULL' });
    expect([dbClosed, released]).toEqual([true, true]); // (the database stayed open)
    await expect(store.list()).rejects.toMatchObject({ code: 'STORE_CLOSED' });
    // The seal runs beside the close's last indexing (store-writes.ts close): its failure did
    // not cut that short, nothing is left queued.
    const closed = openSqlite(join(dir, 'kura.db'), { readonly: true });
    expect(closed.prepare<{ n: number }>('SELECT COUNT(*) AS n FROM search_queue').get()).toEqual({ n: 0 });
    closed.close();
    room = Infinity;
    const again = await Store.open(dir);
    expect(sha(await again.getBytes(acked.digest))).toBe(acked.digest);
    expect(sha(await again.getBytes(ackedSecond.digest))).toBe(sha(second));
    expect((await again.list()).items.map((e) => e.path)).toEqual(['small.txt', 'second.txt']);
    await again.gc();
    expect((await again.verify()).ok).toBe(true);
    await again.close();
  });
});
