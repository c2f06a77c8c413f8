/**
 * Commits on an object store (decision 0040): each is published as an object of its own,
 * `log/<seq>`, created only if the seq is free, and applied to the database only once it is in
 * the log. One commit or refresh at a time per process (a turn); between validating a commit
 * and applying it nothing else is applied, so the rows it makes are the ones every replay
 * makes.
 */
import { CorruptDataError, InternalError } from '@kura/core';
import type { SqlDatabase } from '../backend/sql.js';
import type { Statements } from './statements.js';
import { checkFirstCommit, decodeCommit, oneCommitEach, encodeBody, writeHead, type Commit, type LogHead } from './commits.js';
import { encodeFrame, readFrames, sameHash, segmentName } from './frame.js';
import type { LogStore } from './log-store.js';
import type { ApplyContext, CommitPlace, Op, OpResult } from './ops.js';
import { createPatiently, withCarried } from './commit-object.js';
import { inJobsTransaction, type JobOutcome } from './commit-jobs.js';
import { OwnCommits } from './own-commits.js';
import { crashPoint } from '../crash-points.js';
import { TurnTaking, type WaitingMarks } from './turn-taking.js';

export type { JobOutcome };

/**
 * Operations no caller's input can make fail: a batch of only these is published untried
 * (decision 0047). A put fails only when GC reclaimed one of its chunks meanwhile, and then
 * every replay refuses it alike.
 */
const UNTRIED: ReadonlySet<Op['op']> = new Set(['put', 'pack', 'pack-size']);

/** What the commit log lends: its database, its head and how it applies one operation. */
export interface PublishHost {
  db: SqlDatabase;
  st: Statements;
  ctx: ApplyContext;
  /** (With WaitingMarks where servers take turns at the log: turn-taking.ts.) */
  store: LogStore & { segmentsAfter(name: string): Promise<string[]> } & Partial<WaitingMarks>;
  writer: string;
  head(): LogHead;
  setHead(head: LogHead): void;
  apply(op: Op, time: number, at?: CommitPlace): OpResult;
  /** Replaces the catalog with a checkpoint's, and the head with its (decision 0045). */
  rebase(checkpoint: Uint8Array, name: string): void;
  /**
   * How long knowing the log's end counts as recent for a commit's first attempt (a quarter of
   * the log's retention, decision 0045): older, the commit lists the log first.
   */
  freshMs: number;
  /** Whether this server has a commit on its way (gathering, uploading its packs or being created). */
  committing(): boolean;
  /** Whether this server's writer has puts or commits on their way (a batch waits for them). */
  coming(): boolean;
}

const ROLLED_BACK = Symbol('validated');

/**
 * Refresh polling (decision 0040): 100 ms after anything new, backing off to 750 ms while
 * nothing is — another server's commit is seen within a second (issue 21's target), for one
 * LIST every 0.75 s from an idle server.
 */
export const POLL_MIN_MS = 100;
export const POLL_MAX_MS = 750;
/**
 * A poll waits for a commit of this server's on its way at most until this long after the log's
 * end was last known: a commit stuck uploading a large pack does not hold back the others'.
 */
export const POLL_DEFER_MAX_MS = 2 * POLL_MAX_MS;

export class ObjectCommits {
  #turn: Promise<unknown> = Promise.resolve();
  /** Commits this process lost a race for and published again (for tests and benchmarks). */
  retries = 0;
  #poll: ReturnType<typeof setTimeout> | undefined;
  /**
   * Backed off at first: opening caught up, and nothing says other servers are busy (a CLI's
   * ingest listed the log every 100, 200, 400 ms while it gathered its first commit).
   */
  #pollMs = POLL_MAX_MS;
  /** The polling step (startPolling), re-armed sooner on activity. */
  #tick: (() => Promise<void>) | undefined;
  #stopped = false;
  /**
   * When this server last knew where the log ends (Date.now()): a catch-up that read it to its
   * end, or a commit it created — the create of seq n succeeds only while n is free, so the log
   * ended just before it.
   */
  #knewEndAt = -Infinity;
  readonly #turns: TurnTaking;
  /** Applies this server's own commits, in batches where the cache's database has them. */
  readonly #own: OwnCommits;

  constructor(private readonly host: PublishHost) {
    const { store } = host;
    this.#turns = new TurnTaking(host.writer, store.markWaiting && store.clearWaiting && store.othersWaiting ? (store as WaitingMarks) : undefined);
    this.#own = new OwnCommits(host);
  }

  /**
   * Refreshes by itself from now on: POLL_MIN_MS after another server's commit (seen by a poll,
   * or by losing a race for a seq), doubling to POLL_MAX_MS while nothing is. The timer never
   * keeps the process alive.
   */
  startPolling(onError: (e: unknown) => void = () => undefined): void {
    const tick = async () => {
      this.#poll = undefined;
      if (this.#stopped) return;
      // A commit this server created since is as good as a poll: no LIST while it writes (a
      // bulk ingest polled ~10 times), and no other server's commit is seen later for it.
      const since = Date.now() - this.#knewEndAt;
      if (since < this.#pollMs) return this.#arm(tick, this.#pollMs - since);
      // So is one on its way (decision 0040's amendment): its create shows where the log ends,
      // and a lost race catches up at once. A bulk ingest, committing a pack about every second,
      // listed the log between every two of its commits: a third of its requests.
      if (this.host.committing() && since < POLL_DEFER_MAX_MS) return this.#arm(tick, POLL_MIN_MS);
      try {
        const applied = await this.refresh();
        this.#pollMs = applied ? POLL_MIN_MS : Math.min(POLL_MAX_MS, this.#pollMs * 2);
      } catch (e) {
        onError(e); // (an unreachable store: tried again at the next tick)
        this.#pollMs = POLL_MAX_MS;
      }
      this.#arm(tick);
    };
    this.#tick = tick;
    this.#arm(tick);
  }

  #arm(tick: () => Promise<void>, ms = this.#pollMs): void {
    if (this.#stopped) return;
    this.#poll = setTimeout(() => void tick(), ms);
    this.#poll.unref?.();
  }

  /** Activity: the next poll comes soon again. */
  #active(): void {
    this.#pollMs = POLL_MIN_MS;
    if (this.#poll && this.#tick) {
      clearTimeout(this.#poll);
      this.#arm(this.#tick);
    }
  }

  /** Stops polling and waits for a refresh or commit in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#poll);
    await this.#turn;
    await this.#turns.settled();
    this.endBatch();
  }

  /** Ends the open batch of this server's commits: they reach the cache's database file. */
  endBatch(): void {
    this.#own.endBatch();
  }

  /** The writer has nothing on its way any more: the open batch may end. */
  nothingComing(): void {
    this.#own.nothingComing();
  }

  /**
   * Applies what other writers committed since the head; answers how many commits. The batch
   * of this server's own commits ends first: after a refresh the cache's database file holds
   * every commit this server knows.
   */
  refresh(): Promise<number> {
    return this.#inTurn(() => {
      this.endBatch();
      return this.#catchUp();
    });
  }

  /**
   * Publishes the jobs as one commit and applies it; each job's outcome is what the replay of
   * that commit decides (commit-jobs.ts). Resolves once the commit is in the log and applied.
   */
  publish(jobs: readonly (readonly Op[])[], time: number): Promise<JobOutcome[]> {
    return this.#inTurn(async () => {
      // Optimistic: the first attempt goes for the seq after the head this server knows, with
      // no listing (polling keeps the head close). Had another server taken it, the create says
      // so, and the listing comes then (a LIST less per commit: ~1 ms of 3 on loopback).
      // A server that has not known the log's end for freshMs (it was paused) lists first: the
      // seq after its head may be one the log's truncation deleted, free to create again (0045).
      let lost = 0; // the seq this publish last lost a race for
      let behind = 0; // attempts in a row that caught up to short of it
      try {
        for (let attempt = 0; ; attempt++) {
          if (attempt % 2 === 1) await this.#follow(lost);
          else if (attempt > 0 || Date.now() - this.#knewEndAt > this.host.freshMs) await this.#catchUp();
          else await this.#turns.beforeFirstAttempt(); // (several servers committing: turn-taking.ts)
          // The seq lost is in the log: caught up, the head is at it or past. Short of it, again
          // and again, what holds it is no commit that follows on — damage, not a writer to wait
          // for (a writer retried a replayed object's seq forever: a trial).
          if (lost > 0 && this.host.head().seq < lost) {
            if (++behind >= LOST_BEHIND_MAX) throw new CorruptDataError(`log object ${segmentName(lost)} exists, but no commit following on from commit ${this.host.head().seq} could be read from it: the log is damaged (kura verify)`, 'log');
            // (Backing off as a catch-up does: a storage whose reads lag its creates shows it soon.)
            await new Promise((r) => setTimeout(r, 10 * 2 ** behind));
          } else behind = 0;
          const head = this.host.head();
          const seq = head.seq + 1;
          // Jobs a caller's input may fail (a tag of a path that is not there, a snapshot to
          // remove) are tried first, in a transaction rolled back, so that a refused one does
          // not cost a commit; batches of puts are not (a third of a small put's commit).
          const tried = jobs.every((job) => job.every((op) => UNTRIED.has(op.op))) ? undefined : this.#validate(jobs, time, seq);
          const sent = tried ? jobs.filter((_, i) => Array.isArray(tried[i])) : jobs;
          if (sent.length === 0) return tried!;
          const ops = sent.flat();
          const counts = sent.map((job) => job.length);
          const { bytes, hash } = encodeFrame(seq, head.hash, encodeBody(this.host.writer, time, ops, counts), this.host.store.sealing);
          const name = segmentName(seq);
          const started = Date.now();
          const sentAt = performance.now();
          const won = await createPatiently(this.host.store, name, withCarried(bytes, ops));
          this.#turns.created(performance.now() - sentAt, won);
          if (!won) {
            this.retries++; // another writer took the seq: its commit first, then this one again
            lost = seq;
            continue;
          }
          crashPoint('published');
          this.#knewEndAt = Math.max(this.#knewEndAt, started);
          const next: LogHead = { seq, hash, segment: name, end: bytes.length };
          // (An error that is not a job's refusal rolls this back: the commit is in the log, and
          // the next refresh applies it.)
          const applied = this.#own.apply({ seq, ops, jobs: counts }, time, next);
          crashPoint('committed');
          // A lost race: other servers are writing, so the next poll comes soon. This server's
          // own commits say nothing about others (a lone writer ingesting polled 10 times a second).
          if (attempt > 0) this.#active();
          let k = 0;
          return jobs.map((_, i) => (tried && !Array.isArray(tried[i]) ? tried[i]! : applied[k++]!));
        }
      } finally {
        this.#turns.finished(); // (a mark this publish put goes, won or not)
      }
    });
  }

  /**
   * Runs every job in a savepoint of a transaction that is rolled back: which ones pass, with
   * their results. (A carried pack's offset is not known before the frame is encoded: its row
   * here, rolled back, says 0.)
   */
  #validate(jobs: readonly (readonly Op[])[], time: number, seq: number): JobOutcome[] {
    this.endBatch(); // (its rollback must not be a savepoint's inside the batch)
    const { db, st, ctx } = this.host;
    const outcomes: JobOutcome[] = [];
    const at = { seq, end: 0 };
    const mark = st.queued.mark;
    try {
      db.transaction(() => {
        for (const job of jobs) {
          try {
            outcomes.push(db.transaction(() => job.map((op) => this.host.apply(op, time, at))));
          } catch (e) {
            outcomes.push({ failed: e ?? new Error('commit failed') });
          }
        }
        throw ROLLED_BACK;
      });
    } catch (e) {
      if (e !== ROLLED_BACK) throw e;
    } finally {
      st.queued.undoTo(mark);
      ctx.targets?.clear(); // it may name entries the rollback took away
    }
    return outcomes;
  }

  /**
   * Applies the commits after the head, in order. A log object that is not one whole commit
   * yet, or a seq missing between two listed ones, is what a storage whose writes or listings
   * are not atomic shows for a moment: what comes before it is applied, then the listing is
   * read again (CATCH_UP_ATTEMPTS times, backing off); still so, it is damage (CORRUPT_DATA).
   */
  async #catchUp(): Promise<number> {
    let applied = 0;
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      let names = await this.host.store.segmentsAfter(this.host.head().segment);
      if (names.length && Number(names[0]) > this.host.head().seq + 1 && (await this.#rebase(Number(names[0])))) {
        applied++;
        names = names.filter((n) => Number(n) > this.host.head().seq);
      }
      const { count, stalled } = await this.#apply(names);
      applied += count;
      if (!stalled) break;
      if (attempt >= CATCH_UP_ATTEMPTS) throw stalled;
      await new Promise((r) => setTimeout(r, 10 * 2 ** attempt));
    }
    if (applied) {
      this.host.ctx.targets?.clear(); // other writers' commits changed what targets name
      this.#turns.othersCommitted();
    }
    this.#knewEndAt = Math.max(this.#knewEndAt, started);
    return applied;
  }

  /**
   * After losing the race for `seq`: that commit is in the log, so it is read alone, with no
   * listing (a LIST of a long log costs versitygw a scan of it) — a server that lost is a round
   * trip behind the one that won, and turn-taking.ts can even that out, but not a listing's
   * worth. Anything else than that one commit following on: a whole catch-up.
   */
  async #follow(seq: number): Promise<void> {
    if (this.host.head().seq === seq - 1) {
      let applied: { count: number; stalled?: CorruptDataError } | undefined;
      try {
        applied = await this.#apply([segmentName(seq)]);
      } catch {
        // (not readable yet where listings and reads lag: the catch-up below waits for it)
      }
      if (applied?.count === 1 && !applied.stalled) {
        this.host.ctx.targets?.clear();
        this.#turns.othersCommitted();
        return;
      }
    }
    await this.#catchUp();
  }

  /**
   * The log after the head begins at `first`, past the commit after the head: truncated there
   * (decision 0045) when a checkpoint covers the commits missing. Then the catalog starts again
   * from the newest such checkpoint; answers whether it did (else it is a gap: #apply waits).
   */
  async #rebase(first: number): Promise<boolean> {
    const { store } = this.host;
    const covering = (await store.checkpoints()).filter((n) => Number(n) >= first - 1 && Number(n) > this.host.head().seq).at(-1);
    if (covering === undefined) return false;
    this.endBatch();
    this.host.rebase(await store.readCheckpoint(covering), covering);
    return true;
  }

  /** Applies the commits `names` hold, the store's readAhead objects at a time, up to the first that does not follow on. */
  async #apply(names: readonly string[]): Promise<{ count: number; stalled?: CorruptDataError }> {
    let count = 0;
    const ahead = Math.max(1, this.host.store.readAhead ?? 1);
    for (let i = 0; i < names.length; i += ahead) {
      const batch = names.slice(i, i + ahead);
      const segments = await Promise.all(batch.map((n) => this.host.store.readSegment(n)));
      let head = this.host.head();
      const ready: { c: Commit; head: LogHead }[] = [];
      let stalled: CorruptDataError | undefined;
      scan: for (let j = 0; j < segments.length; j++) {
        const bytes = segments[j]!;
        const { frames } = readFrames(bytes);
        if (frames.length === 0) {
          stalled = new CorruptDataError(`log object ${batch[j]} holds no whole commit (${bytes.length} bytes)`, 'log');
          break;
        }
        try {
          checkFirstCommit(batch[j]!, frames[0]!.seq, this.host.store.sealing !== undefined, true);
        } catch (e) {
          stalled = e as CorruptDataError;
          break;
        }
        for (const f of frames) {
          if (f.seq <= head.seq) continue;
          if (f.seq !== head.seq + 1 || !sameHash(f.prev, head.hash)) {
            stalled = new CorruptDataError(`the log's chain breaks at commit ${f.seq} in segment ${batch[j]} (expected ${head.seq + 1})`, 'log');
            break scan;
          }
          const c = decodeCommit(f, this.host.store.sealing);
          head = { seq: c.seq, hash: c.hash, segment: batch[j]!, end: f.offset + f.length };
          ready.push({ c, head });
        }
      }
      if (ready.length) {
        const { db, st } = this.host;
        this.endBatch(); // (other servers' commits in a transaction of their own)
        inJobsTransaction({ db, st, targets: this.host.ctx.targets }, (applyJobs) => {
          for (const { c, head: at } of ready) applyJobs(c, (op) => this.host.apply(op, c.time, at));
          st.queued.flush();
          writeHead(st, head);
        });
        this.host.setHead(head);
        count += ready.length;
      }
      if (stalled) return { count, stalled };
    }
    return { count };
  }

  #inTurn<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#turn.then(fn, fn);
    this.#turn = run.catch(() => undefined);
    return run;
  }
}

/** Catch-ups in a row after a lost race that leave the head short of the seq lost before that is damage (backing off: ~2.5 s in all). */
const LOST_BEHIND_MAX = 8;
/** Listings a catch-up reads before a log object that is not whole, or a missing seq, is damage (~1.3 s in all). */
const CATCH_UP_ATTEMPTS = 7;

/** A log store that publishes commits as objects of their own (an object store's). */
export function publishes(store: LogStore): store is PublishHost['store'] {
  return oneCommitEach(store);
}

export function refuseSync(): never {
  throw new InternalError('a store on object storage commits by publishing (decision 0040): this path must await CommitLog.publish');
}
