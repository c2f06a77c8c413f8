/**
 * Catching up with other local writers inside the write transaction (FORMAT.md §15.4, decision
 * 0026): several processes append to shared segments under kura.db's write lock, so the holder
 * of the lock takes the head the database records, applies intact frames after it (stranded by
 * a writer that died between its append and COMMIT: nobody else appends while the lock is
 * held), cuts what follows them, and follows into the next segment when the current one is full
 * and a writer started the next. The next commit then appends at the head.
 */
import { CorruptDataError } from '@kura/core';
import type { Statements } from './statements.js';
import { decodeCommit, logDamage, writeHead, type LogHead } from './commits.js';
import { readFrames, sameHash, segmentName, tailDamage } from './frame.js';
import { SEGMENT_LIMIT } from './frame-append.js';
import type { SegmentAppender, SharedSegments } from './log-store.js';
import type { Op, OpResult } from './ops.js';
import type { SqlDatabase } from '../backend/sql.js';
import type { TargetCache } from './target-cache.js';
import { applyJobs } from './commit-jobs.js';

/** What the commit log lends: its appender (switched to the head's segment) and how it applies an operation. */
export interface CatchUpHost {
  db: SqlDatabase;
  targets?: TargetCache;
  appender(): SegmentAppender | undefined;
  switchTo(appender: SegmentAppender): void;
  apply(op: Op, time: number): OpResult;
}

/** Applies what `shared` holds after `stored` (the database's head); answers the new head. */
export function catchUpShared(st: Statements, shared: SharedSegments, stored: LogHead, host: CatchUpHost): LogHead {
  let head = stored;
  let segment = head.segment;
  let offset = head.end;
  if (!segment) {
    // Nothing applied from the log yet (a new store, or one rebuilt from a checkpoint): the
    // segment that holds the next commit, made when there is none.
    const names = shared.listSync();
    segment = names.filter((n) => n <= segmentName(head.seq + 1)).at(-1) ?? names[0] ?? segmentName(head.seq + 1);
    if (!names.includes(segment)) shared.createSync(segment, new Uint8Array(0));
    offset = 0;
  }
  for (;;) {
    if (host.appender()?.name !== segment) host.switchTo(shared.openSync(segment));
    const appender = host.appender()!;
    const size = appender.refresh();
    if (size < offset) throw new CorruptDataError(`log segment ${segment} holds ${size} bytes, fewer than the ${offset} the database applied from it: the log was cut (damaged)`, 'log');
    if (size > offset) {
      const bytes = shared.readSync(segment, offset);
      const { frames, end } = readFrames(bytes);
      for (const f of frames) {
        if (f.seq <= head.seq) continue; // before the head (a segment read from its start)
        if (f.seq !== head.seq + 1 || !sameHash(f.prev, head.hash)) {
          throw new CorruptDataError(`the log's chain breaks at commit ${f.seq} in segment ${segment} (expected ${head.seq + 1})`, 'log');
        }
        const c = decodeCommit(f, undefined); // (local directories: never an encrypted store's log)
        applyJobs({ db: host.db, st, targets: host.targets }, c, (op) => host.apply(op, c.time));
        head = { seq: c.seq, hash: c.hash, segment, end: offset + f.offset + f.length };
        writeHead(st, head);
      }
      if (offset + end < size) {
        // Torn: never committed — unless it is no torn append (damage in the log: kept).
        const damage = tailDamage(bytes, end, offset);
        if (damage) throw logDamage(segment, damage);
        appender.truncate(offset + end);
      }
    }
    // A full segment is followed by one named for the next seq: a writer that died after
    // creating it (and before its COMMIT) left its frame there.
    if (appender.size >= SEGMENT_LIMIT && shared.existsSync(segmentName(head.seq + 1))) {
      segment = segmentName(head.seq + 1);
      offset = 0;
      continue;
    }
    return head;
  }
}

/**
 * How many intact commits `shared` holds after `head`, following on from it: those the next
 * writer's catch-up applies (a writer that died inside a batch, decision 0028, or one whose
 * COMMIT is on its way). Reads only: a read-only store's look at the log (node/index.ts).
 */
export function countAfter(shared: SharedSegments, head: LogHead): number {
  const names = shared.listSync();
  let segment: string | undefined = head.segment || names.filter((n) => n <= segmentName(head.seq + 1)).at(-1);
  let offset = head.segment ? head.end : 0;
  let seq = head.seq;
  let prev = head.hash;
  let count = 0;
  while (segment !== undefined && names.includes(segment)) {
    for (const f of readFrames(shared.readSync(segment, offset)).frames) {
      if (f.seq <= seq) continue; // before the head (a segment read from its start)
      if (f.seq !== seq + 1 || !sameHash(f.prev, prev)) return count; // (a writer's catch-up says CORRUPT_DATA)
      seq = f.seq;
      prev = f.hash;
      count++;
    }
    // A full segment is followed by one named for the next seq.
    const next = segmentName(seq + 1);
    segment = next > segment ? next : undefined;
    offset = 0;
  }
  return count;
}
