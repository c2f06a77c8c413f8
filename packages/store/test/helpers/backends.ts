/** Store cores over real SQLite and file packs with an instrumented pack store (race tests). */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { blake3 } from '@kura/core';
import type { PackStore, PackWriter } from '../../src/backend/packs.js';
import { FsPackStore } from '../../src/node/fs-packs.js';
import { FsLogStore } from '../../src/node/fs-log.js';
import { openSqlite } from '../../src/node/sqlite.js';
import { Store as Core } from '../../src/store.js';
import { tempDir } from './store.js';

/** Wraps a PackStore: per pack, the bytes covered by a completed sync; optional delays. */
export class TrackingPacks implements PackStore {
  readonly durable = new Map<string, number>();
  syncDelayMs = 0;
  listDelayMs = 0;
  constructor(readonly inner: PackStore) {}
  async create(name: string): Promise<PackWriter> {
    const w = await this.inner.create(name);
    const self = this;
    return {
      name,
      get size() {
        return w.size;
      },
      append: (...p) => w.append(...p),
      async sync() {
        const covered = w.size; // bytes written before this fdatasync started
        if (self.syncDelayMs) await new Promise((r) => setTimeout(r, self.syncDelayMs));
        await w.sync();
        self.durable.set(name, Math.max(self.durable.get(name) ?? 0, covered));
      },
      close: () => w.close(),
    };
  }
  read(n: string, o: number, l: number) {
    return this.inner.read(n, o, l);
  }
  remove(n: string) {
    return this.inner.remove(n);
  }
  async list() {
    if (this.listDelayMs) await new Promise((r) => setTimeout(r, this.listDelayMs));
    return this.inner.list();
  }
  close() {
    return this.inner.close();
  }
}

export async function trackedCore(options: Parameters<typeof Core.create>[1], packSize = 4096) {
  const dir = tempDir();
  const db = openSqlite(join(dir, 'kura.db'));
  const packs = new TrackingPacks(new FsPackStore(join(dir, 'packs')));
  const store = await Core.create({ db, packs, log: new FsLogStore(dir), setDurability: (d) => db.setDurability(d) }, options, packSize);
  return { store, db, packs };
}

/** A chunk stream of one document made of the given raw chunks, pausing between them. */
export function streamOf(chunks: Uint8Array[], between?: () => Promise<void>) {
  return (async function* () {
    let offset = 0;
    const h = createHash('sha256');
    for (const c of chunks) {
      yield { offset, length: c.length, key: blake3(c), codec: 0 as const, payload: c };
      h.update(c);
      offset += c.length;
      if (between) await between();
    }
    return { digest: `sha256:${h.digest('hex')}` as const, size: offset, chunks: chunks.length };
  })();
}

export function rnd(n: number): Uint8Array {
  const b = new Uint8Array(n);
  crypto.getRandomValues(b);
  return b;
}
