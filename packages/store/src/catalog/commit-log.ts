/**
 * The commit log (FORMAT.md §15, decision 0026): every change to the catalog is a commit — a
 * batch of operations — applied to the database and appended to the open log segment in one
 * database transaction. The database records the position it has applied (`log_state`); a
 * commit the log holds and the database lacks (a crash between the append and COMMIT) is
 * applied at the next open, and a database can be rebuilt from the log alone (rebuild.ts).
 */
import { CorruptDataError, InternalError } from '@kura/core';
import type { SqlDatabase } from '../backend/sql.js';
import type { Statements } from './statements.js';
import { commitsAfter, decodeCommit, emptyHead, encodeBody, newWriterId, readHead, writeHead, type LoggedFrame, type LogHead } from './commits.js';
import { encodeFrame, readFrames, sameHash, segmentName } from './frame.js';
import { isNotFound } from '../objects/object-store.js';
import { SEGMENT_LIMIT, appendFrame, type AppendedFrame } from './frame-append.js';
import type { LogStore, SegmentAppender, SharedSegments } from './log-store.js';
import { applyContext, applyOp, type ApplyContext, type CommitPlace, type Op, type OpResult } from './ops.js';
import { CheckpointSchedule } from './checkpoint-schedule.js';
import { crashPoint } from '../crash-points.js';
import { TargetCache } from './target-cache.js';
import { ObjectCommits, publishes, refuseSync, type JobOutcome } from './object-commits.js';
import { applyJobs } from './commit-jobs.js';
import { catchUpShared, countAfter } from './shared-catch-up.js';
import { CommitBatches } from './commit-batch.js';
import { rebaseCatalog } from './open.js';
import { DEFAULT_LOG_RETENTION_MS } from './log-truncate.js';

export class CommitLog {
  readonly #db: SqlDatabase;
  readonly #st: Statements;
  readonly #store: LogStore;
  readonly #ctx: ApplyContext;
  /** Chosen per open: which writer made a commit (a lost acknowledgement compares it, issue 21). */
  readonly #writer: string;
  #head: LogHead;
  #appender: SegmentAppender | undefined;
  #rotating: Promise<void> | undefined;
  /** Commits sharing one database transaction (commit-batch.ts; shared segments only). */
  readonly #batches: CommitBatches;
  readonly #checkpoints: CheckpointSchedule;
  /** Whether this writer has commits on their way (attach): a batch waits for them. */
  #coming: () => boolean = () => false;
  /** Whether its group commit has commits queued or being made (attach): a poll waits for them. */
  #committing: () => boolean = () => false;
  /** Told when the catalog was replaced by a checkpoint's (decision 0045). */
  #rebased: () => void = () => undefined;
  /** On an object store: commits are published before they are applied (decision 0040). */
  readonly #objects: ObjectCommits | undefined;

  private constructor(db: SqlDatabase, st: Statements, store: LogStore, head: LogHead, writer = newWriterId(), retentionMs = DEFAULT_LOG_RETENTION_MS) {
    this.#db = db;
    this.#st = st;
    this.#store = store;
    this.#ctx = applyContext(db, st, new TargetCache());
    this.#head = head;
    this.#writer = writer;
    this.#checkpoints = new CheckpointSchedule({ db, st, store, headSeq: () => this.#head.seq, endBatch: () => this.endBatch() });
    this.#batches = new CommitBatches({
      db,
      st,
      head: () => this.#head,
      coming: () => this.#coming(),
      catchUp: () => this.#catchUpLocked(store.shared!),
      rolledBack: () => this.#rolledBack(0),
    });
    if (publishes(store)) {
      this.#objects = new ObjectCommits({
        db,
        st,
        ctx: this.#ctx,
        store,
        writer: this.#writer,
        head: () => this.#head,
        setHead: (h) => (this.#head = h),
        apply: (op, time, at) => this.#apply(op, time, at),
        rebase: (bytes, name) => {
          this.#head = rebaseCatalog(db, st, bytes, name);
          this.#ctx.targets?.clear();
          this.#rebased();
        },
        freshMs: retentionMs / 4,
        committing: () => this.#committing(),
        coming: () => this.#coming() || this.#committing(),
      });
    }
  }

  /**
   * Opens the log of a database whose `log_state` is set, for a writer: applies the commits the
   * log holds beyond the database (a writer that crashed between its append and COMMIT), cuts
   * a torn tail and opens the newest segment for appends. With shared segments (several
   * writers) all of it happens under the database's write lock, as at every commit.
   */
  static async open(db: SqlDatabase, st: Statements, store: LogStore, writer?: string, retentionMs?: number): Promise<CommitLog> {
    const head = readHead(st);
    if (!head) throw new InternalError('the database has no log position');
    const log = new CommitLog(db, st, store, head, writer, retentionMs);
    await log.#checkpoints.load();
    if (log.#objects) {
      // One object per commit, never appended to: the head's own first, then a listing after
      // it, then polling.
      await headHeld(store, head);
      await log.#objects.refresh();
      log.#objects.startPolling();
      return log;
    }
    if (head.segment && !(await store.segments()).includes(head.segment)) {
      throw new CorruptDataError(`the database has applied commit ${head.seq}, but the log has no segment ${head.segment}: the log lost commits the database holds: restore the log from a copy of the store, or copy the store and run a forced rebuild (kura rebuild --force; in a browser, BrowserStore.rebuild(name, { force: true })) (those commits are then lost)`, 'log-behind');
    }
    if (store.shared) {
      const shared = store.shared;
      log.#write(() => log.#catchUpLocked(shared));
      return log;
    }
    const { commits, last } = await commitsAfter(store, head);
    log.#catchUp(commits);
    if (last && last.end < last.size) {
      // A torn append at the tail: never a commit (its transaction never committed).
      const a = await store.openAppend(last.segment);
      a.truncate(last.end);
      await a.close();
    }
    if (last) log.#appender = await store.openAppend(last.segment);
    else await log.#startSegment();
    return log;
  }

  /** A read-only store's: it never commits (the head is read when there is one). */
  static reader(db: SqlDatabase, st: Statements, store: LogStore): CommitLog {
    let head: LogHead | undefined;
    try {
      head = readHead(st);
    } catch {
      // A database from before the log, opened read-only: it is converted by its next writer.
    }
    return new CommitLog(db, st, store, head ?? emptyHead());
  }

  get head(): LogHead {
    return this.#head;
  }

  /**
   * A read-only store's look at the log: the seq the database has applied, and that of the
   * last intact commit the log holds after it (stranded by a writer that died inside a batch,
   * or about to be committed by a live one). Only where segments are shared (local
   * directories); elsewhere the two are equal.
   */
  unapplied(): { applied: number; logged: number } {
    const head = this.#db.read(() => readHead(this.#st));
    const shared = this.#store.shared;
    const applied = head?.seq ?? 0;
    return { applied, logged: applied + (shared && head ? countAfter(shared, head) : 0) };
  }

  get writer(): string {
    return this.#writer;
  }

  /** Applies commits the log holds beyond the database, each in its own transaction (one writer). */
  #catchUp(commits: LoggedFrame[]): void {
    for (const { frame, segment } of commits) {
      const c = decodeCommit(frame, this.#store.sealing);
      const next = { seq: c.seq, hash: c.hash, segment, end: frame.offset + frame.length };
      this.#write(() => {
        applyJobs({ db: this.#db, st: this.#st, targets: this.#ctx.targets }, c, (op) => this.#apply(op, c.time, next));
        writeHead(this.#st, next);
      });
      this.#head = next;
    }
  }

  /** Inside the write transaction, with shared segments: catches up with other writers (shared-catch-up.ts). */
  #catchUpLocked(shared: SharedSegments): void {
    const stored = readHead(this.#st)!;
    // Another writer committed since this one's last commit: what it changed is not in the cache.
    if (stored.seq !== this.#head.seq || !sameHash(stored.hash, this.#head.hash)) this.#ctx.targets?.clear();
    this.#head = catchUpShared(this.#st, shared, stored, {
      appender: () => this.#appender,
      switchTo: (a) => this.#switchTo(a),
      apply: (op, time) => this.#apply(op, time),
      db: this.#db,
      targets: this.#ctx.targets,
    });
  }

  /**
   * applyOp with this writer's context. A failed operation's savepoint is rolled back: the
   * target cache may name what it undid (an entry a put of the same savepoint made), so it goes.
   */
  #apply(op: Op, time: number, at?: CommitPlace): OpResult {
    try {
      return applyOp(this.#ctx, op, time, at);
    } catch (e) {
      this.#ctx.targets?.clear();
      throw e;
    }
  }

  /**
   * A write transaction of its own that applies operations (commits in a batch run in the
   * batch's transaction instead): the entries they queue for the index are written as rows
   * before it commits; a rollback drops them.
   */
  #write(fn: () => void): void {
    const queued = this.#st.queued;
    const mark = queued.mark;
    try {
      this.#db.transaction(() => {
        fn();
        if (!this.#batches.open) queued.flush();
      });
    } catch (e) {
      this.#rolledBack(mark);
      throw e;
    }
  }

  /**
   * A commit failed inside a batch (decision 0049): the batch's transaction is rolled back
   * whole — the commits before it in the batch with it, although they are in the log and
   * acknowledged — and then, before anything else runs on this thread, a transaction of its
   * own applies them again from the log, as after a crash inside a batch. A savepoint per
   * commit spared this rare path and cost every commit two statements and a copy of each page
   * it wrote (SQLite's sub-journal).
   */
  #recoverBatch(shared: SharedSegments): void {
    this.#batches.abort();
    this.#write(() => this.#catchUpLocked(shared));
  }

  /** What a rollback undid is forgotten: what it queued for the index, the entries it named. */
  #rolledBack(queuedMark: number): void {
    this.#st.queued.undoTo(queuedMark);
    this.#ctx.targets?.clear();
  }

  #switchTo(appender: SegmentAppender): void {
    void this.#appender?.close();
    this.#appender = appender;
  }

  /** Starts a new segment named for the next commit (one writer; retried if a commit lands meanwhile). */
  async #startSegment(): Promise<void> {
    for (;;) {
      const name = segmentName(this.#head.seq + 1);
      await this.#store.createSegment(name, new Uint8Array(0)); // false: it exists (empty, or ours from before)
      if (segmentName(this.#head.seq + 1) !== name) continue; // a commit went to the old segment meanwhile
      const next = await this.#store.openAppend(name);
      const old = this.#appender;
      this.#appender = next;
      await old?.close();
      return;
    }
  }

  /**
   * Applies `ops` and appends them as one commit, in one transaction: all or nothing. Must not
   * run inside another transaction (its rollback would leave the commit in the log).
   */
  commit(ops: readonly Op[], time = Date.now()): OpResult[] {
    if (ops.length === 0) return [];
    if (this.#objects) refuseSync();
    let results: OpResult[] = [];
    this.transaction(time, (append) => {
      results = ops.map((op) => this.#apply(op, time));
      append(ops);
    });
    return results;
  }

  /**
   * Runs `fn` in a write transaction in which it applies operations (`apply`) and appends what
   * it applied as one commit (`append`, at most once; not at all when nothing changed). With
   * shared segments the transaction first catches up with other writers' commits. When the
   * transaction fails, the appended frame is cut off again before the error is thrown.
   */
  transaction(
    time: number,
    fn: (append: (ops: readonly Op[]) => void, apply: (op: Op) => OpResult) => void,
    /** False: a transaction of its own even where batches exist (readApplied: its catch-up must be committed when it returns). */
    batched = true,
  ): void {
    if (this.#objects) refuseSync();
    const shared = this.#store.shared;
    if (!batched) this.endBatch();
    if (this.#db.inTransaction() && !this.#batches.open) throw new InternalError('a commit must be its own transaction');
    if (batched && shared && this.#db.batch && !this.#batches.open) this.#batches.begin(this.#db.batch);
    let appended: AppendedFrame | undefined;
    const append = (ops: readonly Op[]) => {
      if (ops.length === 0) return;
      if (appended) throw new InternalError('one commit per transaction');
      if (!this.#appender) throw new InternalError('the log is not open for writing');
      const seq = this.#head.seq + 1;
      const { bytes, hash } = encodeFrame(seq, this.#head.hash, encodeBody(this.#writer, time, ops), this.#store.sealing);
      appended = appendFrame(this.#appender, shared, seq, hash, bytes);
      // In a batch, the head is written once, when it ends (endBatch): a crash rolls back the
      // whole batch, head and rows alike, so the database never holds one without the other.
      if (!this.#batches.open) writeHead(this.#st, appended.next);
    };
    const inBatch = this.#batches.open;
    try {
      // In a batch: straight in its transaction (the catch-up ran when it began; nobody else
      // appends while it holds the lock), no savepoint — a failure ends the batch (below).
      // Otherwise: a transaction of its own.
      if (inBatch) fn(append, (op) => this.#apply(op, time));
      else {
        this.#write(() => {
          if (shared) this.#catchUpLocked(shared);
          fn(append, (op) => this.#apply(op, time));
        });
      }
    } catch (e) {
      appended?.undo();
      void appended?.started?.close();
      if (inBatch) this.#recoverBatch(shared!);
      throw e;
    }
    if (appended?.started) this.#switchTo(appended.started);
    if (appended) {
      this.#head = appended.next;
      crashPoint('committed');
    }
    this.#checkpoints.afterCommit();
    this.#batches.committed();
    if (!shared && this.#appender && this.#appender.size >= SEGMENT_LIMIT) this.#rotating ??= this.#startSegment().finally(() => (this.#rotating = undefined));
  }

  /** Whether commits are published as objects before they are applied (an object store: decision 0040). */
  get publishes(): boolean {
    return this.#objects !== undefined;
  }

  /** On an object store: the jobs that pass, published as one commit and applied; each job's results or failure. */
  async publish(jobs: readonly (readonly Op[])[], time = Date.now()): Promise<JobOutcome[]> {
    if (!this.#objects) throw new InternalError('only a store on object storage publishes its commits');
    const outcomes = await this.#objects.publish(jobs, time);
    this.#checkpoints.afterPublish();
    return outcomes;
  }

  /** `commit`, on any store: published first on an object store. */
  async commitAsync(ops: readonly Op[], time = Date.now()): Promise<OpResult[]> {
    if (!this.#objects) return this.commit(ops, time);
    const [outcome] = await this.publish([ops], time);
    if (!Array.isArray(outcome)) throw outcome!.failed;
    return outcome;
  }

  /** Applies what other writers committed (an object store: by listing the log); answers how many commits. */
  async refresh(): Promise<number> {
    return this.#objects ? this.#objects.refresh() : 0;
  }

  /**
   * Runs `fn` on the database with every commit the log holds applied: under the write lock,
   * after the catch-up (other writers' batches have ended, and a dead writer's stranded
   * commits are applied), as a transaction that commits nothing of its own. For decisions a
   * commit cannot re-check itself, such as which pack files no row names.
   */
  readApplied<T>(fn: () => T): T {
    let out: T | undefined;
    this.transaction(Date.now(), () => void (out = fn()), false);
    return out as T;
  }

  /** The writer has no commit on its way any more: the open batch may end. */
  nothingComing(): void {
    this.#batches.nothingComing();
    this.#objects?.nothingComing();
  }

  /**
   * Tells the log about this process's writer: whether commits are on their way (a batch
   * waits for them, decision 0028), whether its group commit is making one (a poll waits for
   * it, decision 0040) and its open pack (ops.ts ApplyContext).
   */
  attach(writer: { coming: () => boolean; committing: () => boolean; openPack: () => { id: number; name: string } | undefined; packGone: (id: number) => void; rebased: () => void }): void {
    this.#coming = writer.coming;
    this.#committing = writer.committing;
    this.#rebased = writer.rebased;
    this.#ctx.openPack = writer.openPack;
    this.#ctx.packGone = writer.packGone;
  }

  /** Ends the open batch (commit-batch.ts): its commits reach the database for other connections. */
  endBatch(): void {
    this.#batches.end();
    this.#objects?.endBatch();
  }

  /** Writes a checkpoint of the catalog at the current head (FORMAT.md §15.5) and answers its seq (checkpoint-schedule.ts). */
  checkpoint(): Promise<number> {
    return this.#checkpoints.write();
  }

  /** Makes appended commits durable (durability 'full' waits for it before acknowledging). */
  async sync(): Promise<void> {
    await this.#appender?.sync();
  }

  async close(): Promise<void> {
    await this.#objects?.stop();
    await this.#checkpoints.settled();
    this.endBatch();
    await this.#rotating?.catch(() => undefined);
    await this.#appender?.close();
    this.#appender = undefined;
  }
}

/**
 * On object storage, the commit a writer's database applied last is in the log as it was: its
 * object there, or gone with a checkpoint at or past it (the log truncated: decision 0045).
 * Else the log lost it — deleted, or the bucket rolled back — or it was replaced, and the next
 * commit would be published on top of a log no replay reaches (a trial: verify said the log was
 * damaged; `kura add` went on and made it worse).
 */
async function headHeld(store: LogStore, head: LogHead): Promise<void> {
  if (!head.segment || head.seq === 0) return;
  let bytes: Uint8Array | undefined;
  try {
    bytes = await store.readSegment(head.segment);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  if (bytes === undefined) {
    if ((await store.checkpoints()).some((n) => Number(n) >= head.seq)) return;
    throw new CorruptDataError(`the database has applied commit ${head.seq}, but the log has no object ${head.segment}: the log lost commits the database holds (deleted, or the storage rolled back): restore the log from a copy of the store, or open it with a new cache (those commits are then lost)`, 'log-behind');
  }
  const [f] = readFrames(bytes).frames;
  if (!f || f.seq !== head.seq || !sameHash(f.hash, head.hash)) {
    throw new CorruptDataError(`log object ${head.segment} is not the commit ${head.seq} the database applied (replaced): the log is damaged; restore it from a copy of the store`, store.sealing ? 'unauthentic' : 'log');
  }
}
