/**
 * When a store starts its checkpoint worker (node/index.ts CHECKPOINTER_AFTER_MS / _WAL):
 * not for a store opened, written and closed in a moment (a `kura` command), then or later;
 * after a while for a store left open; at once for a burst of writes (counted from the open: a
 * new store's schema is not one); at the first commit of a store made just now. Workers are counted as
 * they are constructed (node:worker_threads wrapped), not guessed from the process's threads.
 * An object store's cache directory holds a database too (the log's replay), written at each
 * commit: its checkpoints go to the worker the same way.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { batchEnded, newStore, randomBytes, reopen, tempDir } from './helpers/store.js';
import { Store } from '../src/node/index.js';
import { MemoryObjectStore } from '../src/objects/memory-objects.js';

const made = vi.hoisted(() => ({ urls: [] as string[] }));

vi.mock('node:worker_threads', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:worker_threads')>();
  class Counted extends real.Worker {
    constructor(url: string | URL, options?: import('node:worker_threads').WorkerOptions) {
      super(url, options);
      made.urls.push(String(url));
    }
  }
  return { ...real, Worker: Counted, default: { ...real, Worker: Counted } };
});

const checkpointers = () => made.urls.filter((u) => u.includes('checkpoint-worker')).length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const walSize = (dir: string) => {
  try {
    return statSync(join(dir, 'kura.db-wal')).size;
  } catch {
    return 0;
  }
};

describe('the checkpoint worker starts', () => {
  it('not for a store opened, written and closed in a moment, then or later', async () => {
    const { store, dir } = await newStore();
    await store.close();
    const before = checkpointers();
    const began = performance.now();
    const quick = await reopen(dir);
    await quick.put(new TextEncoder().encode('a quick write'));
    await quick.close();
    // A moment is less than the 250 ms after which a store left open starts its worker: under
    // the full suite's load an open, a put and a close took longer here (and then starting the
    // worker is right). Whatever it took, nothing starts once the store is closed.
    const closed = checkpointers();
    if (performance.now() - began < 200) expect(closed).toBe(before);
    await sleep(600);
    expect(checkpointers()).toBe(closed);
  });

  it('once a store has been open a while', async () => {
    const { store } = await newStore();
    const before = checkpointers();
    await sleep(600);
    expect(checkpointers()).toBe(before + 1);
    await store.close();
  });

  it('at its first commit for a store made just now, and none for one made and closed', async () => {
    const before = checkpointers();
    const { store: made } = await newStore();
    await made.close(); // what `kura init` does: its schema (~260 KiB of WAL) is no burst
    expect(checkpointers()).toBe(before);
    const { store } = await newStore();
    await store.put(new TextEncoder().encode('the first put of a new store'));
    await batchEnded(); // (its commit batch ends)
    expect(checkpointers()).toBe(before + 1);
    await store.close();
  });

  it('at once when a burst of writes grows the WAL by 256 KiB', { timeout: 30_000 }, async () => {
    const { store: made, dir } = await newStore();
    await made.close();
    const store = await reopen(dir);
    const before = checkpointers();
    const opened = performance.now();
    // (Counted from the open: what opening wrote is no burst.)
    const from = walSize(dir);
    expect(checkpointers()).toBe(before);
    for (let i = 0; i < 400 && walSize(dir) - from <= 256 << 10; i++) await store.put(randomBytes(900 + i, 64 << 10));
    expect(walSize(dir) - from).toBeGreaterThan(256 << 10);
    // Started by the WAL's size; a machine so slow that the burst took longer than the timer
    // proves nothing either way.
    if (performance.now() - opened < 240) expect(checkpointers()).toBe(before + 1);
    await store.close();
  });

  it("for an object store's cache database as for a local store's", { timeout: 30_000 }, async () => {
    const cacheDir = tempDir('kura-ckpt-cache-'); // (removed after the file's tests)
    const store = await Store.initObjects(new MemoryObjectStore(), { cacheDir });
    const before = checkpointers();
    const from = walSize(cacheDir);
    for (let i = 0; i < 400 && walSize(cacheDir) - from <= 256 << 10; i++) await store.put(randomBytes(1900 + i, 64 << 10));
    expect(walSize(cacheDir) - from).toBeGreaterThan(256 << 10);
    await sleep(300);
    expect(checkpointers()).toBe(before + 1);
    await store.close();
  });
});

