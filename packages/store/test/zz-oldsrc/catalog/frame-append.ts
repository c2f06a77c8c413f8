/**
 * Appending one commit's frame to the log (FORMAT.md §15.3): after the open segment's last
 * frame, or — when shared segments (several writers) have filled it — as the first frame of the
 * next segment, created whole with it (never a torn frame under a segment's final name).
 */
import { InternalError } from '@kura/core';
import { crashPoint } from '../crash-points.js';
import type { LogHead } from './commits.js';
import { segmentName } from './frame.js';
import type { SegmentAppender, SharedSegments } from './log-store.js';

/** A segment takes no more appends past this size; the next commit starts a new one. */
export const SEGMENT_LIMIT = 1 << 20;

export interface AppendedFrame {
  /** The head once the commit is in. */
  next: LogHead;
  /** Cuts the frame off again (its transaction failed). */
  undo: () => void;
  /** The segment this frame started, to append to from now on. */
  started?: SegmentAppender;
}

/** Appends frame `bytes` (commit `seq`, hashing to `hash`) to the log. */
export function appendFrame(appender: SegmentAppender, shared: SharedSegments | undefined, seq: number, hash: Uint8Array, bytes: Uint8Array): AppendedFrame {
  if (shared && appender.size >= SEGMENT_LIMIT) {
    const name = segmentName(seq);
    let started: SegmentAppender;
    if (shared.createSync(name, bytes)) started = shared.openSync(name);
    else {
      // Left empty by a commit of this batch that failed (its undo below): ours to fill.
      started = shared.openSync(name);
      if (started.refresh() !== 0) throw new InternalError(`log segment ${name} holds frames the head does not know`);
      started.append(bytes);
    }
    crashPoint('segment-started');
    return { next: { seq, hash, segment: name, end: bytes.length }, undo: () => started.truncate(0), started }; // empty: the next commit fills it
  }
  const before = appender.size;
  appender.append(bytes);
  crashPoint('frame-appended');
  return { next: { seq, hash, segment: appender.name, end: before + bytes.length }, undo: () => appender.truncate(before) };
}
