/**
 * Putting many files from the file system at once (putFiles, and a snapshot's files): the
 * ingest workers read and chunk them, this thread deduplicates and commits, small files in
 * batches of one message and one commit each.
 */
import { closeSync, constants as fsConstants, createReadStream, fstatSync, lstatSync, openSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidInputError } from '@kura/core';
import type { ReadyChunks } from '../ingest/pool.js';
import { runLanes } from '../lanes.js';
import { SMALL_BATCH, putMany, type ManyPuts as NeutralManyPuts, type SourceToPut } from '../put-many.js';
import type { PutMeta } from '../options.js';
import type { PutResult } from '../put.js';
import { knownChunks } from '../store-context.js';
import { putForSnapshot } from '../store-writes.js';
import { leasePoolOfSize, type IngestPool } from './ingest-pool.js';
import { readAll } from './read-all.js';
import { openForWriting } from './open-files.js';
import { applyStat, type Scan, type ScannedFile } from './snapshots.js';
import { recordRead } from '../snapshot-run.js';

export { SMALL_BATCH };

/** What the puts of many files work with (put-many.ts), and the ingest workers it may use. */
export interface ManyPuts extends NeutralManyPuts {
  /** Ingest workers the store may use (0: every put on this thread). */
  workers: number;
}

/**
 * Opens a file the scan saw as a regular file, refusing what has been swapped for a link or
 * something else since (a snapshot must not follow a link planted between scan and read).
 */
export function openRegularFile(path: string): number {
  // (O_NONBLOCK: a FIFO planted since the scan would block the open until a writer came.)
  const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new InvalidInputError(`${path} is no longer a regular file (changed while the snapshot ran)`, 'path');
  }
  return fd;
}

/** A small file whole: one read of the size the scan saw (and one more, should it have grown). */
function readSmallFile(path: string, expected: number): Uint8Array {
  const fd = openRegularFile(path);
  try {
    return readAll(fd, expected);
  } finally {
    closeSync(fd);
  }
}

export interface FileToPut {
  path: string;
  meta?: PutMeta;
}

export interface PutFilesOptions {
  /** Ingest workers (default: the cores; 0: every file on this thread). */
  workers?: number;
  /**
   * Refuse a file that changes while it is read (its size or times move between its open and
   * the end of the read), or that a process holds open for writing when its read ends (Linux;
   * the state read may be one between two writes, such as the empty file a rewrite starts
   * with): its outcome is a SourceChangedError (INVALID_INPUT) and nothing of it is committed,
   * where it would have been stored as bytes the file may never have had at rest. Files are
   * then read as regular files (a link is not followed). Files put on this thread
   * (`workers: 0`) are not watched. A watch puts with it, and puts such a file again later.
   */
  refuseChanged?: boolean;
  /**
   * With `refuseChanged`, a file a process holds open for writing when its read ends:
   * `'refuse'` (the default: a watch puts it again once it is closed) or `'read'` (stored, unless
   * it changed while it was read: `kura add` of a log a program keeps open).
   */
  heldOpen?: 'refuse' | 'read';
}

export interface FilePutOutcome {
  path: string;
  result?: PutResult;
  error?: unknown;
}

/**
 * Buffers at least this large are ingested on a worker: below, messaging costs more than it
 * saves. Measured again (2 cores): gathering the small buffers put in one event-loop turn and
 * sending them to the workers in groups of 8-32 made 1 KB puts x32 5-25% slower than ingesting
 * them here, although the kernel is ~40 of a put's ~125 µs on this thread: each message wakes
 * a worker that preempts this thread, which is the bottleneck.
 */
export const WORKER_PUT_MIN = 64 * 1024;

/**
 * A snapshot's batches grow with the tree, to this many files, while every worker still gets
 * several: each batch is one message each way and one commit job, and a larger transaction
 * writes each B-tree page it touches once for more rows. Measured on 10,000 small files (warm
 * pool): batches of 64 -> 256 took the store's thread from ~83 to ~66 µs per file.
 */
const SMALL_BATCH_MAX = 256;

/**
 * Whether `e` says the file at `path` does not exist (any more): ENOENT from opening exactly
 * that path (a worker's error carries the path too). An ENOENT about anything else — the
 * store's own files — is a failure, never a file to leave out.
 */
export function vanished(e: unknown, path: string): boolean {
  const err = e as { code?: unknown; path?: unknown };
  return err?.code === 'ENOENT' && err.path === path;
}

/** Whether `e` says the file at `path` may not be read (EACCES, EPERM from opening exactly that path). */
export function denied(e: unknown, path: string): boolean {
  const err = e as { code?: unknown; path?: unknown };
  return (err?.code === 'EACCES' || err?.code === 'EPERM') && err.path === path;
}

/**
 * A regular file (not a link: the workers read small files without following links) below
 * WORKER_PUT_MIN. Anything else, or a path that cannot be read, takes the one-file path,
 * which follows links and reports the error as before.
 */
/** A file's size, or undefined when it cannot be looked at (asked only of a file refused for want of space). */
function sizeOf(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

function isSmallRegularFile(path: string): boolean {
  try {
    const st = lstatSync(path);
    return st.isFile() && st.size < WORKER_PUT_MIN;
  } catch {
    return false;
  }
}

/**
 * Puts many files using every core (put-many.ts `putMany`): worker threads run the ingest
 * kernel per file, this thread deduplicates and commits, in input order. Yields one outcome
 * per file, in input order; a file that fails does not stop the others. `workers` defaults to
 * the cores.
 */
export async function* putFiles(h: ManyPuts, files: Iterable<FileToPut> | AsyncIterable<FileToPut>, options: PutFilesOptions = {}): AsyncGenerator<FilePutOutcome> {
  const lease = leasePoolOfSize(options.workers);
  const paths: (string | undefined)[] = [];
  async function* items(): AsyncGenerator<SourceToPut<string>> {
    for await (const f of files) {
      paths.push(f.path);
      yield { source: f.path, meta: f.meta };
    }
  }
  try {
    const refuseChanged = options.refuseChanged === true;
    /** Of `paths`, those a process holds open for writing (as /proc names them: absolute). */
    const unsettled = (paths: string[]) => {
      if (options.heldOpen === 'read') return new Set<string>();
      const open = openForWriting(new Set(paths.map((p) => resolve(p))));
      return new Set(open ? paths.filter((p) => open.has(resolve(p))) : []);
    };
    for await (const o of putMany(h, items(), { pool: lease.pool, small: isSmallRegularFile, here: (path) => path, size: sizeOf }, { refuseChanged, unsettled })) {
      const path = paths[o.index]!;
      paths[o.index] = undefined; // (a long walk's paths are not all kept)
      yield o.result ? { path, result: o.result } : { path, error: o.error };
    }
  } finally {
    lease.release();
  }
}

/**
 * Puts a snapshot's files. Large ones stream through workers one by one. Small ones, when
 * there are many, go to the workers in batches of SMALL_BATCH or more (read and ingested
 * there, one message each way) and are stored a batch at a time (`putReady`) while this
 * thread only deduplicates and commits; a few are read and put here, where messaging would
 * cost more than it saves. `statScan`: the files have no stat yet (a first snapshot): all go
 * in batches, the workers stat them as they open them, and those too large to read whole
 * come back unread and stream. `record` is told each file's put as it is done; `gone`, of
 * each file that no longer exists when it is read (else that fails the put).
 */
export async function putScanned(
  h: ManyPuts,
  files: ScannedFile[],
  leased: () => IngestPool,
  statScan: Scan | undefined,
  record = recordRead,
  gone?: (f: ScannedFile) => void,
  unreadable?: (f: ScannedFile) => void,
): Promise<void> {
  const opts = h.store.ingestOptions();
  const small = statScan ? files : files.filter((f) => f.size < WORKER_PUT_MIN);
  const large = statScan ? [] : files.filter((f) => f.size >= WORKER_PUT_MIN);
  const batches = statScan !== undefined || small.length >= SMALL_BATCH * 4;
  const pool = h.workers > 0 && (batches || large.length > 0) ? leased() : undefined;
  const known = pool ? knownChunks(h.context('snapshot')) : undefined;
  const tasks: (() => Promise<void>)[] = [];
  /** A file's put, or, when it vanished since the scan and the caller takes that, `gone`. */
  const putOne = (f: ScannedFile, put: () => Promise<PutResult>) => async () => {
    let r: PutResult;
    try {
      r = await put();
    } catch (e) {
      if (unreadable && denied(e, f.path)) return unreadable(f);
      if (!gone || !vanished(e, f.path)) throw e;
      return gone(f);
    }
    record(f, r);
  };
  const stream = (f: ScannedFile) =>
    putOne(f, () =>
      pool
        ? h.store.putChunks(pool.ingestFile(f.path, opts, true, known), {}, { listed: false })
        : putForSnapshot(h.context('snapshot'), createReadStream('', { fd: openRegularFile(f.path), highWaterMark: 1 << 20 })),
    );
  if (pool && batches) {
    const size = Math.min(SMALL_BATCH_MAX, Math.max(SMALL_BATCH, Math.ceil(small.length / (pool.size * 8))));
    for (let i = 0; i < small.length; i += size) {
      const batch = small.slice(i, i + size);
      tasks.push(async () => {
        const paths = batch.map((f) => f.path);
        const answers = statScan ? await pool.ingestSmallWithStat(paths, opts, known, WORKER_PUT_MIN) : await pool.ingestSmallFiles(paths, opts, known);
        const ready: ReadyChunks[] = [];
        const readyFiles: ScannedFile[] = [];
        answers.forEach((a, j) => {
          const f = batch[j]!;
          if (a instanceof Error) {
            if (unreadable && denied(a, f.path)) return unreadable(f);
            if (!gone || !vanished(a, f.path)) throw a;
            return gone(f);
          }
          if (statScan) applyStat(statScan, f, 'large' in a ? a.large : a.stat!);
          if ('large' in a) tasks.push(stream(f)); // a lane still running (this one) takes it
          else {
            ready.push(a);
            readyFiles.push(f);
          }
        });
        const results = await h.store.putReady(ready, { listed: false });
        results.forEach((r, j) => {
          if (r instanceof Error) throw r;
          record(readyFiles[j]!, r);
        });
      });
    }
  } else {
    for (const f of small) tasks.push(putOne(f, async () => putForSnapshot(h.context('snapshot'), readSmallFile(f.path, f.size))));
  }
  for (const f of large) tasks.push(stream(f));
  // A few tasks in flight: enough to keep the workers and the group commit busy.
  await runLanes(tasks, pool ? pool.size * 4 : 32);
}

