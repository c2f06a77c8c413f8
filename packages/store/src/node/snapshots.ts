/**
 * Snapshots of real directories (FORMAT.md §13): reading a tree from disk (lstat, no link
 * following, names checked), and restoring one without ever writing outside the target.
 */
import { isUtf8 } from 'node:buffer';
import { escapedName } from './names.js';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  fchmodSync,
  ftruncateSync,
  futimesSync,
  renameSync,
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
  type Stats,
} from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { InvalidInputError, isKuraError } from '@kura/core';
import { NotFoundError } from '../errors.js';
import { breather } from '../breather.js';
import { leavesHole } from './holes.js';
import { openForWriting } from './open-files.js';
import type { Excluder } from './exclude.js';
import type { SourceStat } from '../ingest/small-batch.js';
import { badName, type DirNode, type FileEntry, type SymlinkEntry, type WalkEntry } from '../catalog/snapshot.js';
import { RECENT_MS, type Scan, type ScannedFile } from '../snapshot-scan.js';

export { RECENT_MS, leaveOut, type Scan, type ScannedFile, type SnapshotProgress } from '../snapshot-scan.js';

/** The fields of a stat a snapshot keeps (lstat here, or fstat of the open file on a worker). */
export type FileStat = SourceStat;

/**
 * A time as a tree records it: the ms it falls in, cut (floored), never rounded — rounded,
 * 23:59:59.9996 was recorded, and restored, as the next day's 00:00:00.000 (a trial). Floor,
 * not a cut toward zero: a time before 1970 is negative. (Node's `mtimeMs` is a double: a time
 * within a fraction of a µs of the next ms may already read as that ms; so it stays.)
 */
export const msOf = (mtimeMs: number): number => Math.floor(mtimeMs);

/**
 * A time in ms as `utimes` sets it exactly: seconds, as a numeric string (a negative number is
 * "now" to Node), half a µs further from zero than the ms itself. A Date's seconds are a double
 * that libuv cuts to the µs toward zero, so half of all times came back a µs early (…122.999
 * for …123) and, cut to the ms again, a ms early; the half µs puts the cut on the ms itself,
 * before 1970 too.
 */
export const fsTime = (ms: number): string => String(ms / 1000 + (ms < 0 ? -5e-7 : 5e-7));

/** Fills a scanned file's stamp and entry from its stat. */
export function applyStat(scan: Scan, f: ScannedFile, st: FileStat): void {
  f.size = st.size;
  f.entry.size = st.size;
  f.entry.mode = st.mode & 0o7777;
  if (scan.mtime) f.entry.mtime = msOf(st.mtimeMs);
  f.stamp = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  // A modification time a day or more ahead was set by hand (`touch -d 2099-…`), not by a
  // write, which sets the change time too: it alone made the file recent at every scan, read
  // again each time (a trial). The change time, which only the system sets, still counts.
  const mtime = st.mtimeMs >= scan.settledBefore + FUTURE_MS ? -Infinity : st.mtimeMs;
  f.recent = Math.max(mtime, st.ctimeMs) >= scan.settledBefore;
}

/** A modification time this far past a scan's start is not a recent write (applyStat). */
const FUTURE_MS = 24 * 3600 * 1000;

/**
 * lstat of each file on this thread (repeated snapshots compare stamps before reading
 * anything). Returns the files deleted since the scan listed them.
 */
export function statFiles(scan: Scan, files: readonly ScannedFile[], onUnreadable?: (f: ScannedFile, e: Error) => void): ScannedFile[] {
  const gone: ScannedFile[] = [];
  for (const f of files) {
    let st: Stats | undefined;
    try {
      st = orGone(() => lstatSync(f.path));
    } catch (e) {
      // (A watch: one file it may not look at is said and left out, returned with those gone.)
      if (!onUnreadable || !['EACCES', 'EPERM'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
      onUnreadable(f, e as Error);
      gone.push(f);
      continue;
    }
    if (!st) {
      gone.push(f);
      continue;
    }
    if (!st.isFile()) throw new InvalidInputError(`${f.path} is no longer a regular file (changed while the snapshot ran)`, 'path');
    applyStat(scan, f, st);
  }
  return gone;
}

/**
 * Reads a directory tree: sorted, O(entries), entry types from the directory itself (symlinks
 * are recorded, never followed); directories are lstat'ed here, files later (`statFiles`,
 * `applyStat`). `onFile` hears of each regular file as it is found, `onDirectory` of the files
 * found so far after each directory. A tree of many directories takes seconds: the scan
 * breathes between directories (breather.ts).
 */
export async function scanDirectory(
  dir: string,
  options: {
    mtime: boolean;
    exclude?: Excluder | undefined;
    onFile?: (file: ScannedFile) => void;
    onDirectory?: (filesSoFar: number) => void;
    /** Hears of an entry whose name a tree cannot hold (a watch); absent: the scan lists it in `badNames`. Either way it is left out. */
    onBadName?: (path: string, why: string) => void;
    /**
     * Hears of a directory below `dir` that cannot be read (no permission) and leaves its
     * entries out (a watch: it goes on with the rest); absent: the scan fails.
     */
    onUnreadable?: (path: string, e: Error) => void;
  },
): Promise<Scan> {
  const { exclude } = options;
  let excluded = 0;
  const files: ScannedFile[] = [];
  const skipped: string[] = [];
  const notUtf8: string[] = [];
  const badNames: { path: string; why: string }[] = [];
  const vanished: string[] = [];
  const settledBefore = Date.now() - RECENT_MS;
  const top = lstatSync(dir);
  if (top.isSymbolicLink()) throw new InvalidInputError(`${dir} is a symbolic link (to ${readlinkSync(dir)}): a snapshot follows no link — give the directory itself`, 'dir');
  if (!top.isDirectory()) throw new InvalidInputError(`${dir} is not a directory`, 'dir');
  const breathe = breather();
  /** The tree below `path`; undefined when the directory was deleted since its parent was listed. */
  const scan = async (path: string, rel: string, name: string, mode: number, mtime: number): Promise<DirNode | undefined> => {
    const node: DirNode = { type: 'dir', name, mode, entries: [], ...(options.mtime ? { mtime } : {}) };
    await breathe();
    let dirents: Dirent<Buffer>[] | undefined;
    try {
      dirents = orGone(() => readdirSync(path, { withFileTypes: true, encoding: 'buffer' }) as unknown as Dirent<Buffer>[]);
    } catch (e) {
      if (!options.onUnreadable || path === dir || !['EACCES', 'EPERM'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
      options.onUnreadable(path, e as Error);
      return node; // its files unknown: left out, and said
    }
    if (!dirents) return undefined;
    /**
     * An entry's lstat or readlink, or DENIED: the directory lists but cannot be entered (r
     * without x), which onUnreadable heard (else the scan fails), and its entries are left out.
     */
    const entered = <T>(read: () => T): T | undefined | typeof DENIED => {
      try {
        return orGone(read);
      } catch (e) {
        if (!options.onUnreadable || !['EACCES', 'EPERM'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
        options.onUnreadable(path, e as Error);
        return DENIED;
      }
    };
    for (const d of dirents) {
      const raw = d.name as unknown as Buffer;
      // Concatenated, not path.join: `path` is normalized and a name has no separator (join's
      // normalizing was a visible part of a 10,000-file scan).
      const full = path.endsWith('/') ? path + raw.toString() : `${path}/${raw.toString()}`;
      // Excluded entries are left out before anything else: not read, and not checked either
      // (a name a snapshot cannot hold does not fail it when it is excluded).
      const relPath = !exclude ? '' : rel ? `${rel}/${raw.toString()}` : raw.toString();
      if (exclude?.(relPath, raw.toString(), d.isDirectory())) {
        excluded++;
        continue;
      }
      if (!isUtf8(raw)) {
        // A tree records names exactly, as UTF-8 text: such a name cannot be one. Left out and
        // reported (like a socket), so one odd name does not cost the snapshot of the rest.
        notUtf8.push(join(path, escapedName(raw)));
        continue;
      }
      const entryName = raw.toString('utf8');
      // Left out and said, as a name that is not UTF-8 is: one `back\slash.txt` failed the
      // snapshot of a whole home folder (a trial).
      const why = badName(entryName);
      if (why) {
        if (options.onBadName) options.onBadName(full, why);
        else badNames.push({ path: full, why });
        continue;
      }
      if (d.isDirectory()) {
        const st = entered(() => lstatSync(full));
        if (st === DENIED) return node;
        if (st && !st.isDirectory()) throw new InvalidInputError(`${full} is no longer a directory (changed while the snapshot ran)`, 'path');
        const sub = st && (await scan(full, relPath, entryName, st.mode & 0o7777, msOf(st.mtimeMs)));
        if (sub) node.entries.push(sub);
        else vanished.push(full);
      } else if (d.isSymbolicLink()) {
        const target = entered(() => readlinkSync(full));
        if (target === DENIED) return node;
        if (target !== undefined) node.entries.push({ type: 'symlink', name: entryName, target } satisfies SymlinkEntry);
        else vanished.push(full);
      } else if (d.isFile()) {
        const entry: FileEntry = { type: 'file', name: entryName, mode: 0, size: 0, digest: 'sha256:' };
        node.entries.push(entry);
        const file: ScannedFile = { path: full, size: -1, entry, stamp: '', recent: true };
        files.push(file);
        options.onFile?.(file);
      } else skipped.push(full);
    }
    options.onDirectory?.(files.length);
    return node;
  };
  const root = await scan(dir, '', '', top.mode & 0o7777, msOf(top.mtimeMs));
  if (!root) throw new InvalidInputError(`${dir} was deleted while the snapshot ran`, 'dir');
  return { root, files, skipped, notUtf8, badNames, vanished, excluded, settledBefore, mtime: options.mtime };
}

/** What `entered` answers for an entry of a directory that cannot be entered. */
const DENIED = Symbol('denied');

/** `read()`, or undefined when what it reads does not exist (any more). */
function orGone<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

export interface RestoreReport {
  files: number;
  dirs: number;
  symlinks: number;
  bytes: number;
  /** Of `bytes`, the zeros left as holes (sparse files: decision 0074), not written. */
  holes: number;
  /**
   * Links restored as they were recorded that point outside the restored tree (absolute, or
   * climbing out of it), with their targets: nothing is written through them, but whoever
   * follows one later leaves the tree.
   */
  linksOutside: { path: string; target: string }[];
  /**
   * Files whose document is damaged in the store (CORRUPT_DATA): not written (never a file of
   * bytes that fail their digest), and the restore went on with the others — it stopped at the
   * first, leaving every file after it unrestored (a trial). Empty when all were whole.
   */
  damaged: { path: string; digest: string; message: string }[];
}

/** How far a restore has got (Store.restore's `onProgress`, called as each file is written). */
export interface RestoreProgress {
  /** Files in the snapshot. */
  total: number;
  /** Files written and checked. */
  files: number;
  /** Their bytes. */
  bytes: number;
}

/** Why a symlink at `path` (below the target) pointing to `target` leads outside the tree, or undefined. */
export function linkEscapes(path: string, target: string): string | undefined {
  if (target.startsWith('/')) return `an absolute link target ${JSON.stringify(target)}`;
  if (target.includes('\0')) return 'a link target with NUL';
  // `..` only as leading segments: after a name, `..` climbs from wherever that name points on
  // disk (another link: `s -> ..` then `l -> s/../..` escapes though it normalizes inside).
  // A link's own ancestors are real directories of the tree, so leading `..` resolves on disk
  // as it does here.
  const segments = target.split('/').filter((x) => x !== '' && x !== '.');
  let up = 0;
  while (segments[up] === '..') up++;
  if (segments.slice(up).includes('..')) return `a link target ${JSON.stringify(target)} with ".." after a name`;
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  if (resolved === '..' || resolved.startsWith('../')) return `a link target ${JSON.stringify(target)} outside the tree`;
  return undefined;
}

/**
 * The names of the temporary files a restore writes beside the files it restores (openTemp):
 * `.kura-restore-` and 12 hex digits. One killed mid-file (kill -9, a crash) leaves its file of
 * that name; a later restore into the same directories removes them (`removeLeftovers`).
 */
export const RESTORE_TEMP = /^\.kura-restore-[0-9a-f]{12}$/;

/**
 * The target directory a restore was given, as an absolute path. `""` names none: resolved, it
 * was the current directory, which a restore then filled (with `overwrite`, over what was
 * there: a trial). `.` says the current directory.
 */
export function restoreTarget(target: string): string {
  if (typeof target !== 'string' || target === '') throw new InvalidInputError('the target directory is "": give a directory to restore into (. for the current one)', 'target');
  return resolve(target);
}

/**
 * The entries a restore of only `include` writes: each path named (`/`-separated from the
 * snapshot's root, as `snapshotEntries` and `kura ls` give them; a leading `./` and trailing
 * `/` are taken off), everything under a directory named, and the directories above them, so
 * each lands where it was under the target (restic's `restore --include` does the same). A path
 * the snapshot does not hold is NOT_FOUND, one that is not such a path INVALID_INPUT: found
 * before anything is written.
 */
export function includedEntries(entries: readonly WalkEntry[], include: readonly string[], id: string): WalkEntry[] {
  if (!Array.isArray(include) || include.length === 0) throw new InvalidInputError('include names no path: give the paths in the snapshot to restore, or leave it out to restore all of it', 'include');
  const named = new Set<string>();
  const above = new Set<string>();
  for (const raw of include) {
    if (typeof raw !== 'string') throw new InvalidInputError('include is a list of paths in the snapshot', 'include');
    const path = raw.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
    const names = path.split('/');
    if (path.startsWith('/') || names.some((n) => n === '' || n === '.' || n === '..')) {
      throw new InvalidInputError(`${JSON.stringify(raw)} is not a path in the snapshot: give it from the snapshot's root, as kura ls shows it (e.g. docs/notes.txt)`, 'include');
    }
    named.add(path);
    for (let i = 1; i < names.length; i++) above.add(names.slice(0, i).join('/'));
  }
  const found = new Set<string>();
  const out = entries.filter(({ path }) => {
    if (named.has(path)) return found.add(path);
    if (above.has(path)) return true;
    for (let at = path.lastIndexOf('/'); at > 0; at = path.lastIndexOf('/', at - 1)) if (named.has(path.slice(0, at))) return true;
    return false;
  });
  for (const path of named) if (!found.has(path)) throw new NotFoundError(`snapshot ${id} holds nothing at ${path}`);
  return out;
}

/**
 * Directories already there that a restore made readable, writable and searchable for their
 * owner while it writes (a read-only or unsearchable directory refused its files or the lstat
 * of what is in them), with the modes they had. The snapshot's directories get their recorded
 * modes at the end of a restore that finishes; the target, whose own mode no tree records, gets
 * its own back whatever happens, as do all of them when the restore fails.
 */
export class OpenedDirs {
  #target: { path: string; mode: number } | undefined;
  readonly #dirs: { path: string; mode: number }[] = [];

  /** Gives `path`'s owner rwx on it (`st`: its lstat) and remembers its mode; `target`: the restore's target. */
  open(path: string, st: Stats, target = false): void {
    if ((st.mode & 0o700) === 0o700) return;
    try {
      chmodSync(path, (st.mode & 0o7777) | 0o700);
    } catch (e) {
      // Not its owner (nor root): left as it is, and what then fails says its path.
      if (['EPERM', 'EACCES'].includes((e as NodeJS.ErrnoException).code ?? '')) return;
      throw e;
    }
    const opened = { path, mode: st.mode & 0o7777 };
    if (target) this.#target = opened;
    else this.#dirs.push(opened);
  }

  /** The snapshot's directories have their recorded modes now: only the target's is left to put back. */
  settled(): void {
    this.#dirs.length = 0;
  }

  /** Puts back the modes of those opened (deepest first), the target's last. */
  putBack(): void {
    for (const d of [...this.#dirs.splice(0).reverse(), ...(this.#target ? [this.#target] : [])]) {
      try {
        chmodSync(d.path, d.mode);
      } catch {
        /* gone meanwhile: nothing to put back */
      }
    }
    this.#target = undefined;
  }
}

/**
 * Everything a restore does before it writes a file: the target, when it is a directory already
 * there, made readable, writable and searchable for its owner (FORMAT.md §13: a read-only empty
 * target refused the first file's temporary name); every entry checked (`checkRestorable`);
 * the target made or found empty (`prepareTarget`). Answers the directories it opened, whose
 * modes `restoreEntries` then puts back; when a check fails they are put back here (nothing
 * else was changed).
 */
export function prepareRestore(entries: WalkEntry[], target: string, overwrite: boolean): OpenedDirs {
  const opened = new OpenedDirs();
  try {
    let st: Stats | undefined;
    try {
      st = lstatSync(target, { throwIfNoEntry: false });
    } catch {
      st = undefined; // (a file or a forbidden directory above it: prepareTarget says why it cannot be made)
    }
    if (st?.isDirectory()) opened.open(target, st, true);
    checkRestorable(entries, target, overwrite, opened);
    prepareTarget(target, overwrite);
  } catch (e) {
    opened.putBack();
    throw e;
  }
  return opened;
}

/**
 * Checks every entry before anything is written: names were checked when the trees were
 * decoded; here the links (a target no link can have), and — restoring over what is there —
 * every path against what is in its way, so that a restore that cannot finish writes nothing
 * (it stopped at the first conflict, half done). A link pointing outside the tree is restored
 * as it was recorded, as tar and restic do: making a link writes nothing where it points, and
 * restore never writes through one (it refused the whole tree for one `/usr/bin/python3`).
 * A directory there that its owner cannot search or write (one a first restore made with the
 * snapshot's mode 400) is opened for the owner first (`opened`), so what is in it can be seen:
 * a second restore over it failed with EACCES on its files (a trial).
 */
export function checkRestorable(entries: WalkEntry[], target?: string, overwrite = false, opened?: OpenedDirs): void {
  const inTheWay: string[] = [];
  for (const { path, entry } of entries) {
    if (entry.type === 'symlink' && entry.target.includes('\0')) throw new InvalidInputError(`refusing to restore ${path}: a link target with NUL`, 'snapshot');
    if (!overwrite || target === undefined) continue;
    const full = join(target, ...path.split('/'));
    let there: Stats | undefined;
    try {
      there = lstatSync(full, { throwIfNoEntry: false });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOTDIR') throw e; // (under a file in the way: said for it)
    }
    if (!there) continue;
    if (entry.type === 'dir' && !there.isDirectory()) inTheWay.push(`${path} (the snapshot has a directory there)`);
    else if (entry.type !== 'dir' && there.isDirectory()) inTheWay.push(`${path} (a directory where the snapshot has a ${entry.type === 'file' ? 'file' : 'link'})`);
    else if (entry.type === 'dir') opened?.open(full, there); // (its entries come next)
  }
  if (inTheWay.length) {
    const shown = inTheWay.slice(0, 5).join(', ');
    throw new InvalidInputError(`refusing to restore into ${target}: ${inTheWay.length} path${inTheWay.length === 1 ? ' is' : 's are'} in the way, nothing was written: ${shown}${inTheWay.length > 5 ? ', …' : ''}`, 'target');
  }
}

/**
 * `dir` and the directories above it that are missing, one by one: Node's recursive mkdir spun
 * forever at full CPU where a directory cannot be made (`/proc/nope`: mkdir says ENOENT, its
 * parent exists — a trial). A directory that cannot be made is INVALID_INPUT naming why.
 */
function makeDirectories(dir: string): void {
  const missing: string[] = [];
  for (let at = resolve(dir); !existsSync(at); at = dirname(at)) {
    missing.unshift(at);
    if (dirname(at) === at) break;
  }
  for (const d of missing) {
    try {
      mkdirSync(d);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      // A path that cannot name a directory (a file on the way, a place that takes none: /proc)
      // is the caller's to mend (usage); a permission, a read-only or full disk is the system's,
      // as anywhere else in a restore.
      if (code === 'ENOTDIR' || code === 'ENOENT' || code === 'ENAMETOOLONG' || code === 'EINVAL') throw new InvalidInputError(`cannot make ${d} to restore into (${code})`, 'target');
      throw e;
    }
  }
}

/**
 * The target: created when missing; must be an empty directory unless `overwrite` (temporary
 * files an earlier restore left there, killed, do not count: they are removed).
 */
export function prepareTarget(target: string, overwrite: boolean): void {
  let st;
  try {
    st = lstatSync(target);
  } catch {
    makeDirectories(target);
    return;
  }
  if (st.isSymbolicLink()) throw new InvalidInputError(`${target} is a symbolic link (to ${readlinkSync(target)}): a restore writes through no link — give the directory itself`, 'target');
  if (!st.isDirectory()) throw new InvalidInputError(`${target} exists and is not a directory`, 'target');
  if (!overwrite && readdirSync(target).some((name) => !RESTORE_TEMP.test(name))) throw new InvalidInputError(`${target} is not empty (restore into an empty directory, or overwrite)`, 'target');
}

/**
 * Removes what a restore killed mid-file left in `dir`: regular files named as openTemp names
 * them. (Left there, a rerun kept them for good and the next snapshot recorded them: a trial.)
 * A file of the snapshot with such a name is written after this, so it stays.
 */
function removeLeftovers(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    // (A target it may write into but not list — not its owner's: none it could see to remove.)
    if (['EACCES', 'EPERM'].includes((e as NodeJS.ErrnoException).code ?? '')) return;
    throw e;
  }
  const temps = names.filter((name) => RESTORE_TEMP.test(name)).map((name) => join(dir, name));
  if (temps.length === 0) return;
  // One another restore into the same directory is writing is its own, not a leftover: held open
  // for writing (Linux's /proc), or, where that cannot be seen, changed within LEFTOVER_MS.
  const writing = openForWriting(new Set(temps));
  for (const full of temps) {
    const st = lstatSync(full, { throwIfNoEntry: false });
    if (!st?.isFile()) continue;
    if (writing ? writing.has(full) : Date.now() - st.mtimeMs < LEFTOVER_MS) continue;
    rmSync(full, { force: true });
  }
}

/** Where no process's open files can be seen: a temporary file unchanged this long is a leftover. */
const LEFTOVER_MS = 10 * 60_000;

/**
 * A new file beside `full` to write the bytes into (O_EXCL|O_NOFOLLOW: never an existing
 * inode, link, fifo or device); renamed over `full` only once its bytes are complete and
 * checked, so an existing file is never truncated for a restore that then fails.
 */
function openTemp(full: string): { fd: number; temp: string } {
  // A name of its own length in the same directory (the rename stays atomic): `full`'s name
  // with a suffix would pass NAME_MAX for names the snapshot held (over ~228 bytes).
  const temp = join(dirname(full), `.kura-restore-${randomBytes(6).toString('hex')}`);
  try {
    return { fd: openSync(temp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, 0o600), temp };
  } catch (e) {
    // Named for the file restored, not the temporary name it never got (a trial's error named
    // `…/.kura-restore-0dfe43edd071`).
    if (typeof (e as NodeJS.ErrnoException).path === 'string') (e as NodeJS.ErrnoException).path = full;
    throw e;
  }
}

/**
 * An existing path component must be a real directory (not a link to elsewhere); one there
 * already is made writable for its owner while the restore writes into it (a read-only
 * directory a first restore made refused the second's files; `opened` puts its mode back if the
 * restore fails, else its recorded mode is set last), and the temporary files a killed restore
 * left in it go.
 */
function ensureDir(full: string, overwrite: boolean, opened: OpenedDirs): void {
  try {
    mkdirSync(full, 0o700);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !overwrite) throw e;
    const st = lstatSync(full);
    if (!st.isDirectory()) throw new InvalidInputError(`refusing to restore into ${full}: it exists and is not a directory`, 'target');
    opened.open(full, st);
    removeLeftovers(full);
  }
}

/** A mode as a restore sets it: permission bits and the sticky bit (a 1777 directory came back 0777); never set-id bits. */
const restoredMode = (mode: number) => mode & 0o1777;

export async function restoreEntries(
  entries: WalkEntry[],
  target: string,
  overwrite: boolean,
  read: (digest: string) => Promise<AsyncIterable<Uint8Array>>,
  onProgress?: (p: RestoreProgress) => void,
  /** Stops the restore between files and between a file's chunks (the file being written goes). */
  signal?: AbortSignal,
  /** What prepareRestore opened: modes put back at the end (the target's always, the others' when the restore fails). */
  opened: OpenedDirs = new OpenedDirs(),
): Promise<RestoreReport> {
  try {
    removeLeftovers(target);
    const report = await writeEntries(entries, target, overwrite, read, opened, onProgress, signal);
    opened.settled();
    return report;
  } finally {
    opened.putBack();
  }
}

async function writeEntries(
  entries: WalkEntry[],
  target: string,
  overwrite: boolean,
  read: (digest: string) => Promise<AsyncIterable<Uint8Array>>,
  opened: OpenedDirs,
  onProgress?: (p: RestoreProgress) => void,
  signal?: AbortSignal,
): Promise<RestoreReport> {
  const report: RestoreReport = { files: 0, dirs: 0, symlinks: 0, bytes: 0, holes: 0, linksOutside: [], damaged: [] };
  const total = onProgress ? entries.filter((e) => e.entry.type === 'file').length : 0;
  const dirs: { full: string; mode: number; mtime?: number | undefined }[] = [];
  const breathe = breather();
  for (const { path, entry } of entries) {
    await breathe();
    signal?.throwIfAborted();
    const full = join(target, ...path.split('/'));
    if (entry.type === 'dir') {
      ensureDir(full, overwrite, opened);
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
      if (linkEscapes(path, entry.target)) report.linksOutside.push({ path, target: entry.target });
    } else {
      let existing;
      try {
        existing = lstatSync(full);
      } catch {
        existing = undefined;
      }
      if (existing && (!overwrite || existing.isDirectory())) {
        throw new InvalidInputError(`refusing to restore ${full}: it exists${existing.isDirectory() ? ' and is a directory' : ''}`, 'target');
      }
      const { fd, temp } = openTemp(full);
      try {
        let written = 0;
        let holes = 0;
        for await (const piece of await read(entry.digest)) {
          // A piece of zeros is left a hole (a sparse file, as `cp --sparse` and restic's
          // `restore --sparse` make them): it reads back as the same zeros, and a disk image's
          // or a database's empty space takes no disk (written, it all did: decision 0074).
          if (leavesHole(piece)) holes += piece.length;
          else for (let at = 0; at < piece.length; ) at += writeSync(fd, piece, at, piece.length - at, written + at);
          written += piece.length;
          // (A turn now and then within a large file too: Ctrl-C is heard, and stops it here.)
          await breathe();
          signal?.throwIfAborted();
        }
        ftruncateSync(fd, written); // (the length of a file that ends in a hole)
        try {
          fchmodSync(fd, restoredMode(entry.mode));
        } catch (e) {
          // (BSDs refuse the sticky bit on a file to all but root; it means nothing on one.)
          if ((e as NodeJS.ErrnoException).code !== 'EFTYPE') throw e;
          fchmodSync(fd, entry.mode & 0o777);
        }
        // (As numeric strings, not Dates: see fsTime. Node takes a negative number of seconds
        // for "now": a time before 1970 was restored as the moment of the restore — a trial.)
        if (entry.mtime !== undefined) futimesSync(fd, fsTime(entry.mtime), fsTime(entry.mtime));
        closeSync(fd);
        // The stream ended without error: every chunk and the whole digest were checked.
        renameSync(temp, full); // replaces a file or link there (overwrite), never its inode
        report.bytes += written;
        report.holes += holes;
      } catch (e) {
        try {
          closeSync(fd);
        } catch {
          /* closed already */
        }
        rmSync(temp, { force: true }); // never a short file, and the old one stays
        if (isKuraError(e) && e.code === 'CORRUPT_DATA') {
          report.damaged.push({ path, digest: entry.digest, message: e.message });
          continue;
        }
        // The snapshot held this document: gone now, the snapshot was deleted (and collected)
        // while it was restored — said so, not as a document never stored (a trial).
        if (isKuraError(e) && e.code === 'NOT_FOUND') throw new NotFoundError(`${path}: its document ${entry.digest} is gone: the snapshot was deleted while it was restored (${e.message})`);
        // A file-system error names the file restored, not the temporary one beside it.
        if (typeof (e as NodeJS.ErrnoException).path === 'string') (e as NodeJS.ErrnoException).path = full;
        throw e;
      }
      report.files++;
      onProgress?.({ total, files: report.files, bytes: report.bytes });
    }
  }
  // Directory modes and times last (deepest first): contents are written, and a read-only
  // directory would have refused them.
  for (const d of dirs.reverse()) {
    chmodSync(d.full, restoredMode(d.mode));
    if (d.mtime !== undefined) utimesSync(d.full, fsTime(d.mtime), fsTime(d.mtime));
  }
  return report;
}
