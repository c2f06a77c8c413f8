/**
 * @kura/store for Node: Store.init / Store.open on a directory (FORMAT.md §5), with
 * better-sqlite3 metadata, file-system packs, the writer lock and file-path puts.
 */
import { closeSync, constants as fsConstants, createReadStream, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InternalError, InvalidInputError } from '@kura/core';
import { NotFoundError, StoreLockedError } from '../errors.js';
import { InitOptions as InitOptionsSchema, PutMeta as PutMetaSchema, parse, type InitOptions, type OpenOptions, type PutMeta } from '../options.js';
import { runLanes } from '../lanes.js';
import { CommitOrder, type PutResult } from '../put.js';
import type { PutInput } from '../store.js';
import { availableParallelism } from 'node:os';
import { leasePool, leasePoolOfSize, type IngestPool, type PoolLease } from './ingest-pool.js';
import type { ReadyChunks } from '../ingest/pool.js';
import { Store as StoreCore, type StoreBackends } from '../store.js';
import { FsPackStore } from './fs-packs.js';
import { CONFIG_FILE, FsLogStore } from './fs-log.js';
import { readConfigObject, rebuildCatalog } from '../catalog/open.js';
import { migrate } from '../schema.js';
import { prepareStatements } from '../statements.js';
import type { SnapshotInfo, WalkEntry } from '../snapshot.js';
import {
  applyStat,
  checkRestorable,
  leaveOut,
  prepareTarget,
  restoreEntries,
  scanDirectory,
  statFiles,
  type RestoreProgress,
  type RestoreReport,
  type Scan,
  type ScannedFile,
  type SnapshotProgress,
} from './snapshots.js';
import { startCheckpointer, type Checkpointer } from './checkpointer.js';
import { excluder } from './exclude.js';
import { liveWriters, registerWriter, writerAlive } from './lock.js';
import { newWriterId } from '../catalog/commit-log.js';
import { openSqlite } from './sqlite.js';
import { readAll } from './read-all.js';

export * from '../index.js';
export { IngestPool, POOL_IDLE_MS } from './ingest-pool.js';
export { RECENT_MS, type RestoreProgress, type RestoreReport, type SnapshotProgress } from './snapshots.js';
export { FsPackStore } from './fs-packs.js';
export { FsLogStore } from './fs-log.js';
export { escapedName } from './names.js';
export { openSqlite } from './sqlite.js';

export const DB_FILE = 'kura.db';

/** A directory is a store when it has a configuration object, or a database (made before the log). */
function isStore(root: string): boolean {
  return existsSync(join(root, CONFIG_FILE)) || existsSync(join(root, DB_FILE));
}

/**
 * While the worker checkpoints, SQLite's own checkpoint inside a commit stays on as a backstop,
 * past the worker's TRUNCATE limit (checkpoint-worker.ts WAL_LIMIT, 256 MiB): when the worker
 * thread lags (a busy machine: the WAL reached 450+ MiB in a test of 40,000 puts), the commit
 * that passes ~312 MiB (80,000 pages of 4 KiB) checkpoints itself and the WAL is reused from
 * its start, so it stays bounded whatever the worker's share of the CPU.
 */
const WAL_BACKSTOP_PAGES = 80_000;

/**
 * Opens a file the scan saw as a regular file, refusing what has been swapped for a link or
 * something else since (a snapshot must not follow a link planted between scan and read).
 */
export function openRegularFile(path: string): number {
  const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
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

/**
 * A writable store's checkpoint worker starts once the store has been open this long, or once
 * its WAL has grown past CHECKPOINTER_AFTER_WAL bytes, whichever comes first. A `kura` command
 * that writes is over in ~0.3 s and writes a few pages: booting the worker for it cost ~25-40
 * ms of CPU on the other core, and closing waited for the boot. A store taking a burst of
 * writes gets the worker well before SQLite's own first checkpoint inside a commit (at 1000
 * pages, ~4 MB), which is what the worker saves it: with a 1 MiB threshold, 100 KB puts in the
 * first 0.3 s of a new store were ~15% slower than with the worker started at open; with 256
 * KiB, alternated runs were even.
 */
const CHECKPOINTER_AFTER_MS = 250;
const CHECKPOINTER_AFTER_WAL = 256 << 10;

function walSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0; // none yet
  }
}

async function backends(dir: string, readonly: boolean): Promise<StoreBackends> {
  const id = newWriterId();
  const lock = readonly ? undefined : registerWriter(dir, id);
  let checkpointer: Checkpointer | undefined;
  let starting: ReturnType<typeof setTimeout> | undefined;
  let startNow: (() => void) | undefined;
  const wal = join(dir, `${DB_FILE}-wal`);
  // One stat per commit (~3 µs; commits are grouped) until the worker starts.
  const onCommit = () => {
    if (startNow && walSize(wal) > CHECKPOINTER_AFTER_WAL) startNow();
  };
  let db: ReturnType<typeof openSqlite> | undefined;
  try {
    db = openSqlite(join(dir, DB_FILE), { readonly, onCommit });
    const opened = db;
    // SQLite checkpoints inside commits (every 1000 pages, its default) until the worker does,
    // and again should the worker fail (checkpointer.ts).
    if (!readonly) {
      const autoCheckpoints = (pages: number) => () => {
        try {
          opened.exec(`PRAGMA wal_autocheckpoint = ${pages}`);
        } catch {
          // The store closed meanwhile: nothing left to checkpoint for.
        }
      };
      startNow = () => {
        clearTimeout(starting);
        startNow = undefined;
        checkpointer = startCheckpointer(join(dir, DB_FILE), { onReady: autoCheckpoints(WAL_BACKSTOP_PAGES), onUnavailable: autoCheckpoints(1000) });
      };
      starting = setTimeout(() => startNow?.(), CHECKPOINTER_AFTER_MS);
      starting.unref(); // a store left open must not keep the process alive
    }
    return {
      db: opened,
      packs: new FsPackStore(join(dir, 'packs')),
      log: new FsLogStore(dir),
      ...(lock ? { writer: { id, alive: (other: string) => other === id || writerAlive(dir, other), others: () => liveWriters(dir).filter((w) => w !== id) } } : {}),
      release: async () => {
        clearTimeout(starting);
        startNow = undefined;
        await checkpointer?.stop();
        lock?.release();
      },
      openPath: (path) => createReadStream(path, { highWaterMark: 1 << 20 }),
      setDurability: (d) => opened.setDurability(d),
    };
  } catch (e) {
    try {
      db?.close();
    } catch {
      // Closing meets the error that failed the open; the lock below is released regardless.
    }
    clearTimeout(starting);
    startNow = undefined;
    await checkpointer?.stop();
    lock?.release();
    throw e;
  }
}

export interface FileToPut {
  path: string;
  meta?: PutMeta;
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

/** Small files per worker message when a snapshot or putFiles puts many of them (at least). */
const SMALL_BATCH = 64;

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
function vanished(e: unknown, path: string): boolean {
  const err = e as { code?: unknown; path?: unknown };
  return err?.code === 'ENOENT' && err.path === path;
}

/** What was read is what a snapshot records, should the file have changed since the scan. */
function recordRead(f: ScannedFile, r: PutResult): void {
  f.entry.digest = r.digest;
  f.entry.size = r.size;
}

/**
 * A regular file (not a link: the workers read small files without following links) below
 * WORKER_PUT_MIN. Anything else, or a path that cannot be read, takes the one-file path,
 * which follows links and reports the error as before.
 */
function isSmallRegularFile(path: string): boolean {
  try {
    const st = lstatSync(path);
    return st.isFile() && st.size < WORKER_PUT_MIN;
  } catch {
    return false;
  }
}

export class Store extends StoreCore {
  /** The shared ingest pool, leased on the first large put and released at close. */
  #lease: PoolLease | undefined;
  #workers = availableParallelism();

  /**
   * In Node, a put of a large buffer runs the byte work on a worker thread, so concurrent
   * puts use every core; everything else goes through the calling thread (StoreCore.put).
   */
  override async put(input: PutInput, meta: PutMeta = {}): Promise<PutResult> {
    if (input instanceof Uint8Array && input.length >= WORKER_PUT_MIN && this.#workers > 0 && !this.readonly) {
      // Everything that can refuse the put is checked before a worker starts on it.
      this.assertWritable('put');
      parse(PutMetaSchema, meta, 'put meta');
      this.#lease ??= leasePool();
      const o = this.ingestOptions();
      return this.putChunks(this.#lease.pool.ingestBytes(input, { chunking: o.chunking, compression: o.compression }, this.knownChunks()), meta);
    }
    return super.put(input, meta);
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      this.#lease?.release();
      this.#lease = undefined;
    }
  }

  /**
   * Puts many files using every core: worker threads run the ingest kernel per file, this
   * thread deduplicates and commits, in input order. Yields one outcome per file, in input
   * order; a file that fails does not stop the others. `workers` defaults to the cores.
   */
  async *putFiles(files: Iterable<FileToPut> | AsyncIterable<FileToPut>, options: { workers?: number } = {}): AsyncGenerator<FilePutOutcome> {
    const lease = leasePoolOfSize(options.workers);
    const pool = lease.pool;
    const known = this.knownChunks();
    const ingest = this.ingestOptions();
    const opts = { chunking: ingest.chunking, compression: ingest.compression };
    // Byte work runs in parallel; commits keep input order (documents are listed in it) and
    // still share transactions (CommitOrder). Small regular files go to the workers in
    // batches of SMALL_BATCH, one message each way: one per file cost more than its ingest.
    const order = new CommitOrder();
    const outcome = (f: FileToPut, put: Promise<PutResult>): Promise<FilePutOutcome> =>
      put.then(
        (result) => ({ path: f.path, result }),
        (error: unknown) => ({ path: f.path, error }),
      );
    /** Groups of outcomes in input order: one small batch, or one other file. */
    const window: Promise<FilePutOutcome[]>[] = [];
    let batch: FileToPut[] = [];
    const sendBatch = () => {
      const group = batch;
      const turn = order.next(); // the batch commits as one, in its place
      batch = [];
      window.push(
        pool
          .ingestSmallFiles(group.map((f) => f.path), opts, known)
          .catch((error: unknown) => group.map(() => error as Error))
          .then((ready) => this.putReady(ready.map((r, i) => (r instanceof Error ? r : { ...r, meta: group[i]!.meta })), { order: turn }))
          .then(
            (results) => results.map((r, i) => (r instanceof Error ? { path: group[i]!.path, error: r } : { path: group[i]!.path, result: r })),
            (error: unknown) => group.map((f) => ({ path: f.path, error })),
          ),
      );
    };
    try {
      for await (const f of files) {
        if (isSmallRegularFile(f.path)) {
          batch.push(f);
          if (batch.length === SMALL_BATCH) sendBatch();
        } else {
          if (batch.length) sendBatch();
          const stream = pool.ingestFile(f.path, opts, false, known);
          window.push(outcome(f, this.putChunks(stream, f.meta ?? {}, { order: order.next() })).then((o) => [o]));
        }
        // Two groups per worker keep every worker busy while the oldest commits.
        while (window.length >= pool.size * 2) yield* await window.shift()!;
      }
      if (batch.length) sendBatch();
      while (window.length) yield* await window.shift()!;
    } finally {
      await Promise.allSettled(window);
      lease.release();
    }
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
  async snapshot(
    dir: string,
    options: { label?: string; mtime?: boolean; reread?: boolean; exclude?: string[]; onProgress?: (p: SnapshotProgress) => void } = {},
  ): Promise<SnapshotInfo & { skipped: string[]; notUtf8: string[]; reused: number; vanished: string[]; excluded: number }> {
    this.assertWritable('snapshot');
    const root = resolve(dir);
    const exclude = excluder(options.exclude); // bad patterns: refused before anything is read
    // The shared ingest pool is leased once the scan has found enough files to need it, so
    // cold workers start while the scan goes on; not on a repeated snapshot, whose files are
    // mostly unchanged and not read.
    let lease: PoolLease | undefined;
    const pool = () => (lease ??= leasePool()).pool;
    let found = 0;
    const stamped = !options.reread && this.hasStamps(root);
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
      const workersStat = !stamped && this.#workers > 0 && scan.files.length >= SMALL_BATCH * 4;
      // Files deleted since the scan listed them are left out (`vanished`; decision 0024).
      const gone = new Set<ScannedFile>(workersStat ? [] : statFiles(scan, scan.files));
      if (gone.size) leaveOut(scan, gone);
      // Files whose stamp is what an earlier snapshot read keep that document, unread
      // (FORMAT.md §13.4); `reread` reads every file.
      const cached = stamped ? this.cachedDigests(scan.files) : [];
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
      await this.#putScanned(read, pool, workersStat ? scan : undefined, done, onGone);
      if (goneNow.size) leaveOut(scan, goneNow);
      goneNow.forEach((f) => gone.add(f));
      const unstated = scan.files.find((f) => f.size < 0);
      if (unstated) throw new InternalError(`${unstated.path} was put without its stat`);
      const label = options.label !== undefined ? { label: options.label } : {};
      let info: SnapshotInfo;
      try {
        info = await this.createSnapshot(scan.root, label);
      } catch (e) {
        // A reused document deleted meanwhile (its snapshots removed, then GC): read them all.
        if (!(e instanceof NotFoundError) || reused.length === 0) throw e;
        const goneLater = new Set<ScannedFile>();
        await this.#putScanned(reused, pool, undefined, recordRead, (f) => goneLater.add(f)); // stat'ed here already (a repeated snapshot)
        if (goneLater.size) leaveOut(scan, goneLater);
        goneLater.forEach((f) => gone.add(f));
        read.push(...reused.splice(0));
        info = await this.createSnapshot(scan.root, label);
      }
      this.recordStamps(root, scan.files.map((f) => ({ path: f.path, stamp: f.stamp, recent: f.recent, digest: f.entry.digest })));
      return { ...info, skipped: scan.skipped, notUtf8: scan.notUtf8, reused: reused.length, excluded: scan.excluded, vanished: [...scan.vanished, ...[...gone].map((f) => f.path)].sort() };
    } finally {
      lease?.release();
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
  async #putScanned(files: ScannedFile[], leased: () => IngestPool, statScan: Scan | undefined, record = recordRead, gone?: (f: ScannedFile) => void): Promise<void> {
    const ingest = this.ingestOptions();
    const opts = { chunking: ingest.chunking, compression: ingest.compression };
    const small = statScan ? files : files.filter((f) => f.size < WORKER_PUT_MIN);
    const large = statScan ? [] : files.filter((f) => f.size >= WORKER_PUT_MIN);
    const batches = statScan !== undefined || small.length >= SMALL_BATCH * 4;
    const pool = this.#workers > 0 && (batches || large.length > 0) ? leased() : undefined;
    const known = pool ? this.knownChunks() : undefined;
    const tasks: (() => Promise<void>)[] = [];
    /** A file's put, or, when it vanished since the scan and the caller takes that, `gone`. */
    const putOne = (f: ScannedFile, put: () => Promise<PutResult>) => async () => {
      let r: PutResult;
      try {
        r = await put();
      } catch (e) {
        if (!gone || !vanished(e, f.path)) throw e;
        return gone(f);
      }
      record(f, r);
    };
    const stream = (f: ScannedFile) =>
      putOne(f, () =>
        pool
          ? this.putChunks(pool.ingestFile(f.path, opts, true, known), {}, { listed: false })
          : this.putForSnapshot(createReadStream('', { fd: openRegularFile(f.path), highWaterMark: 1 << 20 })),
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
          const results = await this.putReady(ready, { listed: false });
          results.forEach((r, j) => {
            if (r instanceof Error) throw r;
            record(readyFiles[j]!, r);
          });
        });
      }
    } else {
      for (const f of small) tasks.push(putOne(f, async () => this.putForSnapshot(readSmallFile(f.path, f.size))));
    }
    for (const f of large) tasks.push(stream(f));
    // A few tasks in flight: enough to keep the workers and the group commit busy.
    await runLanes(tasks, pool ? pool.size * 4 : 32);
  }

  /**
   * Recreates a snapshot's tree under `target` byte for byte (files checked against their
   * digests as they are written, modes, times, symlinks, empty directories). Every entry is
   * checked first: a link that would point outside the target refuses the whole restore, and
   * nothing is written through an existing link. `target` must be empty unless `overwrite`.
   */
  async restore(id: number, target: string, options: { overwrite?: boolean; onProgress?: (p: RestoreProgress) => void } = {}): Promise<RestoreReport> {
    const entries: WalkEntry[] = [];
    for await (const e of this.snapshotEntries(id)) entries.push(e);
    checkRestorable(entries);
    const root = resolve(target);
    const overwrite = options.overwrite ?? false;
    prepareTarget(root, overwrite);
    const files = entries.flatMap(({ entry }) => (entry.type === 'file' ? [entry.digest] : []));
    return restoreEntries(entries, root, overwrite, this.documentStreams(files), options.onProgress);
  }

  /** Creates a new store in `dir` (created if missing; must not already hold a store). */
  static async init(dir: string, options: InitOptions = {}): Promise<Store> {
    parse(InitOptionsSchema, options, 'init options'); // bad options: fail before touching the disk
    const root = resolve(dir);
    const existed = existsSync(root);
    if (existed) {
      if (isStore(root)) throw new InvalidInputError(`${root} already holds a Kura store`, 'dir');
      const unexpected = readdirSync(root).filter((f) => !f.startsWith('.'));
      if (unexpected.length) throw new InvalidInputError(`${root} is not empty; a store needs a directory of its own`, 'dir');
    }
    mkdirSync(root, { recursive: true });
    let b: Awaited<ReturnType<typeof backends>> | undefined;
    try {
      // Opening the database creates its file: a failure there (a disk error, a full disk)
      // must be cleaned up too, or the directory "holds a store" that cannot be opened.
      b = await backends(root, false);
      return (await this.create(b, options)) as Store;
    } catch (e) {
      try {
        b?.db.close();
      } catch {
        // The close meets the same disk error; the files go below all the same.
      }
      await b?.release?.();
      // Leave nothing half-made behind: a later init must find the directory as it was.
      for (const f of [DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`, 'writers', 'packs', CONFIG_FILE, 'log', 'checkpoints']) rmSync(join(root, f), { recursive: true, force: true });
      if (!existed) rmSync(root, { recursive: true, force: true });
      throw e;
    }
  }

  /**
   * Rebuilds `kura.db` from the store's log (FORMAT.md §15.4): the configuration, the newest
   * checkpoint and every commit after it, into a new database that then replaces the old one
   * (which is never read: it may be damaged). Refused (STORE_LOCKED) while a writer is open.
   */
  static async rebuild(dir: string): Promise<{ seq: number; commits: number; checkpoint: number | undefined }> {
    const root = resolve(dir);
    if (!existsSync(join(root, CONFIG_FILE))) {
      throw new NotFoundError(
        existsSync(join(root, DB_FILE))
          ? `${root} has no log yet (a store from before the log): open it for writing once, which starts its log`
          : `no Kura store at ${root} (run kura init)`,
      );
    }
    const live = liveWriters(root);
    if (live.length) throw new StoreLockedError(`${root} is open for writing by ${live.length === 1 ? 'another process' : `${live.length} other processes`}; close them before rebuilding its database`);
    {
      const next = join(root, `${DB_FILE}.rebuild`);
      for (const f of [next, `${next}-wal`, `${next}-shm`]) rmSync(f, { force: true });
      const log = new FsLogStore(root);
      const config = await readConfigObject(log);
      if (!config) throw new NotFoundError(`${root}/${CONFIG_FILE} is empty`);
      const db = openSqlite(next);
      let result: { seq: number; commits: number; checkpoint: number | undefined };
      try {
        migrate(db);
        const head = await rebuildCatalog(db, prepareStatements(db), log, config);
        const checkpoints = await log.checkpoints();
        const newest = checkpoints[checkpoints.length - 1];
        const from = newest === undefined ? 0 : Number(newest);
        result = { seq: head.seq, commits: head.seq - from, checkpoint: newest === undefined ? undefined : from };
        db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      } finally {
        db.close();
      }
      // The old database's WAL must not be applied to the new file: removed first.
      for (const f of [`${DB_FILE}-wal`, `${DB_FILE}-shm`]) rmSync(join(root, f), { force: true });
      renameSync(next, join(root, DB_FILE));
      for (const f of [`${next}-wal`, `${next}-shm`]) rmSync(f, { force: true });
      return result;
    }
  }

  /** Opens the store in `dir`; `readonly: true` to read alongside another process's writer. */
  static async open(dir: string, options: OpenOptions = {}): Promise<Store> {
    const root = resolve(dir);
    if (!isStore(root)) throw new NotFoundError(`no Kura store at ${root} (run kura init)`);
    if (options.readonly && !existsSync(join(root, DB_FILE))) {
      throw new NotFoundError(`the store at ${root} has no database yet: open it for writing once (it is rebuilt from the log), or run kura rebuild`);
    }
    const b = await backends(root, options.readonly ?? false);
    try {
      const store = (await this.openBackends(b, options)) as Store;
      if (options.ingestWorkers !== undefined) store.#workers = options.ingestWorkers;
      return store;
    } catch (e) {
      b.db.close();
      await b.release?.();
      throw e;
    }
  }
}
