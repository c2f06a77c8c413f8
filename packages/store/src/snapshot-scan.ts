/**
 * A tree a snapshot reads (FORMAT.md §13), as every platform's scan gives it: its directory
 * nodes, the regular files to put (each named by its entry, which gets the digest once put),
 * what was left out and why. Node scans a directory (node/snapshots.ts); a browser, the files
 * of a dropped folder (browser/snapshot-files.ts).
 */
import type { DirNode, FileEntry } from './catalog/snapshot.js';

/**
 * A file found by the scan, to be put; `entry` gets its digest once it is. Its stat (size,
 * stamp, recent, and the entry's mode, size and mtime) is filled by the platform (Node:
 * `statFiles` on this thread, or the ingest worker that opens it, `applyStat`); `size` is -1
 * until then.
 */
export interface ScannedFile {
  path: string;
  size: number;
  entry: FileEntry;
  /**
   * What the file looked like (device, inode, size, modification and change times): equal
   * stamps at two scans mean the same bytes, unless `recent` (FORMAT.md §13.4).
   */
  stamp: string;
  /** Modified or changed less than RECENT_MS before the scan began: its stamp is not trusted. */
  recent: boolean;
}

/**
 * A file modified this close to a scan may change again within the same timestamp tick after
 * it was read, leaving its stamp as it was: such files are read again next time (like git's
 * "racily clean" entries).
 */
export const RECENT_MS = 2000;

export interface Scan {
  root: DirNode;
  files: ScannedFile[];
  /** Entries that are neither files, directories nor symlinks (sockets, devices, fifos). */
  skipped: string[];
  /** Entries left out because their names are not UTF-8 (paths shown as names.ts `escapedName`). */
  notUtf8: string[];
  /** Entries left out because a tree cannot hold their names (a backslash, over 1,024 characters), and why. */
  badNames?: { path: string; why: string }[];
  /** Directories and links deleted between their parent's listing and their own read. */
  vanished: string[];
  /** Directories that could not be read (no permission): recorded empty, their entries left out. */
  unreadable?: string[];
  /** Entries left out by exclude patterns (an excluded directory counts once). */
  excluded: number;
  /** Files changed at or after this time (ms) are `recent`. */
  settledBefore: number;
  /** Whether entries record modification times. */
  mtime: boolean;
}

/** Takes files deleted since the scan out of its tree and its file list. */
export function leaveOut(scan: Scan, gone: ReadonlySet<ScannedFile>): void {
  const entries = new Set<FileEntry>([...gone].map((f) => f.entry));
  // (A stack, not recursion: a tree may be ~2,000 directories deep.)
  const todo: DirNode[] = [scan.root];
  for (let node = todo.pop(); node; node = todo.pop()) {
    node.entries = node.entries.filter((e) => !(e.type === 'file' && entries.has(e)));
    for (const e of node.entries) if (e.type === 'dir') todo.push(e);
  }
  scan.files = scan.files.filter((f) => !gone.has(f));
}

/**
 * How far a snapshot has got (Store.snapshot's `onProgress`): while the tree is scanned
 * (`scan`: after each directory, `total` = files found so far), then as each file is done.
 */
export interface SnapshotProgress {
  phase: 'scan' | 'files';
  /** Regular files in the tree (while scanning: found so far). */
  total: number;
  /** Files done: read and stored, or unchanged since an earlier snapshot and not read. */
  files: number;
  /** Bytes of the files read so far. */
  bytes: number;
  /** Of `files`, those not read (unchanged). */
  reused: number;
}

