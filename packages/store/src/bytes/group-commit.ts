/**
 * Group commit (decision 0006, FORMAT.md §8): commits that arrive while one is being made share
 * the next — one transaction and one log commit locally, one published commit object on an
 * object store (decision 0040) — and a failing one fails alone.
 */
import type { SqlDatabase } from '../backend/sql.js';
import type { CommitLog } from '../catalog/commit-log.js';
import type { Op, OpResult } from '../catalog/ops.js';
import type { Durability } from '../options.js';
import { nextTurn } from '../breather.js';

/** A commit waiting for the next group commit: its operations and who awaits their results. */
interface Job {
  ops: readonly Op[];
  resolve: (results: OpResult[]) => void;
  reject: (e: unknown) => void;
}

type Outcome = OpResult[] | { failed: unknown };

/** What the writer lends the group commit (bytes/writer.ts). */
export interface GroupCommitHost {
  log: CommitLog;
  db: SqlDatabase;
  durability(): Durability;
  /** Makes every appended record durable (durability 'full'). */
  syncAppends(): Promise<void>;
  /** Hands records gathered in memory to the platform before rows point at them (§8); a failure gives the pack up. */
  drain(): void;
  /** Why `ops` cannot commit (they name a pack given up after a failed write), if so. */
  refusal(ops: readonly Op[]): unknown;
  /** The open pack's `pack-size` operation, recorded once per local commit. */
  openPackSize(): Op[];
  /** On an object store: uploads the packs the commit needs and answers their operations. */
  uploadForCommit(): Promise<Op[]>;
  /** Operations of `uploadForCommit` that did not reach the log: the next commit carries them. */
  giveBack(ops: Op[]): void;
  /** Whether a put is in progress. */
  busy(): boolean;
  /** Puts in progress, those whose commit is queued included. */
  activePuts(): number;
  /** Whether every put in progress is a source of a bulk stream (putMany): its commits gather longer. */
  bulkOnly(): boolean;
  /** Bytes in the open pack (on an object store: what the next commit uploads). */
  openBytes(): number;
}

/**
 * On an object store a commit costs two requests or more (its packs, its log object): the
 * group commit waits for puts still on their way (ingesting) to queue theirs too — at most
 * GATHER_MS, and no longer once a pack's worth (GATHER_BYTES) waits to be uploaded. A bulk
 * ingest then commits every pack instead of every file (64 MiB of 4 MiB files: 21 PUTs
 * before); a lone put never waits, and puts that all reach their commit at once neither.
 */
export const GATHER_MS = 200;
export const GATHER_BYTES = 64 * 1024 * 1024;
/**
 * ... and GATHER_BULK_MS while every put in progress is a source of a bulk stream (putMany:
 * putFiles, a snapshot), whose caller reads outcomes as they come and waits for none of them
 * alone. 512 MiB of text to MinIO took 38 requests at GATHER_MS, restic 24 (its packs are
 * 16 MiB; a commit of Kura's ~8 MiB); 256 MiB took 22-24 at 200 ms and 14-15 at 1,000, at the
 * same speed and CPU (three rounds each, alternated). putMany's window bounds the wait: once
 * every source in flight has queued its commit, the commit is made.
 */
export const GATHER_BULK_MS = 1000;

export class GroupCommit {
  readonly #queue: Job[] = [];
  #flushing = false;
  #scheduled = false;
  /** Wakes a gathering flush (#gather) when a commit arrives or a put ends. */
  #wake: (() => void) | undefined;

  constructor(private readonly host: GroupCommitHost) {}

  /** Whether commits are queued or being made. */
  get committing(): boolean {
    return this.#scheduled || this.#flushing || this.#queue.length > 0;
  }

  commit(ops: readonly Op[]): Promise<OpResult[]> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ ops, resolve, reject });
      this.#wake?.();
      if (this.#flushing || this.#scheduled) return;
      // Flush a macrotask later, even when this put is alone: concurrent puts that are one
      // microtask chain behind — and, on a server, the requests read in the same event-loop
      // turn, whose puts never overlap this one — reach their commit by then and share the
      // transaction (and, in 'full', the fsync). Committing at once when alone made every
      // HTTP put its own transaction (1 KB POSTs at 16 clients: 3.2k/s against 3.7k/s).
      this.#scheduled = true;
      nextTurn(() => {
        this.#scheduled = false;
        void this.#flush();
      });
    });
  }

  /** A put ended (with or without a commit): a gathering flush looks again. */
  nudge(): void {
    this.#wake?.();
  }

  /** On an object store: waits for the puts in progress to queue their commits (GATHER_MS at most, GATHER_BULK_MS for a bulk stream's). */
  async #gather(): Promise<void> {
    const since = performance.now();
    while (this.#queue.length < this.host.activePuts() && this.host.openBytes() < GATHER_BYTES) {
      // (asked each time: a put of another caller may start or end meanwhile)
      const left = since + (this.host.bulkOnly() ? GATHER_BULK_MS : GATHER_MS) - performance.now();
      if (left <= 0) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(wake, left);
        const self = this;
        function wake() {
          clearTimeout(timer);
          self.#wake = undefined;
          resolve();
        }
        this.#wake = wake;
      });
    }
  }

  /** Resolves once nothing is queued or being committed. */
  async drained(): Promise<void> {
    while (this.committing) await new Promise((r) => setTimeout(r, 1));
  }

  async #flush(): Promise<void> {
    const { host } = this;
    this.#flushing = true;
    try {
      while (this.#queue.length > 0) {
        if (host.log.publishes) await this.#gather();
        const batch = this.#queue.splice(0);
        try {
          await host.syncAppends();
        } catch (e) {
          batch.forEach((j) => j.reject(e));
          continue;
        }
        let outcomes: Outcome[];
        const going: Job[] = [];
        const refused = new Set<Job>();
        try {
          host.drain();
          // Jobs whose records a pack given up held fail alone; the others commit.
          for (const job of batch) {
            const refusal = host.refusal(job.ops);
            if (refusal === undefined) going.push(job);
            else {
              refused.add(job);
              job.reject(refusal);
            }
          }
          if (going.length === 0) continue;
          outcomes = host.log.publishes ? await this.#publish(going) : this.#run(going);
          if (host.durability() === 'full') await host.log.sync();
        } catch (e) {
          // Every job of the batch not refused already (a drain that threw left none going).
          batch.forEach((j) => refused.has(j) || j.reject(e));
          continue;
        }
        going.forEach((j, i) => {
          const o = outcomes[i]!;
          if (Array.isArray(o)) j.resolve(o);
          else j.reject(o.failed);
        });
      }
    } finally {
      this.#flushing = false;
      if (!host.busy() && !this.committing) host.log.nothingComing();
    }
  }

  /**
   * One transaction and one log commit for the whole batch. A job that throws rolls the batch
   * back; then each job runs in a savepoint of a second transaction so only the failing ones
   * fail (rare path). The open pack's size is recorded once per batch.
   */
  #run(batch: Job[]): Outcome[] {
    const { log, db } = this.host;
    const time = Date.now();
    try {
      const results: OpResult[][] = [];
      log.transaction(time, (append, apply) => {
        for (const job of batch) results.push(job.ops.map(apply));
        const grow = this.host.openPackSize();
        grow.forEach(apply);
        append([...batch.flatMap((j) => j.ops), ...grow]);
      });
      return results;
    } catch (first) {
      if (batch.length === 1) return [{ failed: first }];
    }
    const outcomes: Outcome[] = [];
    log.transaction(time, (append, apply) => {
      const applied: Op[] = [];
      for (const job of batch) {
        try {
          outcomes.push(db.transaction(() => job.ops.map(apply)));
          applied.push(...job.ops);
        } catch (e) {
          outcomes.push({ failed: e ?? new Error('commit failed') });
        }
      }
      const grow = this.host.openPackSize();
      grow.forEach(apply);
      append([...applied, ...grow]);
    });
    return outcomes;
  }

  /** On an object store (decision 0040): the packs' operations first, then the batch's jobs, as one published commit. */
  async #publish(batch: Job[]): Promise<Outcome[]> {
    const packOps = await this.host.uploadForCommit();
    try {
      const outcomes = await this.host.log.publish(packOps.length ? [packOps, ...batch.map((j) => j.ops)] : batch.map((j) => j.ops));
      return packOps.length ? outcomes.slice(1) : outcomes;
    } catch (e) {
      this.host.giveBack(packOps);
      throw e;
    }
  }
}
