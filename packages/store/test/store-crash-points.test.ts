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
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { commitsAfter, emptyHead } from '../src/catalog/commits.js';
import { CRASH_POINTS, type CrashPoint } from '../src/crash-points.js';
import { FsLogStore } from '../src/node/fs-log.js';
import { Store } from '../src/node/index.js';
// @ts-expect-error plain JS fixture shared with the child process
import { docBytes } from './fixtures/docgen.mjs';
import { canonicalDump } from './helpers/dump.js';
import { expectSameBytes, tempDir } from './helpers/store.js';
import { recordReliability } from './helpers/reliability.js';

const CHILD = fileURLToPath(new URL('./fixtures/child.mjs', import.meta.url));
const ROUNDS = Number(process.env.KURA_CRASH_POINT_ROUNDS ?? 2);
/** A writer that has not reached its point by then never will: the test fails. */
const REACH_MS = 60_000;
const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** Which time the point is reached: late enough for history around it, early enough to be quick. */
const NTH: Record<CrashPoint, number> = {
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

interface Child {
  journal: string;
  /** How it ended: 'SIGKILL', or an error (it ended by itself: its stderr). */
  ended: Promise<string>;
  kill(): void;
}

function startChild(dir: string, first: number, journal: string, crashAt?: string): Child {
  const env = { ...process.env };
  if (crashAt) env.KURA_CRASH_AT = crashAt;
  else delete env.KURA_CRASH_AT;
  const child = spawn(process.execPath, [CHILD, 'crash', dir, String(first), journal], { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const ended = new Promise<string>((resolve) => child.once('close', (code, signal) => resolve(signal === 'SIGKILL' ? 'SIGKILL' : `ended by itself (${code ?? signal}): ${stderr}`)));
  return { journal, ended, kill: () => child.kill('SIGKILL') };
}

const told = (journal: string) => (existsSync(journal) ? readFileSync(journal, 'utf8').split('\n').slice(0, -1) : []);

/** What the writers were told: acknowledged puts, deletes and metadata. */
class Ledger {
  live = new Map<number, string>();
  gone = new Set<number>();
  /** The last acknowledged metadata value per document (a later one, in flight, may show). */
  meta = new Map<number, number>();
  acks = 0;
  next = 0;

  read(journal: string): void {
    const inFlight = new Set<number>();
    for (const l of told(journal)) {
      const [what, a, b] = l.split(' ');
      if (what === 'ack') {
        this.live.set(Number(a), b!);
        this.acks++;
        this.next = Math.max(this.next, Number(a) + 2); // (+1: the put in flight may have committed)
      } else if (what === 'deleting') inFlight.add(Number(a));
      else if (what === 'deleted') {
        inFlight.delete(Number(a));
        this.live.delete(Number(a));
        this.gone.add(Number(a));
      } else if (what === 'meta') for (const n of a!.split(',')) this.meta.set(Number(n), Number(b));
    }
    // A delete the kill cut off happened or not: either is right, so it is left out of the checks.
    for (const n of inFlight) {
      this.live.delete(n);
      this.meta.delete(n);
    }
  }
}

async function check(dir: string, ledgers: Ledger[], what: string): Promise<void> {
  const s = await Store.open(dir);
  try {
    const report = await s.verify();
    expect(report.damagedChunks, what).toEqual([]);
    expect(report.ok, what).toBe(true);
    for (const l of ledgers) {
      for (const [n, digest] of l.live) {
        expectSameBytes(await s.getBytes(digest), docBytes(n), `doc ${n} ${what}`);
        const v = l.meta.get(n);
        if (v !== undefined) expect(Number((await s.stat(`doc-${n}`)).meta.v), `doc ${n}'s metadata ${what}`).toBeGreaterThanOrEqual(v);
      }
      for (const n of l.gone) expect(await s.has(sha(docBytes(n))), `deleted doc ${n} ${what}`).toBe(false);
    }
  } finally {
    await s.close();
  }
}

/** Equal dumps; else the first lines that differ, not two whole dumps. */
function expectSameDump(rebuilt: string, made: string): void {
  if (rebuilt === made) return;
  const a = rebuilt.split('\n');
  const b = made.split('\n');
  const at = a.findIndex((l, i) => l !== b[i]);
  expect(a.slice(Math.max(0, at - 2), at + 3).join('\n'), 'the rebuilt database (left) against the one the writers made').toBe(b.slice(Math.max(0, at - 2), at + 3).join('\n'));
}

describe('a writer killed at each step of the commit protocol', () => {
  for (const point of CRASH_POINTS) {
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
        let late = false;
        const timer = setTimeout(() => ((late = true), a.kill()), REACH_MS);
        const end = await a.ended;
        clearTimeout(timer);
        expect(end, `round ${round}: the writer must die at ${point}`).toBe('SIGKILL');
        expect(late, `round ${round}: the writer never reached ${point} in ${REACH_MS} ms`).toBe(false);
        if (b) {
          // The other writer goes on: its next commits take over from the dead one's.
          const seen = told(b.journal).length;
          for (let t = 0; t < 100 && told(b.journal).length < seen + 4; t++) await new Promise((r) => setTimeout(r, 50));
          b.kill();
          expect(await b.ended, `round ${round}: the other writer`).toBe('SIGKILL');
          other.read(b.journal);
        }
        crashed.read(a.journal);
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
