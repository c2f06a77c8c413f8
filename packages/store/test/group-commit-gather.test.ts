/**
 * How long a group commit on an object store waits for the puts in progress to queue their
 * commits too (bytes/group-commit.ts): GATHER_MS, GATHER_BULK_MS while every put in progress is
 * a bulk stream's source, not once a pack's worth waits or every put has queued. Driven on a
 * recording host, on fake timers (so a loaded machine cannot make it pass or fail); what is
 * checked is which commits each published commit held, and when it was published.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SqlDatabase } from '../src/backend/sql.js';
import { Writer } from '../src/bytes/writer.js';
import type { CommitLog } from '../src/catalog/commit-log.js';
import type { Op } from '../src/catalog/ops.js';
import { GATHER_BULK_MS, GATHER_BYTES, GATHER_MS, GroupCommit } from '../src/bytes/group-commit.js';
import { newStore, tempDir, textBytes } from './helpers/store.js';

/** Puts in progress as the writer counts them, and the commits published (their ops' names, and when). */
function harness(opts: { active: number; bulk: number; openBytes?: number }) {
  const state = { active: opts.active, bulk: opts.bulk, openBytes: opts.openBytes ?? 0 };
  const published: { at: number; names: string[] }[] = [];
  const log = {
    publishes: true,
    publish: async (batch: Op[][]) => {
      published.push({ at: performance.now(), names: batch.map((ops) => (ops[0] as { name: string }).name) });
      return batch.map(() => []);
    },
    nothingComing: () => undefined,
    sync: async () => undefined,
  } as unknown as CommitLog;
  const group = new GroupCommit({
    log,
    db: {} as SqlDatabase,
    durability: () => 'normal',
    syncAppends: async () => undefined,
    drain: () => undefined,
    refusal: () => undefined,
    openPackSize: () => [],
    uploadForCommit: async () => [],
    giveBack: () => undefined,
    busy: () => state.active > 0,
    activePuts: () => state.active,
    bulkOnly: () => state.active > 0 && state.bulk === state.active,
    openBytes: () => state.openBytes,
  });
  /** A put's commit (queued now; answers when published). */
  const commit = (name: string) => group.commit([{ op: 'pack-size', name, size: 0 } as unknown as Op]);
  return { state, published, group, commit };
}

describe('a group commit on an object store', () => {
  beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'performance'] }));
  afterEach(() => void vi.useRealTimers());

  it('waits GATHER_MS for the other puts in progress, GATHER_BULK_MS when all are a bulk stream', async () => {
    expect(GATHER_BULK_MS).toBeGreaterThan(2 * GATHER_MS); // (else this test tells nothing)
    const later = (GATHER_MS + GATHER_BULK_MS) / 2; // after the short wait, before the long one
    for (const bulk of [false, true]) {
      const h = harness({ active: 2, bulk: bulk ? 2 : 0 });
      const first = h.commit('a');
      await vi.advanceTimersByTimeAsync(later);
      const second = h.commit('b');
      await vi.advanceTimersByTimeAsync(GATHER_BULK_MS);
      await Promise.all([first, second]);
      if (bulk) expect(h.published.map((p) => p.names)).toEqual([['a', 'b']]);
      else {
        expect(h.published.map((p) => p.names)).toEqual([['a'], ['b']]);
        expect(h.published[0]!.at).toBe(GATHER_MS);
      }
    }
  });

  it('waits GATHER_MS when any put in progress is not a bulk stream\'s', async () => {
    const h = harness({ active: 3, bulk: 2 }); // (an HTTP put beside a putFiles)
    void h.commit('a');
    await vi.advanceTimersByTimeAsync(GATHER_BULK_MS);
    expect(h.published).toEqual([{ at: GATHER_MS, names: ['a'] }]);
  });

  it('commits a bulk stream at GATHER_BULK_MS at the latest', async () => {
    const h = harness({ active: 2, bulk: 2 });
    void h.commit('a');
    await vi.advanceTimersByTimeAsync(GATHER_BULK_MS + 1);
    expect(h.published).toEqual([{ at: GATHER_BULK_MS, names: ['a'] }]);
  });

  it('does not wait once every put in progress has queued, nor once a pack\'s worth waits', async () => {
    const all = harness({ active: 2, bulk: 2 });
    void all.commit('a');
    void all.commit('b');
    await vi.advanceTimersByTimeAsync(1);
    expect(all.published.map((p) => p.names)).toEqual([['a', 'b']]);
    const full = harness({ active: 2, bulk: 2, openBytes: GATHER_BYTES });
    void full.commit('a');
    await vi.advanceTimersByTimeAsync(1);
    expect(full.published.map((p) => p.names)).toEqual([['a']]);
    // A lone put never waits.
    const lone = harness({ active: 1, bulk: 1 });
    void lone.commit('a');
    await vi.advanceTimersByTimeAsync(1);
    expect(lone.published.map((p) => p.names)).toEqual([['a']]);
  });

  it('commits at once when the last other put ends without a commit', async () => {
    const h = harness({ active: 2, bulk: 2 });
    void h.commit('a');
    await vi.advanceTimersByTimeAsync(GATHER_MS);
    h.state.active = 1; // (the other put failed: writer.putEnded nudges the group commit)
    h.state.bulk = 1;
    h.group.nudge();
    await vi.advanceTimersByTimeAsync(1);
    expect(h.published).toEqual([{ at: GATHER_MS, names: ['a'] }]);
  });
});

describe("a store's puts, as its writer counts them", () => {
  it('are a bulk stream\'s when putFiles puts them (small files in batches, large ones alone), not when put() does', async () => {
    const { store } = await newStore();
    const started = vi.spyOn(Writer.prototype, 'putStarted');
    const ended = vi.spyOn(Writer.prototype, 'putEnded');
    try {
      await store.put(textBytes(3000, 1));
      expect(started.mock.calls.map((c) => c[0] ?? false)).toEqual([false]);
      started.mockClear();
      const dir = tempDir();
      const files = [1_000, 2_000, 3 << 20].map((size, i) => {
        const path = join(dir, `f${i}.txt`);
        writeFileSync(path, textBytes(size, 10 + i));
        return { path };
      });
      for await (const o of store.putFiles(files)) expect(o.error).toBeUndefined();
      expect(started.mock.calls.length).toBe(files.length);
      expect(started.mock.calls.every((c) => c[0] === true)).toBe(true);
      // Every start is ended as it began (the writer's count of bulk puts returns to zero).
      const sum = (calls: unknown[][]) => calls.reduce((n, c) => n + (c[0] === true ? 1 : 0), 0);
      expect(sum(ended.mock.calls)).toBe(sum(started.mock.calls));
    } finally {
      started.mockRestore();
      ended.mockRestore();
    }
  });
});
