/**
 * A server's own commits on an object store, applied to its cache's database once created
 * (decision 0040) — in one write transaction kept open across them, a batch (decision 0028's
 * amendment of 2026-11-27), where the database has batches: one COMMIT for many commits
 * instead of one each. Nobody else writes a cache's database, and its head lags the log only
 * until the batch ends; a crash inside a batch costs the re-reading of its commits from the log.
 */
import type { LogHead } from './commits.js';
import { writeHead } from './commits.js';
import { CommitBatches } from './commit-batch.js';
import { applyStraight, inJobsTransaction, type JobOutcome } from './commit-jobs.js';
import type { Op } from './ops.js';
import type { PublishHost } from './object-commits.js';

/**
 * How long a batch of a server's own commits stays open at most. Each commit waits for its
 * create, several milliseconds, so LONE_BATCH_MS (8) would end every batch after one commit.
 */
export const OBJECT_BATCH_MS = 100;

/** A commit as it is applied: its seq, operations and the number of operations of each job. */
interface OwnCommit {
  seq: number;
  ops: Op[];
  jobs: number[];
}

export class OwnCommits {
  readonly #batches: CommitBatches | undefined;
  /** The open batch's commits, and the head before it: what a rollback of the batch undoes. */
  #batched: { base: LogHead; commits: { c: OwnCommit; time: number; at: LogHead }[] } | undefined;

  constructor(private readonly host: Pick<PublishHost, 'db' | 'st' | 'ctx' | 'head' | 'setHead' | 'apply' | 'coming'>) {
    const { db, st, ctx } = host;
    this.#batches = db.batch
      ? new CommitBatches({
          db,
          st,
          head: () => host.head(),
          coming: () => host.coming(),
          catchUp: () => undefined, // (nobody else writes the cache's database)
          rolledBack: () => {
            st.queued.undoTo(0);
            ctx.targets?.clear();
            // The database's head is the one before the batch again (the log has its commits).
            const batched = this.#batched;
            this.#batched = undefined;
            if (batched) host.setHead(batched.base);
          },
          loneMs: OBJECT_BATCH_MS,
        })
      : undefined;
  }

  /**
   * Applies this server's commit, just created: straight in the open batch, or in a
   * transaction of its own where there are no batches. A job that fails in the batch —
   * rarely: a refusal — rolls the batch back whole; its earlier commits are applied again in a
   * transaction of their own, and this one as where there are no batches, each job decided as
   * every replay decides it (commit-jobs.ts).
   */
  apply(c: OwnCommit, time: number, at: LogHead): JobOutcome[] {
    const { db, st, ctx } = this.host;
    const batches = this.#batches;
    if (batches && (batches.open || !db.inTransaction())) {
      if (!batches.open) {
        batches.begin(db.batch!);
        this.#batched = { base: this.host.head(), commits: [] };
      }
      try {
        const outcomes = applyStraight(c, (op) => this.host.apply(op, time, at));
        this.#batched!.commits.push({ c, time, at });
        this.host.setHead(at);
        batches.committed();
        return outcomes;
      } catch {
        const earlier = this.#batched?.commits ?? [];
        batches.abort(); // (the head goes back to the batch's base: rolledBack)
        if (earlier.length) {
          const last = earlier.at(-1)!.at;
          inJobsTransaction({ db, st, targets: ctx.targets }, (applyJobs) => {
            for (const b of earlier) applyJobs(b.c, (op) => this.host.apply(op, b.time, b.at));
            st.queued.flush();
            writeHead(st, last);
          });
          this.host.setHead(last);
        }
      }
    }
    const applied = inJobsTransaction({ db, st, targets: ctx.targets }, (applyJobs) => {
      const outcomes = applyJobs(c, (op) => this.host.apply(op, time, at));
      st.queued.flush();
      writeHead(st, at);
      return outcomes;
    });
    this.host.setHead(at);
    return applied;
  }

  /** Ends the open batch: its commits reach the cache's database file. */
  endBatch(): void {
    this.#batches?.end();
  }

  /** The writer has nothing on its way any more: the open batch may end. */
  nothingComing(): void {
    this.#batches?.nothingComing();
  }
}
