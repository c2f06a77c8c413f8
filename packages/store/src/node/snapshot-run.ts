/**
 * A snapshot of a directory in Node: the platform's part of snapshot-run.ts — the scan of the
 * directory (snapshots.ts), its files' stats and their puts through the worker threads
 * (put-many.ts).
 */
import { realpathSync } from 'node:fs';
import { InvalidInputError } from '@kura/core';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { Store as StoreCore } from '../store.js';
import { snapshotRun, type SnapshotReport, type SnapshotRunOptions, type SnapshotSource } from '../snapshot-run.js';
import type { Scan } from '../snapshot-scan.js';
import { excluder } from './exclude.js';
import { leasePool, type PoolLease } from './ingest-pool.js';
import { SMALL_BATCH, putScanned, type ManyPuts } from './put-many.js';
import { scanDirectory, statFiles } from './snapshots.js';

export interface SnapshotOptions extends SnapshotRunOptions {
  mtime?: boolean;
  exclude?: string[];
}

export type { SnapshotReport };

export interface SnapshotHost extends ManyPuts {
  store: ManyPuts['store'] & Pick<StoreCore, 'createSnapshot'>;
  /** The store's own directories on this machine (its files, its cache): never taken into its own snapshots. */
  storeDirs?: readonly string[] | undefined;
}

/**
 * Snapshots a directory (snapshot-run.ts, FORMAT.md §13). Symlinks are recorded, not followed;
 * sockets, fifos and devices are skipped and named in `skipped`; entries whose names are not
 * UTF-8 are left out and named in `notUtf8`; files and directories deleted while the snapshot
 * ran are left out and named in `vanished`; entries matching an `exclude` pattern (exclude.ts)
 * are left out unread and counted in `excluded`. `mtime: false` leaves times out (then
 * unchanged trees keep their digests across touches).
 */
export async function snapshotDirectory(h: SnapshotHost, dir: string, options: SnapshotOptions = {}): Promise<SnapshotReport> {
  h.context('snapshot');
  // (Resolved, "" was the current directory, which `kura snapshot ""` then recorded: a trial.)
  if (typeof dir !== 'string' || dir === '') throw new InvalidInputError('the directory to snapshot is "": give one (. for the current one)', 'dir');
  const root = resolve(dir);
  const patterns = excluder(options.exclude); // bad patterns: refused before anything is read
  // The store's own directories, where the snapshot's tree holds them (`kura snapshot .` beside
  // .kura, a home directory holding the cache): its database and packs change while they are
  // read, and a restore would make a store inside the tree. Left out and counted in `excluded`,
  // as a pattern's matches are. Compared by real paths, from the tree's real root.
  const own = ownWithin(root, h.storeDirs ?? []);
  const exclude = own.size === 0 ? patterns : (path: string, name: string, isDir: boolean) => (isDir && own.has(path)) || (patterns?.(path, name, isDir) ?? false);
  // The shared ingest pool is leased once the scan has found enough files to need it, so
  // cold workers start while the scan goes on; not on a repeated snapshot, whose files are
  // mostly unchanged and not read.
  let lease: PoolLease | undefined;
  const pool = () => (lease ??= leasePool()).pool;
  let scanned: Scan | undefined;
  let workersStat = false;
  const source: SnapshotSource = {
    root,
    scan: async (stamped, onDirectory) => {
      let found = 0;
      const onFile = stamped ? undefined : () => void (++found === SMALL_BATCH * 4 && pool());
      // A directory it may not read is recorded empty and named (restic's way; one such
      // directory failed the whole snapshot: a trial).
      const unreadable: string[] = [];
      scanned = await scanDirectory(root, { mtime: options.mtime ?? true, exclude, ...(onFile ? { onFile } : {}), ...(onDirectory ? { onDirectory } : {}), onUnreadable: (path) => void unreadable.push(path) });
      scanned.unreadable = unreadable;
      return scanned;
    },
    // A first snapshot of many files has the workers stat each file on the descriptor they
    // read it from (no lstat per file here: ~8 µs each of this thread's time, the busier one).
    settle: (scan, stamped) => {
      workersStat = !stamped && h.workers > 0 && scan.files.length >= SMALL_BATCH * 4;
      return workersStat ? [] : statFiles(scan, scan.files);
    },
    // Files put again were stat'ed here already (a repeated snapshot).
    put: (files, record, gone, again, unreadable) => putScanned(h, files, pool, workersStat && !again ? scanned : undefined, record, gone, unreadable),
    end: () => lease?.release(),
  };
  return snapshotRun(h, source, options);
}

/** The paths (from the tree's root, `/`-separated) of those of `dirs` that lie inside the tree at `root`. */
function ownWithin(root: string, dirs: readonly string[]): Set<string> {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  const top = real(root);
  const out = new Set<string>();
  for (const dir of dirs) {
    const rel = relative(top, real(dir));
    if (rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)) out.add(rel.split(sep).join('/'));
  }
  return out;
}
