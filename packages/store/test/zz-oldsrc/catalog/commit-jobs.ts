/**
 * A commit's jobs (FORMAT.md §15.2, decision 0047): the one rule every replay and the writer
 * that made the commit follow to decide what it changes.
 *
 * A commit whose body lists `jobs` (the number of operations of each, in order) was published
 * on an object store without being tried first: each job applies all or nothing, and one that
 * a refusal stops — an error its operations raise from the state they meet (a path not found,
 * a chunk GC reclaimed meanwhile, an ambiguous digest) — changes nothing while the commit goes
 * on. Every replay meets the same state before the commit, so every
 * replay refuses the same jobs, and the writer answers each caller with its job's outcome from
 * the very same application. Any other error (the disk, SQLite, a bug) stops the replay: the
 * commit is applied later or never, never differently.
 *
 * A commit without `jobs` (every local commit, and those published before decision 0047) is
 * one job that must apply: its writer tried it before writing it, so a failure is damage.
 */
import { isKuraError, type KuraErrorCode } from '@kura/core';
import type { SqlDatabase } from '../backend/sql.js';
import type { Commit } from './commits.js';
import type { Op, OpResult } from './ops.js';
import type { Statements } from './statements.js';
import type { TargetCache } from './target-cache.js';

/** A job's results, or why it was refused. */
export type JobOutcome = OpResult[] | { failed: unknown };

/** What operations raise when the state they meet says no: the same in every replay. */
const REFUSALS: ReadonlySet<KuraErrorCode> = new Set(['NOT_FOUND', 'AMBIGUOUS', 'MISSING_CHUNKS', 'INVALID_INPUT', 'INVALID_STATE']);

export function isRefusal(e: unknown): boolean {
  return isKuraError(e) && REFUSALS.has(e.code);
}

/** The operations of each job, after checking that `jobs` divides them; undefined when the commit has no jobs. */
export function jobsOf(c: Pick<Commit, 'seq' | 'ops' | 'jobs'>): Op[][] | undefined {
  if (c.jobs === undefined) return undefined;
  const out: Op[][] = [];
  let at = 0;
  for (const n of c.jobs) {
    out.push(c.ops.slice(at, at + n));
    at += n;
  }
  return out;
}

export interface JobsContext {
  db: SqlDatabase;
  st: Statements;
  targets?: TargetCache;
}

/** Applies a commit's operations; answers each job's outcome (a commit without jobs: one, which throws rather than fail). */
export type JobsApplier = (c: Pick<Commit, 'seq' | 'ops' | 'jobs'>, apply: (op: Op) => OpResult) => JobOutcome[];

/** A job failed where jobs were applied without savepoints: the transaction goes, and runs again careful. */
class Interrupted {
  constructor(readonly cause: unknown) {}
}

/**
 * Runs `fn` in a write transaction of its own, in which it applies commits' jobs through the
 * applier it is given. First every job straight in the transaction — no savepoint, so no copy
 * of each page a job writes (decision 0049's amendment: ~26 µs of a 1 KB put's ~260 on an
 * object store). When a job of a commit with `jobs` fails — rarely: a refusal — the whole
 * transaction is rolled back, and `fn` runs again from the same state with the careful
 * applier (applyJobs: savepoints, each refused job left out), which decides as every replay
 * does. `fn` must be a function of the database and its arguments only: it runs twice then.
 */
export function inJobsTransaction<T>(ctx: JobsContext, fn: (applyJobs: JobsApplier) => T): T {
  const { db, st } = ctx;
  const mark = st.queued.mark;
  try {
    return db.transaction(() => fn(applyStraight));
  } catch (e) {
    if (!(e instanceof Interrupted)) throw e;
    // What the rollback undid: the entries it queued for the index, those it named.
    st.queued.undoTo(mark);
    ctx.targets?.clear();
  }
  return db.transaction(() => fn((c, apply) => applyJobs(ctx, c, apply)));
}

/**
 * Every job's operations in the caller's transaction, no savepoint: a failing job interrupts
 * the transaction (inJobsTransaction), or the batch the caller holds open (object-commits.ts),
 * which must then be rolled back whole.
 */
export const applyStraight: JobsApplier = (c, apply) => {
  const jobs = jobsOf(c);
  if (jobs === undefined) return [c.ops.map(apply)];
  try {
    return jobs.map((job) => job.map(apply));
  } catch (e) {
    throw new Interrupted(e);
  }
};

/**
 * Applies a commit's operations inside the caller's transaction, each job all or nothing;
 * answers each job's outcome (a commit without jobs: one, which throws rather than fail).
 */
export function applyJobs(ctx: JobsContext, c: Pick<Commit, 'seq' | 'ops' | 'jobs'>, apply: (op: Op) => OpResult): JobOutcome[] {
  const jobs = jobsOf(c);
  if (jobs === undefined) return [c.ops.map(apply)];
  const { db, st } = ctx;
  // Every job at once in one savepoint first: when none fails, that is what a savepoint per
  // job would have made, for one savepoint instead of one a job (each copies the pages it
  // writes: decision 0049). When one fails, all of it is undone and the jobs go one by one,
  // each in its own savepoint, from the same state.
  const mark = st.queued.mark;
  try {
    return db.transaction(() => jobs.map((job) => job.map(apply)));
  } catch {
    st.queued.undoTo(mark);
    ctx.targets?.clear();
  }
  return jobs.map((job) => {
    const mark = st.queued.mark;
    try {
      return db.transaction(() => job.map(apply));
    } catch (e) {
      if (!isRefusal(e)) throw e;
      // What the savepoint undid: the entries it queued for the index, those it named.
      st.queued.undoTo(mark);
      ctx.targets?.clear();
      return { failed: e };
    }
  });
}
