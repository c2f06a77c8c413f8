/**
 * A writer killed at every step of the commit protocol (issue 20): each named crash point
 * (src/crash-points.ts: a pack created, a record appended, a frame appended, a segment started,
 * a commit applied, a batch ending, a pack sealing, GC's condemnation, moved records, a removed
 * pack, a checkpoint written) makes a writer process SIGKILL itself there — the n-th time it
 * gets there, so the store has history around it. Twice per point: once alone (the next open
 * recovers), once beside a second writer that goes on writing (its next commit recovers, under
 * the write lock). Afterwards every acknowledged put reads back with its bytes, every
 * acknowledged delete stayed, every acknowledged metadata batch shows, verify is clean, the log
 * is one unbroken chain, and a database rebuilt from the log equals the one the writers made.
 *
 * KURA_CRASH_POINT_ROUNDS=N runs N rounds per point (default 2: alone, then beside another).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitsAfter, emptyHead } from '../src/catalog/commits.js';
import { CRASH_POINTS, OBJECT_STORE_ONLY, type CrashPoint } from '../src/crash-points.js';
import { FsLogStore } from '../src/node/fs-log.js';
import { Store } from '../src/node/index.js';
import { canonicalDump } from './helpers/dump.js';
import { tempDir } from './helpers/store.js';
import { Ledger, awaitCrash, checkLedgers, expectSameDump, startChild } from './helpers/crash-children.js';
import { recordReliability } from './helpers/reliability.js';

const ROUNDS = Number(process.env.KURA_CRASH_POINT_ROUNDS ?? 2);

/** Which time the point is reached: late enough for history around it, early enough to be quick. */
const NTH: Record<Exclude<CrashPoint, (typeof OBJECT_STORE_ONLY)[number]>, number> = {
  'pack-created': 4,
  'record-appended': 30,
  'frame-appended': 25,
  'segment-started': 1,
  committed: 12,
  'batch-ending': 6,
  'pack-sealing': 5,
  condemned: 2,
  'records-moved': 1,
  'pack-removed': 2,
  'checkpoint-written': 1,
};

async function check(dir: string, ledgers: Ledger[], what: string): Promise<void> {
  const s = await Store.open(dir);
  try {
    await checkLedgers(s, ledgers, what);
  } finally {
    await s.close();
  }
}

describe('a writer killed at each step of the commit protocol', () => {
  for (const point of CRASH_POINTS.filter((p) => !(OBJECT_STORE_ONLY as readonly string[]).includes(p)) as (keyof typeof NTH)[]) {
    it(`${point}: nothing acknowledged is lost, alone and beside another writer (${ROUNDS} rounds)`, { timeout: 300_000 }, async () => {
      const root = tempDir();
      const dir = join(root, 'store');
      await (await Store.init(dir, { chunking: { avg: 4096 }, compression: false })).close();
      const crashed = new Ledger();
      const other = new Ledger();
      other.next = 10_000_000;
      for (let round = 0; round < ROUNDS; round++) {
        const beside = round % 2 === 1;
        const a = startChild(dir, crashed.next, join(root, `journal-a-${round}`), `${point}:${NTH[point] + round}`);
        const b = beside ? startChild(dir, other.next, join(root, `journal-b-${round}`)) : undefined;
        await awaitCrash({ a, b, point, n: round }, crashed, other);
        await check(dir, [crashed, other], `after a crash at ${point}, round ${round}`);
      }
      expect(crashed.acks).toBeGreaterThan(0);

      const { commits } = await commitsAfter(new FsLogStore(dir), emptyHead());
      expect(commits.map((c) => c.frame.seq)).toEqual(commits.map((_, i) => i + 1));
      const made = canonicalDump(join(dir, 'kura.db'));
      for (const f of ['kura.db', 'kura.db-wal', 'kura.db-shm']) rmSync(join(dir, f), { force: true });
      await Store.rebuild(dir);
      expectSameDump(canonicalDump(join(dir, 'kura.db')), made);

      recordReliability(`crash-point-${point}`, `a writer killed at ${point}`, {
        rounds: ROUNDS,
        'writer processes killed': ROUNDS + Math.floor(ROUNDS / 2),
        commits: commits.length,
        'acknowledged puts': crashed.acks + other.acks,
        'acknowledged deletes': crashed.gone.size + other.gone.size,
        'acknowledged documents lost or wrong': 0,
        'rebuilt database differs': 0,
      });
    });
  }
});
