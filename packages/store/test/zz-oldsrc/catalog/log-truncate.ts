/**
 * Truncating the log of a store on object storage (decision 0045; SCALEOUT.md's retention
 * rule): the commits a checkpoint covers go once that checkpoint has existed for the log's
 * retention R, and the checkpoints before it with them. Every server refreshes far more often
 * than R (polling, decision 0040), so none has a head before such a checkpoint — but one that
 * was stopped or paused longer may: its catch-up starts again from the checkpoint
 * (object-commits.ts, `rebase`), and its first commit after a refresh older than R/4 lists the
 * log before it tries a seq (one the truncation freed would otherwise be created again).
 */
import type { LogStore } from './log-store.js';
import type { Statements } from './statements.js';

/** How long the commits a checkpoint covers are kept after it (7 days: restic's and kopia's order of magnitude). */
export const DEFAULT_LOG_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** What truncation needs of the log's objects (catalog/object-log.ts). */
export interface TruncatableLog {
  /** Checkpoint names with when they were written, by the storage's clock. */
  checkpointsListed(): Promise<{ name: string; modified: number }[]>;
  /** The log's object names up to seq `last`, oldest first (a GC after the truncation lists one page, not the log). */
  segmentsThrough(last: number): Promise<string[]>;
  deleteSegment(name: string): Promise<void>;
  deleteCheckpoint(name: string): Promise<void>;
}

export function truncatable(store: LogStore): store is LogStore & TruncatableLog {
  return typeof (store as Partial<TruncatableLog>).deleteSegment === 'function';
}

/** The seq of the newest checkpoint written at least `retentionMs` before `now` (the storage's clock), if there is one. */
export async function truncationPoint(log: TruncatableLog, now: number, retentionMs: number): Promise<number | undefined> {
  const old = (await log.checkpointsListed()).filter((c) => c.modified <= now - retentionMs);
  return old.length ? Math.max(...old.map((c) => Number(c.name))) : undefined;
}

/**
 * Deletes the log's objects up to `upTo` (truncationPoint's seq) oldest first, so what is left
 * is always a whole run of commits — but stops before one that carries a pack that still has a
 * row (decision 0044: GC moves such packs out first) — and the checkpoints before `upTo`'s.
 */
export async function truncateLog(log: TruncatableLog, st: Statements, upTo: number): Promise<{ commitsDeleted: number; checkpointsDeleted: number }> {
  const carrier = st.packsCarried.all().reduce((min, r) => Math.min(min, r.log_seq), Infinity);
  const last = Math.min(upTo, carrier - 1);
  let commitsDeleted = 0;
  for (const name of await log.segmentsThrough(last)) {
    await log.deleteSegment(name);
    commitsDeleted++;
  }
  let checkpointsDeleted = 0;
  for (const { name } of await log.checkpointsListed()) {
    if (Number(name) >= upTo) continue;
    await log.deleteCheckpoint(name);
    checkpointsDeleted++;
  }
  return { commitsDeleted, checkpointsDeleted };
}
