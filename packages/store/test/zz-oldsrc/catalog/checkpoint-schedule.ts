/**
 * When a writer checkpoints the catalog (FORMAT.md §15.5): after CHECKPOINT_EVERY commits on a
 * local disk, CHECKPOINT_EVERY_OBJECTS on object storage, since the newest checkpoint it knows
 * of — one at a time, in the background, never inside the commit that made it due.
 */
import type { SqlDatabase } from '../backend/sql.js';
import { nextTurn } from '../breather.js';
import { crashPoint } from '../crash-points.js';
import { CHECKPOINT_EVERY, CHECKPOINT_EVERY_OBJECTS, writeCheckpoint } from './checkpoint.js';
import type { LogStore } from './log-store.js';
import type { Statements } from './statements.js';

export interface CheckpointHost {
  db: SqlDatabase;
  st: Statements;
  store: LogStore;
  /** The seq of the writer's head. */
  headSeq(): number;
  /** Ends the open commit batch: its head is in the database from then on. */
  endBatch(): void;
}

export class CheckpointSchedule {
  /** The seq of the newest checkpoint this writer knows, and the one being written. */
  #known = 0;
  #writing: Promise<number> | undefined;
  /** afterPublish is listing the checkpoints. */
  #listing = false;

  constructor(private readonly host: CheckpointHost) {}

  /** Learns the newest checkpoint from the store (at open). */
  async load(): Promise<void> {
    this.#known = Number((await this.host.store.checkpoints()).at(-1) ?? 0);
  }

  /** After a local commit: a checkpoint once CHECKPOINT_EVERY commits follow the newest. */
  afterCommit(): void {
    if (this.host.headSeq() - this.#known >= CHECKPOINT_EVERY && !this.#writing) void this.write().catch(() => undefined);
  }

  /**
   * After a commit published to an object store: a checkpoint once CHECKPOINT_EVERY_OBJECTS
   * commits follow the newest this server knows of — and still do once it has listed them
   * (another server may have written one meanwhile: one LIST per that many commits).
   */
  afterPublish(): void {
    const due = () => this.host.headSeq() - this.#known >= CHECKPOINT_EVERY_OBJECTS;
    if (!due() || this.#writing || this.#listing) return;
    this.#listing = true;
    void this.host.store
      .checkpoints()
      .then((names) => {
        this.#known = Math.max(this.#known, Number(names.at(-1) ?? 0));
        if (due()) return this.write();
      })
      .catch(() => undefined) // (a checkpoint is an optimisation: the next commit tries again)
      .finally(() => (this.#listing = false));
  }

  /**
   * Writes a checkpoint of the catalog at the current head and answers its seq; the one being
   * written when one is. Read in one read transaction: the rows and the head it records are
   * one state (inside a batch, the batch's acknowledged commits included).
   */
  write(): Promise<number> {
    const { db, st, store } = this.host;
    this.#writing ??= (async () => {
      await new Promise<void>((resolve) => nextTurn(resolve)); // not inside the caller's commit
      this.host.endBatch();
      const seq = await writeCheckpoint(db, st, store, this.#known);
      if (seq > this.#known) {
        crashPoint('checkpoint-written');
        this.#known = seq;
      }
      return seq;
    })().finally(() => (this.#writing = undefined));
    return this.#writing;
  }

  /** Resolves once no checkpoint is being written (a closing log). */
  async settled(): Promise<void> {
    await this.#writing?.catch(() => undefined);
  }
}
