/**
 * A watch keeps a directory tree in the store (decision 0059): each regular file at
 * `prefix + its path from the tree`, a new version whenever its bytes change, and a file
 * deleted on disk deleted from the store with its versions kept (FORMAT.md §11). The watch
 * owns the paths under its prefix: what is there and not in the tree goes.
 *
 * - **Catch-up first**: the tree is scanned as a snapshot scans it; a file whose stamp (device,
 *   inode, size, times) is what a scan recorded for the digest its path shows is not read; the
 *   others are put (a put of the same bytes makes no version); paths under the prefix that no
 *   file has are deleted (versions kept). So a watch started again catches up on what changed
 *   while it was stopped.
 * - **Then changes**, from the OS's notifications (@parcel/watcher: inotify on Linux), each
 *   path stored once its writer has closed it and nothing has happened to it for 50 ms (on
 *   Linux, where /proc says which files are open for writing: open-files.ts), else once
 *   nothing has happened to it for `settleMs`: an editor's atomic save (a temporary file
 *   renamed over the old) stores the file once and never the temporary; a file written slowly
 *   is stored when its writer closes it; a rename is a delete and a create, whose
 *   bytes are not stored again (deduplicated). A directory created or moved in is scanned.
 * - Symlinks are never followed (nor stored); `.git`, `node_modules`, `.kura` and any Kura
 *   store inside the tree are left out, with the `exclude` patterns (exclude.ts).
 * - When the OS cannot watch the tree (inotify's watch limit), the watch says so and scans it
 *   every `scanMs` instead; `pollMs` scans it that often from the start (network file systems).
 *
 * Events are reported after their commit: a path reported stored is in the store, whatever
 * happens to this process next.
 */
import { existsSync, lstatSync, watch as fsWatch, type FSWatcher, type Stats } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { InvalidInputError } from '@kura/core';
import { badName } from '../catalog/snapshot.js';
import { cachedDigests, recordStamps } from '../catalog/stamps.js';
import { formatDigest } from '../hex.js';
import { detectMediaType } from '../media-types.js';
import { newPathProblem } from '../options.js';
import type { StoreContext } from '../store-context.js';
import type { Store as StoreCore } from '../store.js';
import { excluder, type Excluder } from './exclude.js';
import { vanished, type FilePutOutcome, type FileToPut, type PutFilesOptions } from './put-many.js';
import { SourceChangedError } from '../errors.js';
import { openForWriting } from './open-files.js';
import { scanDirectory, statFiles, type ScannedFile } from './snapshots.js';
import type { DirNode } from '../catalog/snapshot.js';

export interface WatchOptions {
  /** Where the tree goes in the store (default: the directory's name and `/`). */
  prefix?: string;
  /** Patterns to leave out, as `snapshot --exclude` reads them, besides the defaults. */
  exclude?: string[];
  /** Tags given to every path stored. */
  tags?: string[];
  /** Quiet time after a file's last change before it is stored when its writer cannot be seen to have closed it (default 500 ms). */
  settleMs?: number;
  /**
   * A file some process holds open for writing (Linux) is stored once its writer lets go, or
   * once this long has passed since its first change (default 60 s): a log a daemon never
   * closes is still kept, every so often, as it is read then.
   */
  openMaxMs?: number;
  /** How often the tree is scanned when the OS cannot watch it (default 30 s). */
  scanMs?: number;
  /**
   * How often the whole tree is checked against the store besides the OS's notifications,
   * which lose changes under load (default 1 h; 0: never). Changes found are stored, and said.
   */
  rescanMs?: number;
  /** @internal The OS's notifications (default: @parcel/watcher's subscribe); tests give a faulty twin. */
  osWatcher?: OsWatcher;
  /**
   * Scan the tree this often instead of listening to the OS (ms): for network file systems,
   * whose remote changes the OS never hears of. A file is stored as a scan finds it.
   */
  pollMs?: number;
  onEvent?: (event: WatchEvent) => void;
}

export type WatchEvent =
  | { type: 'ready'; stored: number; deleted: number; unchanged: number; ms: number }
  | { type: 'stored'; path: string; digest: string; size: number; newChunks: number }
  | { type: 'deleted'; path: string }
  | { type: 'scanning'; reason: string }
  | { type: 'error'; path?: string; message: string; code?: string };

/** What the watch needs of an OS watcher (@parcel/watcher's subscribe): changed paths, in batches. */
export type OsWatcher = (dir: string, onEvents: (err: Error | null, events: { path: string }[]) => void, opts: { ignore: string[] }) => Promise<{ unsubscribe(): Promise<void> }>;

export interface WatchHost {
  store: Pick<StoreCore, 'list' | 'deletePath'> & { putFiles(files: FileToPut[], options: PutFilesOptions): AsyncGenerator<FilePutOutcome> };
  context: (op: string) => StoreContext;
}

/** Left out of every watch: version control, dependencies, Kura's own default store. */
export const WATCH_EXCLUDED = ['.git', 'node_modules', '.kura'];
/**
 * Editors' files beside the one edited, never a note of anyone's: vim's swap files
 * (`.notes.md.swp`, `.swo`…) and the file it writes to test a directory (`4913`), backups
 * (`notes.md~`), Emacs's lock and autosave files (`.#notes.md`, `#notes.md#`), Kate's swap
 * files and LibreOffice's locks (`.~lock.report.odt#`). A swap file is held open while the
 * editor runs: the watch waited for it, stored it, and kept it as a deleted path when the
 * editor quit (a trial). Files only: a directory of such a name is watched.
 */
export const EDITOR_TEMPORARY = /^(?:\..+\.sw[a-p]|.+~|\.#.+|#.+#|4913|.+\.kate-swp|\.~lock\..+#)$/;
const SETTLE_MS = 500;
/**
 * Quiet time after which a file no process holds open for writing is stored without waiting
 * out the settle time (open-files.ts): a burst of files copied or unpacked is stored as its
 * writers close them. Long enough that an editor's save (write a temporary file, close it,
 * rename it over the old) has renamed before the temporary file is looked at.
 */
const CLOSED_QUIET_MS = 50;
/** After a store of changes failed (the storage did not answer), how long before they are tried again. */
export const RETRY_MS = 3_000;
const SCAN_MS = 30_000;
/** How often the whole tree is checked besides the OS's notifications (decision 0067). */
const RESCAN_MS = 3_600_000;
/** Why a name that is not UTF-8 is left out. */
const NOT_UTF8 = 'its name is not valid UTF-8 (the store holds names as UTF-8 text; shown with \\x escapes or U+FFFD): rename it to store it';

/** Files put per batch (one putFiles run). */
const BATCH = 512;
/**
 * A file some process holds open for writing waits for its writer to close it (a download, an
 * export written with pauses: each pause stored a partial version) — but no longer than this
 * after its first change: a log a daemon never closes is still kept, every so often.
 */
const OPEN_MAX_MS = 60_000;
/** How often the watched directory is checked to be the one the watch began on (moved away, deleted and made again). */
const ROOT_CHECK_MS = 2_000;

export class Watch {
  readonly root: string;
  readonly prefix: string;
  /** Resolves once the catch-up is done and changes are being followed. */
  readonly ready: Promise<void>;
  readonly #h: WatchHost;
  readonly #o: WatchOptions;
  readonly #exclude: Excluder;
  readonly #settleMs: number;
  readonly #openMaxMs: number;
  /** Paths (from the root) changed, with when they last changed. */
  readonly #pending = new Map<string, number>();
  /** When each pending path first changed since it was last stored (OPEN_MAX_MS). */
  readonly #since = new Map<string, number>();
  /** The watched directory's device and inode: the OS's notifications follow that directory, wherever it goes. */
  #rootId: string;
  #rootTimer: NodeJS.Timeout | undefined;
  /** The watched directory is not where it was (moved away, deleted): said once until it is back. */
  #rootGone = false;
  /** Of the paths being stored: when each first changed, and those past OPEN_MAX_MS (see #flush). */
  #dueSince = new Map<string, number>();
  #overdue = new Set<string>();
  /** Until when (ms since the epoch) nothing is stored: set by a failed store of changes. */
  #retryAt = 0;
  readonly #storeDirs = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #subscription: { unsubscribe(): Promise<void> } | undefined;
  #scanTimer: NodeJS.Timeout | undefined;
  #rescanTimer: NodeJS.Timeout | undefined;
  /** A periodic scan is waiting or running (#once). */
  #scanQueued = false;
  /**
   * The directories (from the root) the watch knows are there: those its scans found. A change
   * heard under one it does not know means the OS's notice of that directory was lost
   * (@parcel/watcher drops events under load, decision 0067) — and with it the files made in it
   * before the OS watched it: the directory is scanned, as if it had been heard.
   */
  readonly #knownDirs = new Set<string>();
  /**
   * Directories that appeared while watching, followed here as well (Linux, decision 0067):
   * @parcel/watcher follows a new directory, but not the directories already inside it when it
   * did (`mkdir -p a/b/c`, a tree moved in): changes in those were never heard.
   */
  readonly #ownWatches = new Map<string, FSWatcher>();
  #closed = false;

  constructor(h: WatchHost, dir: string, o: WatchOptions = {}) {
    this.#h = h;
    this.#o = o;
    this.root = resolve(dir);
    const top = lstatSync(this.root, { throwIfNoEntry: false });
    if (!top?.isDirectory()) throw new InvalidInputError(`${dir} is not a directory`, 'dir');
    this.#rootId = `${top.dev}:${top.ino}`;
    const prefix = o.prefix ?? `${basename(this.root)}/`;
    if (prefix !== '' && !prefix.endsWith('/')) throw new InvalidInputError(`a watch's prefix is a folder, ending with / ("${prefix}/"), or empty (the whole store), got "${prefix}"`, 'prefix');
    // Checked before anything is stored or deleted: a prefix no put may make (`/`, `../up/`,
    // `a//b/`) failed every file while the watch said it was watching (a trial).
    // (Checked as the folder of a path: `photos@2/` is one, though `photos@2` alone would not be.)
    const problem = prefix === '' ? undefined : newPathProblem(`${prefix}x`);
    if (problem) throw new InvalidInputError(`a watch's prefix is a folder of the store's paths: ${problem.replace(/^path /, '')} (got "${prefix}")`, 'prefix');
    this.prefix = prefix;
    const user = excluder(o.exclude);
    this.#exclude = (path, name, isDir) => WATCH_EXCLUDED.includes(name) || (!isDir && this.#editorTemporary(path, name)) || (user?.(path, name, isDir) ?? false) || (isDir && this.#isStore(path));
    this.#settleMs = o.settleMs ?? SETTLE_MS;
    this.#openMaxMs = o.openMaxMs ?? OPEN_MAX_MS;
    if (o.pollMs !== undefined && (!Number.isInteger(o.pollMs) || o.pollMs < 100)) throw new InvalidInputError('pollMs must be a whole number of at least 100 (ms)', 'pollMs');
    // (setInterval holds at most 2^31-1 ms: a longer one fires at once, and again, and again.)
    if (o.rescanMs !== undefined && !(Number.isInteger(o.rescanMs) && (o.rescanMs === 0 || (o.rescanMs >= 100 && o.rescanMs <= 2 ** 31 - 1)))) throw new InvalidInputError('rescanMs must be 0 (never) or a whole number of ms from 100 to 2147483647', 'rescanMs');
    this.ready = this.#start();
    this.ready.catch(() => undefined); // the caller awaits it; an unhandled copy would crash
  }

  /** Stops following changes; a store of changes under way is finished first. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    clearInterval(this.#scanTimer);
    clearInterval(this.#rootTimer);
    clearInterval(this.#rescanTimer);
    this.#unfollow('');
    // The OS may have dropped watches of directories deleted or moved (inotify's are gone with
    // them), and @parcel/watcher's unsubscribe then fails — "Unable to remove watcher: Invalid
    // argument" — where nothing is left to stop: `kura watch` and `serve --watch` exited 1 on
    // SIGTERM after folders were moved (a trial).
    await this.#subscription?.unsubscribe().catch(() => undefined);
    await this.#flushing;
  }

  #emit(e: WatchEvent): void {
    this.#o.onEvent?.(e);
  }

  /** Names in `scan` that are not UTF-8 (left out by every scan): said, each once a scan. */
  #notUtf8(scan: { notUtf8: readonly string[] }): void {
    for (const path of scan.notUtf8) this.#badName(path, NOT_UTF8);
  }

  /** A name the scan cannot hold (a backslash, over 1,024 characters) is left out, and said. */
  readonly #badName = (path: string, why: string): void => {
    this.#emit({ type: 'error', path, message: `left out: ${why}`, code: 'INVALID_INPUT' });
  };

  /** Whether the directory at `rel` (from the root) is a Kura store: never watched. */
  #isStore(rel: string): boolean {
    if (this.#storeDirs.has(rel)) return true;
    // (Only a store is remembered: a directory may become one — `kura init` in the tree.)
    const abs = join(this.root, rel);
    const known = existsSync(join(abs, 'kura.db')) || existsSync(join(abs, 'kura-store.json'));
    if (known) this.#storeDirs.add(rel);
    return known;
  }

  /**
   * Whether a file is an editor's temporary file (EDITOR_TEMPORARY). A change heard names a
   * path without saying what it is: a directory of such a name (`old~/`) is looked at, and is
   * no temporary file (taken for one, its files were missed until the next scan).
   */
  #editorTemporary(path: string, name: string): boolean {
    return EDITOR_TEMPORARY.test(name) && !lstatSync(join(this.root, path), { throwIfNoEntry: false })?.isDirectory();
  }

  /** Whether a path from the root, or a directory above it, is left out. */
  #excluded(rel: string): boolean {
    const parts = rel.split('/');
    for (let i = 0; i < parts.length; i++) {
      const path = parts.slice(0, i + 1).join('/');
      if (this.#exclude(path, parts[i]!, i < parts.length - 1)) return true;
    }
    return false;
  }

  async #start(): Promise<void> {
    const started = performance.now();
    if (this.#o.pollMs !== undefined) this.#scanEvery(this.#o.pollMs, `scanning ${this.root} every ${this.#o.pollMs / 1000} s (polling)`);
    else {
      await this.#subscribe();
      this.#rootTimer = setInterval(() => this.#checkRoot(), ROOT_CHECK_MS);
      const every = this.#o.rescanMs ?? RESCAN_MS;
      if (every > 0) this.#rescanTimer = setInterval(() => this.#once(() => this.#rescan()), every).unref();
    }
    // In turn with the stores of changes heard meanwhile: a file made while the catch-up runs is
    // stored by them after it, never stored first and then taken for one the scan did not find.
    let counts: { stored: number; deleted: number; unchanged: number } | undefined;
    let failed: unknown;
    await this.#serially(async () => {
      try {
        counts = await this.#catchUp();
      } catch (e) {
        failed = e;
      }
    });
    if (failed !== undefined) throw failed;
    this.#emit({ type: 'ready', ...counts!, ms: Math.round(performance.now() - started) });
  }

  /** Listens to the OS's notifications — before the catch-up reads the tree: none made meanwhile is missed. */
  async #subscribe(): Promise<void> {
    try {
      const subscribe: OsWatcher = this.#o.osWatcher ?? (await import('@parcel/watcher')).subscribe;
      this.#subscription = await subscribe(
        this.root,
        (err, events) => {
          if (err) return this.#watchFailed(err);
          for (const e of events) this.#changed(e.path);
        },
        { ignore: WATCH_EXCLUDED.map((n) => `**/${n}`) },
      );
    } catch (e) {
      this.#watchFailed(e as Error);
    }
  }

  #watchFailed(err: Error): void {
    if (this.#scanTimer || this.#closed) return;
    const limit = /ENOSPC|No space left|inotify|too many/i.test(err.message);
    const reason = limit
      ? `the system's limit on watched directories (fs.inotify.max_user_watches) is too low for ${this.root}: raise it (sudo sysctl fs.inotify.max_user_watches=524288); meanwhile the tree is scanned every ${Math.round((this.#o.scanMs ?? SCAN_MS) / 1000)} s`
      : `cannot watch ${this.root} (${err.message}); the tree is scanned every ${Math.round((this.#o.scanMs ?? SCAN_MS) / 1000)} s instead`;
    void this.#subscription?.unsubscribe().catch(() => undefined);
    this.#subscription = undefined;
    this.#unfollow('');
    this.#scanEvery(this.#o.scanMs ?? SCAN_MS, reason);
  }

  /** Catches up every `ms` instead of hearing of changes. */
  #scanEvery(ms: number, reason: string): void {
    this.#emit({ type: 'scanning', reason });
    // Not unref'd: in poll mode this timer is all that keeps the watch running (it was, and a
    // `kura watch --poll` ended 0.4 s after saying "watching"); close() clears it.
    this.#scanTimer = setInterval(() => this.#once(() => this.#catchUp().then(() => undefined)), ms);
  }

  /**
   * The OS's notifications follow the directory the watch began on, wherever it is moved; a
   * directory made again at the same path is another one, which nobody listens to. Either way
   * the watch would go on, silent, while the user's files change unheard: it says so, and
   * listens to the directory now at its path (catching up on it), or waits for one to be there.
   */
  #checkRoot(): void {
    if (this.#closed || this.#scanTimer) return;
    const id = this.#currentRootId();
    if (id === this.#rootId) return;
    if (id === undefined) {
      if (!this.#rootGone) this.#emit({ type: 'error', path: this.root, message: 'the watched directory was moved away or deleted: waiting for a directory at its path', code: 'NOT_FOUND' });
      this.#rootGone = true;
      this.#rootId = '';
      void this.#subscription?.unsubscribe().catch(() => undefined);
      this.#subscription = undefined;
      this.#unfollow('');
      return;
    }
    const replaced = !this.#rootGone;
    this.#rootGone = false;
    this.#rootId = id;
    if (replaced) this.#emit({ type: 'error', path: this.root, message: 'the watched directory was replaced by another at its path: following that one', code: 'CONFLICT' });
    // Back after it was gone: said, as its going was (it resumed without a word: a trial).
    else this.#emit({ type: 'scanning', reason: `the watched directory is back at ${this.root}: catching up with it` });
    const old = this.#subscription;
    this.#subscription = undefined;
    this.#unfollow('');
    void this.#serially(async () => {
      // (The watcher keeps one subscription a path: the old one must be gone before the new is made.)
      await old?.unsubscribe().catch(() => undefined);
      if (this.#closed) return;
      await this.#subscribe();
      const started = Date.now();
      const counts = await this.#catchUp();
      this.#emit({ type: 'ready', ...counts, ms: Date.now() - started });
    });
  }

  /** The device and inode of the directory at the watched path now; undefined when there is none, or it cannot be looked at (ENOTDIR, EACCES, a stale NFS handle: a throw here would end the process). */
  #currentRootId(): string | undefined {
    try {
      const st = lstatSync(this.root, { throwIfNoEntry: false });
      return st?.isDirectory() ? `${st.dev}:${st.ino}` : undefined;
    } catch {
      return undefined;
    }
  }

  #changed(abs: string): void {
    const rel = relative(this.root, abs).split(sep).join('/');
    if (!rel || rel.startsWith('..') || this.#excluded(rel)) return;
    // As the catch-up leaves it out (it scans as a snapshot does), so that a restart does not undo it.
    const bad = rel.split('/').map(badName).find(Boolean);
    if (bad) return this.#badName(abs, bad);
    // A name that is not UTF-8 arrives with U+FFFD for its bad bytes, naming no file: said, as
    // the catch-up says it (nothing was said, and the file never stored: a trial).
    if (rel.includes('\uFFFD') && !existsSync(abs)) return this.#badName(abs, NOT_UTF8);
    const now = Date.now();
    this.#pending.set(rel, now);
    if (!this.#since.has(rel)) this.#since.set(rel, now);
    this.#schedule();
  }

  #schedule(ms = Math.max(50, Math.min(CLOSED_QUIET_MS, this.#settleMs / 4))): void {
    if (this.#timer || this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#serially(() => this.#flush());
    }, ms);
  }

  /**
   * A periodic scan, unless the last one is still waiting or running: ticks shorter than a scan
   * of a large tree queued scans without end, with the changes heard waiting behind them (found
   * in review).
   */
  #once(scan: () => Promise<void>): void {
    if (this.#scanQueued) return;
    this.#scanQueued = true;
    void this.#serially(() => scan().finally(() => (this.#scanQueued = false)));
  }

  /** Runs `work` after whatever store of changes is under way (one at a time). */
  async #serially(work: () => Promise<void>): Promise<void> {
    const run = (this.#flushing ?? Promise.resolve()).then(work).catch((e: Error & { code?: string }) => this.#emit({ type: 'error', message: e.message, ...(e.code ? { code: e.code } : {}) }));
    this.#flushing = run;
    await run;
    if (this.#flushing === run) this.#flushing = undefined;
  }

  /**
   * Stores the paths that have settled — quiet for the settle time, or for CLOSED_QUIET_MS with
   * no process holding them open for writing — and schedules the rest.
   */
  async #flush(): Promise<void> {
    const now = Date.now();
    // Changes heard since a store failed wait with those it left: the storage that did not
    // answer then is not asked again at once for each of them.
    if (now < this.#retryAt) return this.#schedule(this.#retryAt - now);
    // The watched directory moved away or was replaced: what is pending is of the directory the
    // watch began on, and looked up at the path now it would read as deleted. Kept until the
    // root check follows the directory at the path (its catch-up then decides).
    if (this.#o.pollMs === undefined && !this.#scanTimer && this.#currentRootId() !== this.#rootId) {
      this.#checkRoot();
      return this.#schedule(ROOT_CHECK_MS);
    }
    const due: string[] = [];
    const quiet: string[] = [];
    for (const [rel, at] of this.#pending) if (now - at >= CLOSED_QUIET_MS) quiet.push(rel);
    // A quiet file is due once no process holds it open for writing; where that cannot be seen
    // (not Linux), once it has been quiet for the settle time. One held open waits for its
    // writer (up to OPEN_MAX_MS from its first change).
    const open = quiet.length ? openForWriting(new Set(quiet.map((rel) => join(this.root, rel)))) : undefined;
    for (const rel of quiet) {
      if (open ? !open.has(join(this.root, rel)) || now - (this.#since.get(rel) ?? now) >= this.#openMaxMs : now - this.#pending.get(rel)! >= this.#settleMs) due.push(rel);
    }
    // When each due file first changed: kept for one refused as changed while read (put again
    // later, its wait for a writer counts from then); and those held open past OPEN_MAX_MS are
    // stored as they are read, changing or not (a log a daemon never closes, or appends to
    // without pause, was refused at every read and never stored: found in review).
    this.#dueSince = new Map(due.map((rel) => [rel, this.#since.get(rel) ?? now]));
    this.#overdue = new Set(due.filter((rel) => now - this.#dueSince.get(rel)! >= this.#openMaxMs));
    for (const rel of due) {
      this.#pending.delete(rel);
      this.#since.delete(rel);
    }
    try {
      await this.#storeDue(due, now);
    } catch (e) {
      // Not stored (a commit failed, the storage did not answer): looked at again after
      // RETRY_MS, so that a change heard is never dropped for a failure it did not cause.
      this.#retryAt = Date.now() + RETRY_MS;
      for (const rel of due) if (!this.#pending.has(rel)) this.#pending.set(rel, now);
      for (const rel of due) if (!this.#since.has(rel)) this.#since.set(rel, now);
      this.#schedule(RETRY_MS);
      throw e;
    }
    // Files held open for writing are looked at again at the settle time's pace, not every 50 ms
    // (each look reads /proc); anything changed meanwhile schedules sooner.
    if (this.#pending.size) this.#schedule(this.#pending.size > quiet.length - due.length ? undefined : this.#settleMs);
  }

  /** Stores (or deletes) the settled paths `due`, from the root. */
  async #storeDue(due: string[], now: number): Promise<void> {
    // A change under a directory the watch does not know: the OS's notice of the directory was
    // lost, and with it those of the files made in it before the OS watched it (#knownDirs):
    // the directory is scanned as if it had been heard.
    const lost = new Set(due.flatMap((rel) => this.#unknownDirAbove(rel) ?? []));
    for (const dir of lost) {
      this.#pending.delete(dir);
      this.#since.delete(dir);
    }
    if (lost.size) due = [...new Set([...due, ...lost])];
    // By file: a directory's scan and its files' own events name the same files.
    const puts = new Map<string, FileToPut>();
    const scanned = new Map<string, string>();
    const gone: string[] = [];
    /** Paths now a directory that were a file: the file's path goes (its versions kept). */
    const nowDirs: string[] = [];
    /** Paths now a file: what the store has under them (a directory that was there) goes. */
    const nowFiles: string[] = [];
    const dirs = new Map<string, boolean>();
    /**
     * Directories scanned whole (created, moved in, or made again under a name just moved away):
     * what the store has under them and they no longer hold goes — a folder renamed and a new
     * one made at its old name at once kept the old folder's other files as if on disk (a trial).
     */
    const listed: { rel: string; files: Set<string>; unreadable: string[] }[] = [];
    for (const rel of due.sort()) {
      // Looked at again now that it has settled: a directory above it may have become a store.
      if (this.#excluded(rel)) continue;
      const abs = join(this.root, rel);
      // One path that cannot be looked at is said, and the others are stored: a failure of the
      // path itself is not retried (its next change is heard), and never holds back the rest.
      let st: Stats | undefined;
      try {
        // Through directories only: a directory above it replaced by a symlink (moved to
        // another disk and linked back) would have the file read from outside the tree.
        st = this.#underDirectories(rel, dirs) ? lstatSync(abs, { throwIfNoEntry: false }) : undefined;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOTDIR') {
          this.#unreadable(abs, e as Error);
          continue;
        }
      }
      if (!st || st.isSymbolicLink()) gone.push(rel); // a link is never followed: a file replaced by one is gone
      else if (st.isFile()) {
        puts.set(abs, this.#put(abs, rel));
        nowFiles.push(rel);
      } else if (st.isDirectory()) {
        nowDirs.push(rel);
        // Created or moved in: its files, as the catch-up finds them. Their own events so far
        // are this scan's (it reads them after): one read each, not two.
        for (const p of this.#pending.keys()) {
          if (!p.startsWith(`${rel}/`)) continue;
          this.#pending.delete(p);
          this.#since.delete(p);
        }
        // Left out as the catch-up leaves it out: an event named it before it was known a
        // directory (`build/`), or before it held a store's files (a Kura store made in the tree).
        if (this.#exclude(rel, rel.slice(rel.lastIndexOf('/') + 1), true)) continue;
        try {
          // Followed, then listed: nothing made in between is missed. The directories the list
          // finds inside are followed after it: each newly followed one is listed again, for
          // what was made in it between the two.
          this.#follow(rel);
          const exclude = (under: string) => (path: string, name: string, isDir: boolean) => this.#exclude(`${under}/${path}`, name, isDir);
          const unreadable: string[] = [];
          const scan = await scanDirectory(abs, {
            mtime: false,
            exclude: exclude(rel),
            onBadName: this.#badName,
            onUnreadable: (path, e) => {
              unreadable.push(`${this.prefix}${relative(this.root, path).split(sep).join('/')}/`);
              this.#unreadable(path, e);
            },
          });
          this.#notUtf8(scan);
          const fresh: string[] = [];
          for (const dir of dirsOf(scan.root, rel)) {
            this.#knownDirs.add(dir);
            if (dir !== rel && this.#follow(dir)) fresh.push(dir);
          }
          const again: typeof scan.files = [];
          const followedNow = new Set(fresh);
          for (const dir of fresh.filter((d) => !followedNow.has(d.slice(0, d.lastIndexOf('/'))))) {
            const more = await scanDirectory(join(this.root, dir), { mtime: false, exclude: exclude(dir), onBadName: () => undefined, onUnreadable: () => undefined }).catch(() => undefined);
            if (more) again.push(...more.files);
          }
          const files = new Set<string>();
          for (const f of [...scan.files, ...again]) {
            const r = relative(this.root, f.path).split(sep).join('/');
            scanned.set(f.path, r);
            files.add(`${this.prefix}${r}`);
          }
          listed.push({ rel, files, unreadable });
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'ENOENT' || code === 'ENOTDIR' || e instanceof InvalidInputError) gone.push(rel); // gone again since (its event follows)
          else this.#unreadable(abs, e as Error);
        }
      }
    }
    // A scanned file some process is still writing waits for its writer, as an event's would.
    const writing = scanned.size ? openForWriting(new Set(scanned.keys())) : undefined;
    for (const [abs, rel] of scanned) {
      if (writing?.has(abs)) {
        this.#pending.set(rel, now);
        if (!this.#since.has(rel)) this.#since.set(rel, now);
      } else puts.set(abs, this.#put(abs, rel));
    }
    for (const rel of [...gone, ...nowFiles]) this.#forget(rel);
    await this.#delete(gone, true);
    for (const { rel, files, unreadable } of listed) {
      // (Unknown is not deleted: a directory in it that could not be read keeps what it had; a
      // path whose own change is pending is its flush's.)
      const stale = [...(await this.#paths(`${this.prefix}${rel}/`)).keys()]
        .filter((p) => !files.has(p) && !unreadable.some((u) => p.startsWith(u)))
        .map((p) => p.slice(this.prefix.length))
        .filter((r) => !this.#pending.has(r));
      await this.#delete(stale, false);
    }
    await this.#delete(this.#shownAt(nowDirs), false);
    for (const rel of this.#withPathsUnder(nowFiles)) await this.#delete([...(await this.#paths(`${this.prefix}${rel}/`)).keys()].map((p) => p.slice(this.prefix.length)), false);
    // What each path shows now (one read): a put of the same bytes makes no version, and is not reported.
    const ctx = this.#h.context('watch');
    const before = ctx.db.read(() => {
      const shown = new Map<string, string>();
      for (const f of puts.values()) {
        const e = ctx.st.entryViewByPath.get(f.meta!.path!);
        if (e) shown.set(f.path, formatDigest(e.digest));
      }
      return shown;
    });
    await this.#store([...puts.values()], before);
  }

  /** The topmost directory above `rel` (from the root) that the watch does not know, if any. */
  #unknownDirAbove(rel: string): string | undefined {
    for (let at = rel.indexOf('/'); at > 0; at = rel.indexOf('/', at + 1)) {
      const dir = rel.slice(0, at);
      if (!this.#knownDirs.has(dir)) return dir;
    }
    return undefined;
  }

  /** A directory gone (deleted, moved away, now a file): no longer known, nor followed, with those below it. */
  #forget(rel: string): void {
    if (!this.#knownDirs.has(rel)) return; // (a file)
    for (const dir of this.#knownDirs) if (dir === rel || dir.startsWith(`${rel}/`)) this.#knownDirs.delete(dir);
    this.#unfollow(rel);
  }

  /**
   * Follows a directory that appeared while watching with a watcher of its own (Linux; true
   * when it was not followed already): its
   * entries' changes are heard even when @parcel/watcher does not follow it (see #ownWatches).
   * Heard twice when it does: the pending paths make one change of both.
   */
  #follow(rel: string): boolean {
    if (process.platform !== 'linux' || this.#closed || this.#scanTimer || this.#ownWatches.has(rel)) return false;
    const abs = join(this.root, rel);
    const self = basename(abs);
    const stop = () => {
      watcher.close();
      if (this.#ownWatches.get(rel) === watcher) this.#ownWatches.delete(rel);
    };
    let watcher: FSWatcher;
    try {
      watcher = fsWatch(abs, { persistent: false }, (type, name) => {
        // The directory itself deleted or moved comes under its own name (libuv): this watcher
        // hears nothing more of the path (a directory made again there, even on the same
        // inode, is another: `rm -r a; mkdir -p a/b` can arrive as one change of `a`). It
        // stops, and the path is looked at: gone, or scanned and followed anew. (A child of
        // the same name changing costs a scan of the directory.)
        if (type === 'rename' && name === self) {
          stop();
          this.#changed(abs);
        }
        this.#changed(name ? join(abs, name) : abs);
      });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Gone again (its deletion is heard); a directory this user may not read (made so while
      // watched: a tool run as root) is one directory, not the tree — followed again once a
      // change of it is heard (a chmod is one): it switched the whole watch to scanning every
      // 30 s, for good (a trial). Else the OS cannot watch more (inotify's limit): scanned instead.
      // (The scan that found it says it cannot be read.)
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'EACCES' && code !== 'EPERM') this.#watchFailed(e as Error);
      return false;
    }
    watcher.on('error', stop);
    this.#ownWatches.set(rel, watcher);
    return true;
  }

  /** Stops following `rel` and the directories below it ('': all). */
  #unfollow(rel: string): void {
    for (const [dir, watcher] of this.#ownWatches) {
      if (rel !== '' && dir !== rel && !dir.startsWith(`${rel}/`)) continue;
      watcher.close();
      this.#ownWatches.delete(dir);
    }
  }

  /** Whether every directory above `rel` is one (not a symlink, not a file), each looked at once per store of changes. */
  #underDirectories(rel: string, dirs: Map<string, boolean>): boolean {
    for (let at = rel.indexOf('/'); at > 0; at = rel.indexOf('/', at + 1)) {
      const dir = rel.slice(0, at);
      let ok = dirs.get(dir);
      if (ok === undefined) {
        const st = lstatSync(join(this.root, dir), { throwIfNoEntry: false });
        dirs.set(dir, (ok = st?.isDirectory() ?? false));
      }
      if (!ok) return false;
    }
    return true;
  }

  /**
   * Of these paths from the root (files now), those the store has paths under — a directory
   * that was there: one indexed look each, in one read (a burst of files asks for thousands).
   */
  #withPathsUnder(rels: readonly string[]): string[] {
    if (rels.length === 0) return [];
    const ctx = this.#h.context('watch');
    // Paths under `p/` sort between `p/` and `p0` ('0' follows '/').
    const under = ctx.db.prepare<{ one: number }>('SELECT 1 AS one FROM entries WHERE path > ? AND path < ? LIMIT 1');
    return ctx.db.read(() => rels.filter((rel) => under.get(`${this.prefix}${rel}/`, `${this.prefix}${rel}0`) !== undefined));
  }

  /** Of these paths from the root, those the store has an entry at (in one read: a burst makes many directories). */
  #shownAt(rels: readonly string[]): string[] {
    if (rels.length === 0) return [];
    const ctx = this.#h.context('watch');
    return ctx.db.read(() => rels.filter((rel) => ctx.st.entryViewByPath.get(`${this.prefix}${rel}`) !== undefined));
  }

  /** A path the watch cannot look at (no permission): said, and left as the store has it. */
  #unreadable(abs: string, e: Error): void {
    const code = (e as NodeJS.ErrnoException).code;
    this.#emit({ type: 'error', path: abs, message: `cannot be read (${code ?? e.message}): left as the store has it until it can be`, ...(code === 'EACCES' || code === 'EPERM' ? { code: 'FORBIDDEN' } : {}) });
  }

  #put(abs: string, rel: string): FileToPut {
    const mediaType = detectMediaType(rel);
    return { path: abs, meta: { path: `${this.prefix}${rel}`, ...(mediaType ? { mediaType } : {}), ...(this.#o.tags?.length ? { tags: this.#o.tags } : {}) } };
  }

  /**
   * Puts files in batches; reports each after its commit, unless its path showed those bytes
   * already (`before`, by file: no version was made). Answers the digests stored, by file.
   */
  async #store(files: FileToPut[], before: ReadonlyMap<string, string>): Promise<Map<string, string>> {
    const digests = new Map<string, string>();
    const storePath = new Map(files.map((f) => [f.path, f.meta?.path ?? f.path]));
    const relOf = (abs: string) => relative(this.root, abs).split(sep).join('/');
    // Those held open for writing past OPEN_MAX_MS are stored as read (see #flush).
    const groups = [files.filter((f) => !this.#overdue.has(relOf(f.path))), files.filter((f) => this.#overdue.has(relOf(f.path)))];
    for (const [g, group] of groups.entries()) for (let i = 0; i < group.length; i += BATCH) {
      for await (const o of this.#h.store.putFiles(group.slice(i, i + BATCH), { refuseChanged: g === 0 })) {
        const path = storePath.get(o.path) ?? o.path;
        if (o.error instanceof SourceChangedError) {
          // Rewritten while it was read: what was read may be no state the file ever had, and
          // was not stored. It is put again once it has settled (its writer's next change
          // would say so too, but a rewrite may already be over).
          const rel = relOf(o.path);
          const now = Date.now();
          this.#pending.set(rel, now);
          if (!this.#since.has(rel)) this.#since.set(rel, this.#dueSince.get(rel) ?? now);
          this.#schedule();
        } else if (o.result) {
          digests.set(o.path, o.result.digest);
          if (before.get(o.path) !== o.result.digest) this.#emit({ type: 'stored', path, digest: o.result.digest, size: o.result.size, newChunks: o.result.newChunks });
        } else if (!vanished(o.error, o.path)) {
          // (A file deleted before it was read: its deletion is on its way as an event.)
          const e = o.error as { message?: string; code?: string };
          this.#emit({ type: 'error', path, message: e?.message ?? String(o.error), ...(e?.code ? { code: e.code } : {}) });
        }
      }
    }
    return digests;
  }

  /**
   * Deletes (versions kept) the store's paths for these paths from the root, and — a directory
   * deleted or moved away is one event — every path under them.
   */
  async #delete(rels: readonly string[], under: boolean): Promise<number> {
    let n = 0;
    for (const rel of rels) {
      const path = `${this.prefix}${rel}`;
      if (await this.#h.store.deletePath(path, { keepVersions: true })) {
        n++;
        this.#emit({ type: 'deleted', path });
      }
      if (!under) continue;
      for (const p of (await this.#paths(`${path}/`)).keys()) {
        if (await this.#h.store.deletePath(p, { keepVersions: true })) {
          n++;
          this.#emit({ type: 'deleted', path: p });
        }
      }
    }
    return n;
  }

  /** The store's paths under `prefix`, with the digest each shows. */
  async #paths(prefix: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    let cursor: string | undefined;
    do {
      const page = await this.#h.store.list({ pathPrefix: prefix, limit: 1000, ...(cursor ? { cursor } : {}) });
      for (const d of page.items) if (d.path) out.set(d.path, d.digest);
      cursor = page.nextCursor;
    } while (cursor);
    return out;
  }

  /**
   * The periodic check (rescanMs): a catch-up, whose finds are changes the OS's notifications
   * lost (or made since the last store of changes): said, as they are stored.
   */
  async #rescan(): Promise<void> {
    if (this.#closed || this.#scanTimer || this.#rootGone) return;
    const found = await this.#catchUp({ periodic: true });
    if (found.stored || found.deleted) {
      this.#emit({ type: 'scanning', reason: `the periodic check of ${this.root} found ${found.stored} file(s) changed and ${found.deleted} deleted that had not been heard of: stored (the OS's notifications lose changes under load)` });
    }
  }

  /** Makes the store's prefix what the tree holds: unchanged files by their stamps, the rest put, the missing deleted. */
  async #catchUp({ periodic = false } = {}): Promise<{ stored: number; deleted: number; unchanged: number }> {
    this.#overdue = new Set(); // (a catch-up's files are read as any are: refused when changing)
    // A directory that cannot be read is said, and what the store has under it stays: unknown is not deleted.
    const unreadable: string[] = [];
    const scan = await scanDirectory(this.root, {
      mtime: false,
      exclude: this.#exclude,
      onBadName: this.#badName,
      onUnreadable: (path, e) => {
        unreadable.push(`${this.prefix}${relative(this.root, path).split(sep).join('/')}/`);
        this.#unreadable(path, e);
      },
    });
    this.#notUtf8(scan);
    const knownBefore = new Set(this.#knownDirs);
    this.#knownDirs.clear();
    for (const dir of dirsOf(scan.root, '')) {
      this.#knownDirs.add(dir);
      // A directory the periodic check finds is one whose notices were lost: followed from now
      // on, as one heard is (else later changes in it waited for the next check: found in
      // review). (At the first catch-up and after the root's return the OS watcher follows all.)
      if (periodic && !knownBefore.has(dir)) this.#follow(dir);
    }
    const unreadableFiles = new Set<string>();
    const vanished = new Set(
      statFiles(scan, scan.files, (f, e) => {
        unreadableFiles.add(`${this.prefix}${relative(this.root, f.path).split(sep).join('/')}`);
        this.#unreadable(f.path, e);
      }),
    );
    const files = scan.files.filter((f) => !vanished.has(f));
    const rel = (f: ScannedFile) => relative(this.root, f.path).split(sep).join('/');
    const ctx = this.#h.context('watch');
    // Unchanged: a stamp recorded for the digest the path shows now.
    const showing = await this.#paths(this.prefix);
    const cached = ctx.db.read(() => cachedDigests(ctx.st, files));
    const toPut: FileToPut[] = [];
    const digests = new Map<ScannedFile, string>();
    let unchanged = 0;
    const changed: ScannedFile[] = [];
    for (const [i, f] of files.entries()) {
      const path = `${this.prefix}${rel(f)}`;
      const c = cached[i];
      if (c && showing.get(path) === c) {
        digests.set(f, c);
        unchanged++;
      } else changed.push(f);
    }
    // A changed file some process is still writing waits for its writer, as a change heard
    // does (a partial version was stored, then the whole one); one heard already is stored
    // when it settles (a periodic check runs while changes are pending).
    const writing = changed.length ? openForWriting(new Set(changed.map((f) => f.path))) : undefined;
    for (const f of changed) {
      const r = rel(f);
      if (writing?.has(f.path) || this.#pending.has(r)) {
        if (!this.#pending.has(r)) this.#pending.set(r, Date.now());
        if (!this.#since.has(r)) this.#since.set(r, Date.now());
        this.#schedule();
      } else toPut.push(this.#put(f.path, r));
    }
    const before = new Map(toPut.map((f) => [f.path, showing.get(f.meta!.path!) ?? '']));
    const stored = await this.#store(toPut, before);
    for (const f of files) {
      const d = stored.get(f.path);
      if (d) digests.set(f, d);
    }
    const onDisk = new Set(files.map((f) => `${this.prefix}${rel(f)}`));
    // (A deletion heard and pending is the flush's, as a change heard is: not "unheard of".)
    const missing = [...showing.keys()]
      .filter((p) => !onDisk.has(p) && !unreadableFiles.has(p) && !unreadable.some((u) => p.startsWith(u)))
      .map((p) => p.slice(this.prefix.length))
      .filter((rel) => !(periodic && this.#pending.has(rel)));
    const deleted = await this.#delete(missing, false);
    // The stamps of what the store now holds, for the next catch-up (a hint: its own transaction).
    const stamps = files.flatMap((f) => (digests.has(f) ? [{ path: f.path, stamp: f.stamp, recent: f.recent, digest: digests.get(f)! }] : []));
    ctx.db.transaction(() => recordStamps(ctx.st, this.root, stamps));
    // A file read again and found as the store has it is unchanged too (it was counted nowhere:
    // a restart over 7 files said "0 stored, 0 deleted, 0 unchanged", a trial).
    const made = [...stored].filter(([file, digest]) => before.get(file) !== digest).length;
    return { stored: made, deleted, unchanged: unchanged + stored.size - made };
  }
}

/** The directories of a scanned tree, by path from the watched root: `rel` (its top) and every one below it. */
function dirsOf(node: DirNode, rel: string, out: string[] = []): string[] {
  out.push(rel);
  for (const e of node.entries) if (e.type === 'dir') dirsOf(e, rel ? `${rel}/${e.name}` : e.name, out);
  return out;
}
