/**
 * How long a batch of commits keeps its write transaction open (catalog/commit-batch.ts,
 * decision 0028's amendments of 2026-11-27): while commits keep coming, BATCH_MS when another
 * process has the store open for writing, LONE_BATCH_MS when none has; a lone batch does not
 * end when nothing is coming, only at its cap. The batch is driven as
 * the commit log drives it — begin, a commit now and then, `committed()` after each — on a
 * recording SqlBatch, on fake timers (so a loaded machine cannot make it pass or fail), and what
 * is checked is when its COMMIT comes.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SqlBatch, SqlDatabase } from '../src/backend/sql.js';
import { BATCH_MS, CommitBatches, LONE_BATCH_MS } from '../src/catalog/commit-batch.js';
import type { Statements } from '../src/catalog/statements.js';

/** A batch whose commits keep coming every `everyMs` for `forMs`; answers when its COMMIT came (ms after it began). */
function endOf(alone: boolean | undefined, everyMs: number, forMs: number): Promise<number> {
  let began = 0;
  let committedAt: number | undefined;
  const sqlBatch: SqlBatch = {
    begin: () => void (began = performance.now()),
    commit: () => void (committedAt ??= performance.now() - began),
    rollback: () => undefined,
    ...(alone === undefined ? {} : { alone: () => alone }),
  };
  const st = { queued: { flush: () => undefined }, logHeadSet: { run: () => undefined } } as unknown as Statements;
  const batches = new CommitBatches({
    db: { batch: sqlBatch } as unknown as SqlDatabase,
    st,
    head: () => ({ seq: 1, hash: new Uint8Array(32), segment: '0', end: 0 }),
    coming: () => performance.now() - began < forMs, // a writer with puts in flight until forMs
    catchUp: () => undefined,
    rolledBack: () => undefined,
  });
  batches.begin(sqlBatch);
  for (let i = 0; batches.open && i < 1000; i++) {
    vi.advanceTimersByTime(everyMs); // (timers due meanwhile fire: the cap's, the next turn's)
    batches.committed();
  }
  return committedAt!;
}

describe('a batch of commits', () => {
  beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'performance'] }));
  afterEach(() => void vi.useRealTimers());

  it('stays open up to LONE_BATCH_MS while no other process writes, BATCH_MS while one does', async () => {
    expect(LONE_BATCH_MS).toBeGreaterThan(2 * BATCH_MS); // (else this test tells nothing)
    // A commit every 0.5 ms for 200 ms: only the cap ends the batch.
    expect(endOf(true, 0.5, 200)).toBe(LONE_BATCH_MS);
    expect(endOf(false, 0.5, 200)).toBe(BATCH_MS);
    // A database that cannot tell (no `alone`): the short cap.
    expect(endOf(undefined, 0.5, 200)).toBe(BATCH_MS);
    // Commits slower than the cap: the first commit after it ends the batch.
    expect(endOf(true, 3, 200)).toBe(LONE_BATCH_MS);
  });

  it('ends at the next turn once nothing is coming while another process writes; alone, at its cap', () => {
    // A commit every 0.5 ms, none coming in between (a server's requests one after another):
    // shared, each turn ends the batch; alone, its commits share it up to the cap.
    expect(endOf(false, 0.5, 0)).toBeLessThan(BATCH_MS);
    expect(endOf(undefined, 0.5, 0)).toBeLessThan(BATCH_MS);
    expect(endOf(true, 0.5, 0)).toBe(LONE_BATCH_MS);
    // Alone, and idle after one commit: the cap's timer ends it (its commits reach the file).
    expect(endOf(true, 100, 0)).toBe(LONE_BATCH_MS);
  });
});
