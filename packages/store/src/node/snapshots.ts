/**
 * Snapshots of real directories (FORMAT.md §13): reading a tree from disk (lstat, no link
 * following, names checked), and restoring one without ever writing outside the target.
 */
import { isUtf8 } from 'node:buffer';
import {
  chmodSync,
  closeSync,
  constants as fsc,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeSync,
  type Dirent,
} from 'node:fs';
import { join, posix } from 'node:path';
import { InvalidInputError } from '@kura/core';
import { badName, type DirNode, type FileEntry, type SymlinkEntry, type WalkEntry } from '../snapshot.js';

/** A file found by the scan, to be put; `entry` gets its digest once it is. */
export interface ScannedFile {
  path: string;
  size: number;
  entry: FileEntry;
}

export interface Scan {
  root: DirNode;
  files: ScannedFile[];
  /** Entries that are neither files, directories nor symlinks (sockets, devices, fifos). */
  skipped: string[];
}

/** Reads a directory tree: sorted, lstat (symlinks are recorded, never followed), O(entries). */
export function scanDirectory(dir: string, options: { mtime: boolean }): Scan {
  const files: ScannedFile[] = [];
  const skipped: string[] = [];
  const top = lstatSync(dir);
  if (!top.isDirectory()) throw new InvalidInputError(`${dir} is not a directory`, 'dir');
  const scan = (path: string, name: string, mode: number, mtime: number): DirNode => {
    const node: DirNode = { type: 'dir', name, mode, entries: [], ...(options.mtime ? { mtime } : {}) };
    const dirents = readdirSync(path, { withFileTypes: true, encoding: 'buffer' }) as unknown as Dirent<Buffer>[];
    for (const d of dirents) {
      const raw = d.name as unknown as Buffer;
      const full = join(path, raw.toString());
      if (!isUtf8(raw)) throw new InvalidInputError(`${join(path, raw.toString('latin1'))}: the name is not valid UTF-8; a snapshot records names exactly`, 'name');
      const entryName = raw.toString('utf8');
      const why = badName(entryName);
      if (why) throw new InvalidInputError(`${full}: a snapshot cannot hold ${why}`, 'name');
      const st = lstatSync(full);
      const m = st.mode & 0o7777;
      const t = Math.round(st.mtimeMs);
      if (st.isDirectory()) node.entries.push(scan(full, entryName, m, t));
      else if (st.isSymbolicLink()) node.entries.push({ type: 'symlink', name: entryName, target: readlinkSync(full) } satisfies SymlinkEntry);
      else if (st.isFile()) {
        const entry: FileEntry = { type: 'file', name: entryName, mode: m, size: st.size, digest: 'sha256:', ...(options.mtime ? { mtime: t } : {}) };
        node.entries.push(entry);
        files.push({ path: full, size: st.size, entry });
      } else skipped.push(full);
    }
    return node;
  };
  return { root: scan(dir, '', top.mode & 0o7777, Math.round(top.mtimeMs)), files, skipped };
}

export interface RestoreReport {
  files: number;
  dirs: number;
  symlinks: number;
  bytes: number;
}

/** Why a symlink at `path` (below the target) pointing to `target` would escape, or undefined. */
export function linkEscapes(path: string, target: string): string | undefined {
  if (target.startsWith('/')) return `an absolute link target ${JSON.stringify(target)}`;
  if (target.includes('\0')) return 'a link target with NUL';
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  if (resolved === '..' || resolved.startsWith('../')) return `a link target ${JSON.stringify(target)} outside the tree`;
  return undefined;
}

/**
 * Checks every entry before anything is written: names were checked when the trees were
 * decoded; here the links. A tree that would escape the target restores nothing.
 */
export function checkRestorable(entries: WalkEntry[]): void {
  for (const { path, entry } of entries) {
    if (entry.type === 'symlink') {
      const why = linkEscapes(path, entry.target);
      if (why) throw new InvalidInputError(`refusing to restore ${path}: ${why}`, 'snapshot');
    }
  }
}

/** The target: created when missing; must be an empty directory unless `overwrite`. */
export function prepareTarget(target: string, overwrite: boolean): void {
  let st;
  try {
    st = lstatSync(target);
  } catch {
    mkdirSync(target, { recursive: true });
    return;
  }
  if (!st.isDirectory()) throw new InvalidInputError(`${target} exists and is not a directory`, 'target');
  if (!overwrite && readdirSync(target).length > 0) throw new InvalidInputError(`${target} is not empty (restore into an empty directory, or overwrite)`, 'target');
}

/** Opens a file below the target for writing; never through a symlink, never over a directory. */
function openForRestore(full: string, overwrite: boolean): number {
  const flags = fsc.O_WRONLY | fsc.O_CREAT | fsc.O_NOFOLLOW | (overwrite ? fsc.O_TRUNC : fsc.O_EXCL);
  return openSync(full, flags, 0o600);
}

/** An existing path component must be a real directory (not a link to elsewhere). */
function ensureDir(full: string, overwrite: boolean): void {
  try {
    mkdirSync(full, 0o700);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !overwrite) throw e;
    if (!lstatSync(full).isDirectory()) throw new InvalidInputError(`refusing to restore into ${full}: it exists and is not a directory`, 'target');
  }
}

export async function restoreEntries(
  entries: WalkEntry[],
  target: string,
  overwrite: boolean,
  read: (digest: string) => Promise<AsyncIterable<Uint8Array>>,
): Promise<RestoreReport> {
  const report: RestoreReport = { files: 0, dirs: 0, symlinks: 0, bytes: 0 };
  const dirs: { full: string; mode: number; mtime?: number | undefined }[] = [];
  for (const { path, entry } of entries) {
    const full = join(target, ...path.split('/'));
    if (entry.type === 'dir') {
      ensureDir(full, overwrite);
      dirs.push({ full, mode: entry.mode, mtime: entry.mtime });
      report.dirs++;
    } else if (entry.type === 'symlink') {
      if (overwrite) {
        try {
          if (lstatSync(full).isDirectory()) throw new InvalidInputError(`refusing to replace the directory ${full} with a link`, 'target');
          unlinkSync(full);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        }
      }
      symlinkSync(entry.target, full);
      report.symlinks++;
    } else {
      const fd = openForRestore(full, overwrite);
      try {
        for await (const piece of await read(entry.digest)) {
          for (let at = 0; at < piece.length; ) at += writeSync(fd, piece, at, piece.length - at);
          report.bytes += piece.length;
        }
      } catch (e) {
        closeSync(fd);
        rmSync(full, { force: true }); // never leave a short file that looks restored
        throw e;
      }
      closeSync(fd);
      chmodSync(full, entry.mode & 0o777);
      if (entry.mtime !== undefined) utimesSync(full, entry.mtime / 1000, entry.mtime / 1000);
      report.files++;
    }
  }
  // Directory modes and times last (deepest first): contents are written, and a read-only
  // directory would have refused them.
  for (const d of dirs.reverse()) {
    chmodSync(d.full, d.mode & 0o777);
    if (d.mtime !== undefined) utimesSync(d.full, d.mtime / 1000, d.mtime / 1000);
  }
  return report;
}
