/**
 * Named steps of the commit protocol (FORMAT.md §8, §9, §15) where the crash tests kill a
 * writer (test/store-crash-points.test.ts): with `KURA_CRASH_AT=<point>:<n>` in its
 * environment, a process kills itself with SIGKILL the n-th time it reaches <point> — no
 * unwinding, no `finally`, exactly as a crash or kill -9 would stop it there. Without the
 * variable (always, outside those tests; and in browsers, which have no process) a point costs
 * one comparison.
 */
export const CRASH_POINTS = [
  /** A pack's row is committed and its file created, before its header is written. */
  'pack-created',
  /** A chunk record is in the open pack, before the put that wrote it commits. */
  'record-appended',
  /** A commit's frame is in the log segment, before the database transaction commits. */
  'frame-appended',
  /** A commit started a new log segment (created whole with its frame), before the database commits. */
  'segment-started',
  /** A commit is in the log and applied (its transaction, or its savepoint in a batch), before its caller is told. */
  'committed',
  /** On an object store: a commit object is created in the bucket, before the database applies it (decision 0040). */
  'published',
  /** A batch's commits are acknowledged, before the batch's database COMMIT (decision 0028). */
  'batch-ending',
  /** A pack is sealed on disk, before its sealed size is committed. */
  'pack-sealing',
  /** GC committed a condemnation of chunk rows, before it goes on to packs. */
  'condemned',
  /** GC copied a pack's live records into the open pack, before the move is committed. */
  'records-moved',
  /** GC removed a pack file whose row went, before it goes on. */
  'pack-removed',
  /** A checkpoint object is written, before the writer goes on. */
  'checkpoint-written',
] as const;

export type CrashPoint = (typeof CRASH_POINTS)[number];

/** Points only a store on object storage reaches (a directory's commits are never published). */
export const OBJECT_STORE_ONLY = ['published'] as const satisfies readonly CrashPoint[];

/** Points only a store in a directory reaches (log segments appended to, batches of commits). */
export const DIRECTORY_ONLY = ['frame-appended', 'segment-started', 'batch-ending'] as const satisfies readonly CrashPoint[];

const spec = typeof process === 'object' ? process.env?.KURA_CRASH_AT : undefined;
const m = spec ? /^([a-z-]+):([1-9][0-9]*)$/.exec(spec) : null;
if (spec && (!m || !(CRASH_POINTS as readonly string[]).includes(m[1]!))) {
  throw new Error(`KURA_CRASH_AT=${spec}: expected <point>:<n> with a point of ${CRASH_POINTS.join(', ')}`);
}
const armed = m ? { point: m[1]!, left: Number(m[2]) } : undefined;

/** Kills this process here when the crash tests armed this point (see above). */
export function crashPoint(point: CrashPoint): void {
  if (armed === undefined || armed.point !== point) return;
  if (--armed.left > 0) return;
  process.kill(process.pid, 'SIGKILL');
}
