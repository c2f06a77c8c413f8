/**
 * A snapshot of files a browser was given — a dropped or picked folder, each File with its
 * path relative to it: the platform's part of snapshot-run.ts. The tree is made from the paths
 * (directories are those the paths pass through); files are read through the store's ingest
 * workers (put-many.ts).
 *
 * A browser tells a file's size and last-modified time, not its inode or change time: too
 * little to prove a file unchanged (FORMAT.md §13.4), so no stamps are kept and every snapshot
 * reads every file; its chunks deduplicate against the store, so only what changed is stored.
 */
import { InvalidInputError } from '@kura/core';
import { badName, type DirNode, type FileEntry } from '../catalog/snapshot.js';
import { putMany, type ManyPuts, type ManySources } from '../put-many.js';
import type { Scan, ScannedFile } from '../snapshot-scan.js';
import type { SnapshotSource } from '../snapshot-run.js';

/** A file of the tree: its path below the tree's top, `/`-separated (`docs/a.txt`). */
export interface FileInTree {
  path: string;
  file: Blob & { lastModified?: number };
}

const FILE_MODE = 0o644;
const DIR_MODE = 0o755;

/**
 * The tree the files make: directories from their paths, entries with the files' sizes and
 * (with `mtime`) last-modified times. A path with an empty, `.` or `..` part, a name a tree
 * cannot hold, or a name given twice is INVALID_INPUT.
 */
export function scanFiles(files: readonly FileInTree[], mtime = true): { scan: Scan; fileOf: Map<ScannedFile, FileInTree> } {
  const root: DirNode = { type: 'dir', name: '', mode: DIR_MODE, entries: [] };
  const dirs = new Map<string, DirNode>([['', root]]);
  const taken = new Set<string>(); // every path named, directories included
  const dirAt = (parts: string[]): DirNode => {
    let node = root;
    for (let i = 0; i < parts.length; i++) {
      const path = parts.slice(0, i + 1).join('/');
      let next = dirs.get(path);
      if (!next) {
        if (taken.has(path)) throw new InvalidInputError(`${path} is both a file and a folder`, 'path');
        next = { type: 'dir', name: parts[i]!, mode: DIR_MODE, entries: [] };
        node.entries.push(next);
        dirs.set(path, next);
        taken.add(path);
      }
      node = next;
    }
    return node;
  };
  const scanned: ScannedFile[] = [];
  const fileOf = new Map<ScannedFile, FileInTree>();
  for (const f of files) {
    const parts = f.path.split('/');
    for (const part of parts) {
      const why = part === '' || part === '.' || part === '..' ? `an empty, "." or ".." name` : badName(part);
      if (why) throw new InvalidInputError(`${f.path}: a snapshot cannot hold ${why}`, 'path');
    }
    if (taken.has(f.path)) throw new InvalidInputError(`${f.path} is given twice, or is a folder too`, 'path');
    const dir = dirAt(parts.slice(0, -1));
    taken.add(f.path);
    const entry: FileEntry = { type: 'file', name: parts.at(-1)!, mode: FILE_MODE, size: f.file.size, digest: 'sha256:', ...(mtime && f.file.lastModified !== undefined ? { mtime: f.file.lastModified } : {}) };
    dir.entries.push(entry);
    const file: ScannedFile = { path: f.path, size: f.file.size, entry, stamp: '', recent: true };
    scanned.push(file);
    fileOf.set(file, f);
  }
  const scan: Scan = { root, files: scanned, skipped: [], notUtf8: [], vanished: [], excluded: 0, settledBefore: Date.now(), mtime };
  return { scan, fileOf };
}

/** The snapshot source of `files`, read through `sources` (the store's ingest workers, or this thread). */
export function filesSource(h: ManyPuts, files: readonly FileInTree[], sources: ManySources<Blob>, options: { mtime?: boolean } = {}): SnapshotSource {
  let fileOf = new Map<ScannedFile, FileInTree>();
  return {
    scan: async () => {
      const made = scanFiles(files, options.mtime ?? true);
      fileOf = made.fileOf;
      return made.scan;
    },
    settle: () => [],
    put: async (scanned, record) => {
      const items = scanned.map((f) => ({ source: fileOf.get(f)!.file as Blob }));
      // A file that cannot be read fails the snapshot: a browser's File does not vanish.
      for await (const o of putMany(h, items, sources, { listed: false })) {
        if (!o.result) throw o.error;
        record(scanned[o.index]!, o.result);
      }
    },
  };
}
