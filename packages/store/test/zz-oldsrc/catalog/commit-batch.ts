/**
 * Commits that share one database transaction (decision 0028): a local writer on shared
 * segments keeps the write transaction open across consecutive commits — each acknowledged
 * once its frame is in the log and its operations applied in that transaction — so the COMMIT,
 * most of a small commit's cost, is paid once per batch. A commit that fails rolls the batch
 * back, and the writer applies its earlier commits again from the log (decision 0049). A batch
 * ends when the event loop turns and the writer has no commit on its way, or after BATCH_MS at
 * most; while no other process writes the store, after LONE_BATCH_MS, whether commits come or not.
 */
import type { SqlBatch, SqlDatabase } from '../backend/sql.js';
import { nextTurn } from '../breather.js';
import { crashPoint } from '../crash-points.js';
import { writeHead, type LogHead } from './commits.js';
import type { Statements } from './statements.js';

/**
 * Commits follow each other in one open database transaction for at most this long, or until
 * the event loop turns. Other processes wait this long at most for the write lock, and see the
 * batch's commits when it ends.
 */
export const BATCH_MS = 2;
/**
 * The cap while no other process has the store open for writing (decision 0028's amendment of
 * 2026-11-27): nobody waits for the lock, so consecutive group commits share a COMMIT — at 32
 * 1 KB puts in flight a group commit takes longer than BATCH_MS, and each paid a COMMIT of its
 * own. A writer that opens the store meanwhile waits for this batch at most; the next batch
 * begins with a look at `writers/` (node/lock-turns.ts), which finds it, and is capped at
 * BATCH_MS again.
 *
 * A lone batch ends at its cap only, not when the event loop turns with nothing coming: a
 * server's requests one after another (an HTTP client awaiting each answer) leave the loop a
 * turn between them, and each then paid a BEGIN, a catch-up and a COMMIT of its own: 23% of
 * the server's main thread for 1 KB POSTs (decision 0028's amendment of 2026-11-27, evening).
 * The cost is the visibility window above: what another process reads lags by LONE_BATCH_MS
 * at most.
 */
export const LONE_BATCH_MS = 8;

/** What the commit log lends its batches. */
export interface BatchHost {
  db: SqlDatabase;
  st: Statements;
  /** The head the batch's commits reached (written to the database when it ends). */
  head(): LogHead;
  /** Whether this process's writer has commits on their way (a put in progress, a group commit queued). */
  coming(): boolean;
  /** Under the write lock, as the batch begins: applies other writers' commits. */
  catchUp(): void;
  /** A rollback happened: what it queued for the index, and the entries it named, are forgotten. */
  rolledBack(): void;
  /** The cap while the database says it is alone (LONE_BATCH_MS by default). */
  loneMs?: number;
}

/** Commits sharing one database transaction: when it began, its cap, and the timer that ends it there. */
interface Batch {
  started: number;
  /** How long it may stay open: BATCH_MS, or LONE_BATCH_MS while no other process writes the store. */
  ms: number;
  /** No other process writes the store: the batch ends at its cap only. */
  lone: boolean;
  cap: ReturnType<typeof setTimeout>;
}

export class CommitBatches {
  #batch: Batch | undefined;

  constructor(private readonly host: BatchHost) {}

  /** Whether a batch is open: commits are savepoints of its transaction. */
  get open(): boolean {
    return this.#batch !== undefined;
  }

  /** Begins a batch: waits for the write lock, catches up with other writers. */
  begin(batch: SqlBatch): void {
    batch.begin(() => this.end()); // waits for the write lock, like any write transaction
    try {
      this.host.catchUp();
    } catch (e) {
      batch.rollback();
      this.host.rolledBack();
      throw e;
    }
    // Alone, it ends at its cap (LONE_BATCH_MS). Otherwise when the event loop turns — unless
    // this writer has commits on their way: then once it has none (nothingComing), its cap at
    // most. Waited for, not polled: a check every turn keeps the event loop from sleeping, and
    // spun ~10% of a busy server's CPU.
    const lone = batch.alone?.() ?? false;
    const ms = lone ? (this.host.loneMs ?? LONE_BATCH_MS) : BATCH_MS;
    const mine = { started: performance.now(), ms, lone, cap: setTimeout(() => this.#batch === mine && this.end(), ms) };
    this.#batch = mine;
    if (!lone) nextTurn(() => this.#endIfQuiet(mine));
  }

  /** After a commit: a batch open for its cap ends. */
  committed(): void {
    if (this.#batch && performance.now() - this.#batch.started >= this.#batch.ms) this.end();
  }

  /** The writer has no commit on its way any more: the open batch may end. */
  nothingComing(): void {
    const batch = this.#batch;
    if (batch && !batch.lone) nextTurn(() => this.#endIfQuiet(batch));
  }

  #endIfQuiet(batch: Batch): void {
    if (this.#batch === batch && !this.host.coming()) this.end();
  }

  /**
   * Rolls the open batch back (a commit in it failed): its commits leave the database, not the
   * log; the caller applies them again (commit-log.ts #recoverBatch).
   */
  abort(): void {
    if (!this.#batch) return;
    clearTimeout(this.#batch.cap);
    this.#batch = undefined;
    this.host.rolledBack();
    this.host.db.batch!.rollback();
  }

  /**
   * Ends the open batch: its commits reach the database for other connections. Should the
   * COMMIT fail, they are in the log all the same: the next transaction's catch-up applies them
   * again.
   */
  end(): void {
    if (!this.#batch) return;
    clearTimeout(this.#batch.cap);
    this.#batch = undefined;
    const { db, st } = this.host;
    const batch = db.batch!;
    try {
      st.queued.flush();
      writeHead(st, this.host.head());
      crashPoint('batch-ending');
      batch.commit();
    } catch {
      this.host.rolledBack(); // (the catch-up that applies its commits again queues them again)
      try {
        batch.rollback();
      } catch {
        // (the connection rolled back already)
      }
    }
  }
}
