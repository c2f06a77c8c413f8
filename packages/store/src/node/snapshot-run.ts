/**
 * A snapshot of a directory in Node (FORMAT.md §13): scan, put the files that changed since the
 * last snapshot (put-many.ts), commit the trees, record the files' stamps.
 */
import { resolve } from 'node:path';
import { InternalError } from '@kura/core';
import { NotFoundError } from '../errors.js';
import type { PutResult } from '../put.js';
import type { SnapshotInfo } from '../catalog/snapshot.js';
import { cachedDigests, hasStamps, recordStamps } from '../catalog/stamps.js';
import type { Store as StoreCore } from '../store.js';
import { excluder } from './exclude.js';
import { leasePool, type PoolLease } from './ingest-pool.js';
import { SMALL_BATCH, putScanned, recordRead, type ManyPuts } from './put-many.js';
import { leaveOut, scanDirectory, statFiles, type ScannedFile, type SnapshotProgress } from './snapshots.js';

export interface SnapshotOptions {
  label?: string;
  mtime?: boolean;
  reread?: boolean;
  exclude?: string[];
  onProgress?: (p: SnapshotProgress) => void;
}

export type SnapshotReport = SnapshotInfo & { skipped: string[]; notUtf8: string[]; reused: number; vanished: string[]; excluded: number };

export interface SnapshotHost extends ManyPuts {
  store: ManyPuts['store'] & Pick<StoreCore, 'createSnapshot'>;
}

/**
 * Snapshots a directory (FORMAT.md §13): its files go through the deduplicating put (kept
 * for the snapshot, not listed), then its trees and the snapshot record are committed in one
 * transaction. Symlinks are recorded, not followed; sockets, fifos and devices are skipped
 * and named in `skipped`; entries whose names are not UTF-8 are left out and named in
 * `notUtf8`; files and directories deleted while the snapshot ran are left out
 * and named in `vanished`; entries matching an `exclude` pattern (exclude.ts) are left out
 * unread and counted in `excluded`. `mtime: false` leaves times out (then unchanged trees
 * keep their digests across touches). `onProgress` is called as the tree is scanned, once it
 * is, and as each file is done (synchronously: what it throws ends the snapshot, which then
 * records nothing).
 */
export async function snapshotDirectory(h: SnapshotHost, dir: string, options: SnapshotOptions = {}): Promise<SnapshotReport> {
  const ctx = h.context('snapshot');
  const root = resolve(dir);
  const exclude = excluder(options.exclude); // bad patterns: refused before anything is read
  // The shared ingest pool is leased once the scan has found enough files to need it, so
  // cold workers start while the scan goes on; not on a repeated snapshot, whose files are
  // mostly unchanged and not read.
  let lease: PoolLease | undefined;
  const pool = () => (lease ??= leasePool()).pool;
  let found = 0;
  const stamped = !options.reread && hasStamps(ctx.st, root);
  const onFile = stamped ? undefined : () => void (++found === SMALL_BATCH * 4 && pool());
  try {
    const { onProgress } = options;
    const scan = await scanDirectory(root, {
      mtime: options.mtime ?? true,
      exclude,
      ...(onFile ? { onFile } : {}),
      ...(onProgress ? { onDirectory: (found: number) => onProgress({ phase: 'scan', total: found, files: 0, bytes: 0, reused: 0 }) } : {}),
    });
    // A first snapshot of many files has the workers stat each file on the descriptor they
    // read it from (no lstat per file here: ~8 µs each of this thread's time, the busier one).
    const workersStat = !stamped && h.workers > 0 && scan.files.length >= SMALL_BATCH * 4;
    // Files deleted since the scan listed them are left out (`vanished`; decision 0024).
    const gone = new Set<ScannedFile>(workersStat ? [] : statFiles(scan, scan.files));
    if (gone.size) leaveOut(scan, gone);
    // Files whose stamp is what an earlier snapshot read keep that document, unread
    // (FORMAT.md §13.4); `reread` reads every file.
    const cached = stamped ? ctx.db.read(() => cachedDigests(ctx.st, scan.files)) : [];
    const reused: ScannedFile[] = [];
    const read: ScannedFile[] = [];
    scan.files.forEach((f, i) => {
      const digest = f.recent ? undefined : cached[i];
      if (digest === undefined) return read.push(f);
      f.entry.digest = digest;
      reused.push(f);
    });
    const progress: SnapshotProgress = { phase: 'files', total: scan.files.length, files: reused.length, bytes: 0, reused: reused.length };
    onProgress?.({ ...progress });
    const done = onProgress
      ? (f: ScannedFile, r: PutResult) => {
          recordRead(f, r);
          progress.files++;
          progress.bytes += r.size;
          onProgress({ ...progress });
        }
      : recordRead;
    // A file deleted between the scan and its read is left out of the tree (which then shows
    // the directory as it is now) and named in `vanished`; any other failure fails the
    // snapshot (decision 0024).
    const goneNow = new Set<ScannedFile>();
    const onGone = (f: ScannedFile) => {
      goneNow.add(f);
      progress.files++;
      onProgress?.({ ...progress });
    };
    await putScanned(h, read, pool, workersStat ? scan : undefined, done, onGone);
    if (goneNow.size) leaveOut(scan, goneNow);
    goneNow.forEach((f) => gone.add(f));
    const unstated = scan.files.find((f) => f.size < 0);
    if (unstated) throw new InternalError(`${unstated.path} was put without its stat`);
    const label = options.label !== undefined ? { label: options.label } : {};
    let info: SnapshotInfo;
    try {
      info = await h.store.createSnapshot(scan.root, label);
    } catch (e) {
      // A reused document deleted meanwhile (its snapshots removed, then GC): read them all.
      if (!(e instanceof NotFoundError) || reused.length === 0) throw e;
      const goneLater = new Set<ScannedFile>();
      await putScanned(h, reused, pool, undefined, recordRead, (f) => goneLater.add(f)); // stat'ed here already (a repeated snapshot)
      if (goneLater.size) leaveOut(scan, goneLater);
      goneLater.forEach((f) => gone.add(f));
      read.push(...reused.splice(0));
      info = await h.store.createSnapshot(scan.root, label);
    }
    const stamps = scan.files.map((f) => ({ path: f.path, stamp: f.stamp, recent: f.recent, digest: f.entry.digest }));
    h.context('snapshot').db.transaction(() => recordStamps(ctx.st, root, stamps)); // a hint: its own transaction
    return { ...info, skipped: scan.skipped, notUtf8: scan.notUtf8, reused: reused.length, excluded: scan.excluded, vanished: [...scan.vanished, ...[...gone].map((f) => f.path)].sort() };
  } finally {
    lease?.release();
  }
}

