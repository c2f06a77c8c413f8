/**
 * The crash tests' writer processes (fixtures/child.mjs, mode `crash`) and what they were told
 * (their journals): store-crash-points.test.ts on a directory, store-s3-crash-points.test.ts on
 * a bucket.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { Store } from '../../src/node/index.js';
// @ts-expect-error plain JS fixture shared with the child process
import { docBytes } from '../fixtures/docgen.mjs';
import { expectSameBytes } from './store.js';

const CHILD = fileURLToPath(new URL('../fixtures/child.mjs', import.meta.url));
const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

export interface Child {
  journal: string;
  /** How it ended: 'SIGKILL', or an error (it ended by itself: its stderr). */
  ended: Promise<string>;
  kill(): void;
}

/** A `crash` child (fixtures/child.mjs) writing `dir` from document `first`, dying at `crashAt` when given. */
export function startChild(dir: string, first: number, journal: string, crashAt?: string, extraEnv: Record<string, string> = {}): Child {
  const env = { ...process.env, ...extraEnv };
  if (crashAt) env.KURA_CRASH_AT = crashAt;
  else delete env.KURA_CRASH_AT;
  const child = spawn(process.execPath, [CHILD, 'crash', dir, String(first), journal], { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const ended = new Promise<string>((resolve) => child.once('close', (code, signal) => resolve(signal === 'SIGKILL' ? 'SIGKILL' : `ended by itself (${code ?? signal}): ${stderr}`)));
  return { journal, ended, kill: () => child.kill('SIGKILL') };
}

export const told = (journal: string) => (existsSync(journal) ? readFileSync(journal, 'utf8').split('\n').slice(0, -1) : []);

/** What the writers were told: acknowledged puts, deletes and metadata. */
export class Ledger {
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
        this.next = Math.max(this.next, Number(a) + 3); // (+1, +2: the put or pair of puts in flight may have committed)
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

/** Checks an open store against what the writers were told: verify clean, every acknowledged put and metadata batch there, every acknowledged delete gone. */
export async function checkLedgers(s: Store, ledgers: Ledger[], what: string): Promise<void> {
  {
    const report = await s.verify(undefined, { readData: true });
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
  }
}

/** Equal dumps; else the first lines that differ, not two whole dumps. */
export function expectSameDump(rebuilt: string, made: string): void {
  if (rebuilt === made) return;
  const a = rebuilt.split('\n');
  const b = made.split('\n');
  const at = a.findIndex((l, i) => l !== b[i]);
  expect(a.slice(Math.max(0, at - 2), at + 3).join('\n'), 'the rebuilt database (left) against the one the writers made').toBe(b.slice(Math.max(0, at - 2), at + 3).join('\n'));
}

/** A writer that has not reached its crash point by then never will: the test fails. */
export const REACH_MS = 60_000;

/**
 * Waits for `a` to kill itself at `point`; meanwhile `b` (beside it, when given) goes on, and is
 * killed once it has written a few more steps (its next commits take over from the dead one's).
 * Then both ledgers read what their writer was told.
 */
export async function awaitCrash(round: { a: Child; b: Child | undefined; point: string; n: number }, crashed: Ledger, other: Ledger): Promise<void> {
  const { a, b, point, n } = round;
  let late = false;
  const timer = setTimeout(() => ((late = true), a.kill()), REACH_MS);
  const end = await a.ended;
  clearTimeout(timer);
  expect(end, `round ${n}: the writer must die at ${point}`).toBe('SIGKILL');
  expect(late, `round ${n}: the writer never reached ${point} in ${REACH_MS} ms`).toBe(false);
  if (b) {
    const seen = told(b.journal).length;
    for (let t = 0; t < 100 && told(b.journal).length < seen + 4; t++) await new Promise((r) => setTimeout(r, 50));
    b.kill();
    expect(await b.ended, `round ${n}: the other writer`).toBe('SIGKILL');
    other.read(b.journal);
  }
  crashed.read(a.journal);
}
