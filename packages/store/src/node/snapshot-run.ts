/**
 * A snapshot of a directory in Node: the platform's part of snapshot-run.ts — the scan of the
 * directory (snapshots.ts), its files' stats and their puts through the worker threads
 * (put-many.ts).
 */
import { resolve } from 'node:path';
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
  /** The store's own directory, when it has one: never taken into its own snapshots. */
  storeDir?: string | undefined;
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
  const root = resolve(dir);
  const patterns = excluder(options.exclude); // bad patterns: refused before anything is read
  // The store's own directory, when the snapshot's tree holds it (`kura snapshot .` beside
  // .kura): its database and packs change while they are read, and a restore would make a store
  // inside the tree. Left out and counted in `excluded`, as a pattern's matches are.
  const own = h.storeDir === undefined ? undefined : resolve(h.storeDir);
  const exclude = own === undefined || !own.startsWith(`${root}/`) ? patterns : (path: string, name: string, isDir: boolean) => (isDir && resolve(root, path) === own) || (patterns?.(path, name, isDir) ?? false);
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
      scanned = await scanDirectory(root, { mtime: options.mtime ?? true, exclude, ...(onFile ? { onFile } : {}), ...(onDirectory ? { onDirectory } : {}) });
      return scanned;
    },
    // A first snapshot of many files has the workers stat each file on the descriptor they
    // read it from (no lstat per file here: ~8 µs each of this thread's time, the busier one).
    settle: (scan, stamped) => {
      workersStat = !stamped && h.workers > 0 && scan.files.length >= SMALL_BATCH * 4;
      return workersStat ? [] : statFiles(scan, scan.files);
    },
    // Files put again were stat'ed here already (a repeated snapshot).
    put: (files, record, gone, again) => putScanned(h, files, pool, workersStat && !again ? scanned : undefined, record, gone),
    end: () => lease?.release(),
  };
  return snapshotRun(h, source, options);
}
