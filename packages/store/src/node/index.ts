/**
 * @kura/store for Node: Store.init / Store.open on a directory (FORMAT.md §5), with
 * better-sqlite3 metadata, file-system packs and log, and file-path puts, snapshots and
 * restores through worker threads.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { availableParallelism, totalmem } from 'node:os';
import { InvalidInputError } from '@kura/core';
import { NotFoundError } from '../errors.js';
import * as writes from '../store-writes.js';
import { InitOptions as InitOptionsSchema, onlyOptions, parse, type InitOptions, type OpenOptions } from '../options.js';
import { openParts } from '../store-open.js';
import { Store as StoreCore } from '../store.js';
import { documentStreams } from '../document-reads.js';
import type { WalkEntry } from '../catalog/snapshot.js';
import { DB_FILE, backends, isStore } from './backends.js';
import { CONFIG_FILE } from './fs-log.js';
import { bytesOnWorkers } from './ingest-pool.js';
import { WORKER_PUT_MIN, putFiles, type FilePutOutcome, type FileToPut, type ManyPuts, type PutFilesOptions } from './put-many.js';
import { rebuildDatabase, type RebuildReport } from './rebuild.js';
import { snapshotDirectory, type SnapshotHost, type SnapshotOptions, type SnapshotReport } from './snapshot-run.js';
import { Watch, type WatchOptions } from './watch.js';
import { includedEntries, prepareRestore, restoreEntries, restoreTarget, type RestoreProgress, type RestoreReport } from './snapshots.js';
import { cacheWasEncrypted, defaultCacheDir, isObjectLocation, notEncrypted, objectBackends, openObjectLocation, type KeyOptions, type LocationOptions } from './object-backends.js';
import { DirectoryObjectStore } from './dir-objects.js';
import { GrepPool } from './grep-away.js';
import { LineMatcher } from '@kura/core';
import { emptySummary, entries as grepEntries, grepEntry, grepRun, matchedPattern, type Entry, type GrepEvent, type GrepOptions, type GrepSource } from '../search/grep.js';
import { drainIndex, usable } from '../store-context.js';
import { textKey, type TextLender } from '../search/text-cache.js';
import { breather } from '../breather.js';

/**
 * Text not kept (text-cache.ts) past which grep hands the rest of a scan to its workers: while
 * they run (loaded, and a scan in the last 5 s), and when they must start first —
 * ~0.3 s a worker here, loading the store's modules, on the same cores. Measured on 2 cores,
 * one thread against two workers: 63 MiB cold 224-355 ms against 593-692, 262 MB cold 942-1245
 * against 1372-1448, and kept texts 1.5-2x faster on one thread at both sizes; workers already
 * running read texts not kept 1.7x faster (decision 0055).
 */
const PARALLEL_MIN_BYTES = 8 << 20;
const COLD_PARALLEL_MIN_BYTES = 512 << 20;
/**
 * A pattern the core finds as a literal (decision 0055: `FoldedLiteral`, memchr): matching it
 * costs less than the scan's other work, and kept texts are scanned faster here than on the
 * workers. Any other pattern's matching is the work: it goes to the workers as before
 * (`\b(ab|cd)[a-z]{3,}\d?\b` over kept text in the search suite: 697-762 MB/s on them,
 * 324-382 when it was scanned here first).
 */
const LITERAL = /^[^\\.+*?()|[\]{}^$]*$/;
import { encryptedStoreId } from '../encryption/config.js';

/** A directory holding an encrypted store (FORMAT.md §17): its configuration object says so. */
function isEncryptedDirectory(root: string): boolean {
  const file = join(root, CONFIG_FILE);
  return existsSync(file) && encryptedStoreId(readFileSync(file)) !== undefined;
}
import type { ObjectStore } from '../objects/object-store.js';
import type { StoreBackends } from '../store-types.js';

export * from '../index.js';
export { IngestPool, POOL_IDLE_MS } from './ingest-pool.js';
export { RECENT_MS, type RestoreProgress, type RestoreReport, type SnapshotProgress } from './snapshots.js';
export { leavesHole } from './holes.js';
export { FsPackStore } from './fs-packs.js';
export { FsLogStore } from './fs-log.js';
export { escapedName } from './names.js';
export { openSqlite } from './sqlite.js';
export { DB_FILE } from './backends.js';
export { defaultModelDir, loadMiniLm } from './minilm-node.js';
export { loadMiniLmOnWorker } from './embed-away.js';
export { configuredEmbedder, embedEndpointConfigured } from './configured-embedder.js';
export { WORKER_PUT_MIN, openRegularFile, type FilePutOutcome, type FileToPut } from './put-many.js';
export type { S3Options } from './s3-objects.js';
export { parseS3Location } from './s3-location.js';
export { DirectoryObjectStore } from './dir-objects.js';
export { defaultCacheDir, isObjectLocation, openObjectLocation, type KeyOptions, type LocationOptions, type PasswordSource } from './object-backends.js';
export { listAll, isNotFound, type ObjectStore, type ObjectInfo } from '../objects/object-store.js';
export { MemoryObjectStore } from '../objects/memory-objects.js';
export type { RebuildReport } from './rebuild.js';
export type { SnapshotOptions, SnapshotReport } from './snapshot-run.js';
export { Watch, WATCH_EXCLUDED, type WatchEvent, type WatchOptions, type OsWatcher } from './watch.js';

export class Store extends StoreCore {
  #workers = availableParallelism();
  /** A store in a local directory, unencrypted: where grep's workers open it too. */
  #localRoot: string | undefined;
  #grepPool: GrepPool | undefined;
  /** Watches made on this store: closed with it (their timers would keep the process alive, each tick failing STORE_CLOSED). */
  readonly #watches = new Set<Watch>();
  /** Snapshots running, which close() lets finish. */
  readonly #snapshots = new Set<Promise<SnapshotReport>>();
  #unapplied = 0;
  /** The store's own directories on this machine (its files, its cache): never in its snapshots. */
  #ownDirs: string[] = [];

  /**
   * Opened read-only: commits its log holds that its database lacks and that could not be
   * applied (see #openReading) — reads do not show them yet. 0 otherwise.
   */
  get unappliedCommits(): number {
    return this.#unapplied;
  }

  /** What put-many.ts and snapshot-run.ts work with. */
  #host(): ManyPuts & { store: Store; storeDirs: string[] } {
    return { store: this, context: (op) => this.context(op), workers: this.#workers, storeDirs: this.#ownDirs };
  }

  /**
   * Puts many files using every core: worker threads run the ingest kernel per file, this
   * thread deduplicates and commits, in input order. Yields one outcome per file, in input
   * order; a file that fails does not stop the others. `workers` defaults to the cores.
   */
  putFiles(files: Iterable<FileToPut> | AsyncIterable<FileToPut>, options: PutFilesOptions = {}): AsyncGenerator<FilePutOutcome> {
    onlyOptions(options, ['workers', 'refuseChanged', 'heldOpen'], 'putFiles');
    return putFiles(this.#host(), files, options);
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
  async snapshot(dir: string, options: SnapshotOptions = {}): Promise<SnapshotReport> {
    onlyOptions(options, ['label', 'time', 'tags', 'reread', 'onProgress', 'signal', 'mtime', 'exclude'], 'snapshot');
    // A snapshot called before close() finishes, as a put in progress does: its steps use the
    // context taken here (close() refuses every new call from its start, and waits: finishRuns).
    // (Through the store's own methods while it is open, as any caller: hooks on them apply.)
    const ctx = this.context('snapshot'); // (STORE_CLOSED, READ_ONLY)
    const open = () => !ctx.closed;
    const store: SnapshotHost['store'] = {
      ingestOptions: () => this.ingestOptions(),
      put: (input, meta = {}, opts = {}) => (open() ? this.put(input, meta, opts) : writes.put(ctx, input, meta, opts)),
      putChunks: (stream, meta = {}, opts = {}) => (open() ? this.putChunks(stream, meta, opts) : writes.putChunks(() => ctx, stream, meta, opts)),
      putReady: (docs, opts = {}) => (open() ? this.putReady(docs, opts) : writes.putReady(() => ctx, docs, opts)),
      createSnapshot: (root, a) => (open() ? this.createSnapshot(root, a) : writes.createSnapshot(ctx, root, a)),
    };
    const run = snapshotDirectory({ ...this.#host(), store, context: () => ctx }, dir, options);
    this.#snapshots.add(run);
    try {
      return await run;
    } finally {
      this.#snapshots.delete(run);
    }
  }

  /**
   * Keeps a directory tree in the store (watch.ts, decision 0059): catches up with what
   * changed, then stores each change as it settles, until `close()`. `ready` resolves once it
   * has caught up.
   */
  watch(dir: string, options: WatchOptions = {}): Watch {
    this.context('watch'); // (a watch on a closed store kept its process alive: refused here)
    const w = new Watch(this.#host(), dir, options);
    this.#watches.add(w);
    return w;
  }

  /**
   * `grep` (see StoreCore): a store in a local directory is scanned by worker threads, each
   * with the store open read-only (grep-away.ts), once the scan holds PARALLEL_MIN_BYTES of
   * text — but a literal is scanned on this thread until the text it must read back (not kept
   * by an earlier grep) passes PARALLEL_MIN_BYTES while the workers run, COLD_PARALLEL_MIN_BYTES
   * while they do not (`workers` other than 1 asks for them as for any other pattern). The
   * events are those of a scan on this thread, in the same order.
   */
  protected override async *grepRuns(pattern: string, options: GrepOptions): AsyncGenerator<GrepEvent[]> {
    const run = grepRun(options); // (`workers` checked there)
    // As many as the store's ingest workers (`ingestWorkers`: by default the cores).
    const threads = this.#workers;
    const root = this.#localRoot;
    if (root === undefined || threads < 2 || options.workers === 1) return yield* super.grepRuns(pattern, options);
    const ctx = this.context();
    await drainIndex(ctx);
    const ignoreCase = options.ignoreCase ?? false;
    pattern = matchedPattern(pattern, options); // (-w: the workers match it too)
    const matcher = new LineMatcher(pattern, ignoreCase); // (a bad pattern: INVALID_INPUT before any event)
    const summary = emptySummary();
    try {
      // Each page of entries is listed with this connection's open batch of commits ended:
      // the workers' connections see only what is committed (a path put while the grep ran
      // was listed here, not found there, and left out; found in review).
      const listed = grepEntries(ctx, options, () => {
        usable(ctx); // STORE_CLOSED once the store closes
        ctx.log.endBatch();
      });
      const breathe = breather();
      const source = this.grepSourceOf(ctx);
      const pace = async () => {
        usable(ctx); // (a store closed meanwhile: STORE_CLOSED)
        await breathe();
      };
      const texts = this.grepTexts;
      const away = (entries: Iterable<Entry & { size: number }>) => {
        this.#grepPool ??= new GrepPool(threads);
        const here = async function* (e: Entry): AsyncGenerator<GrepEvent[]> {
          yield* grepEntry(source, e, matcher, run, summary, pace);
        };
        return this.#grepPool.scan(root, entries, pattern, ignoreCase, run, summary, here, texts);
      };
      if (options.workers !== undefined || !LITERAL.test(pattern)) {
        // Asked for workers, or a pattern whose matching is the work: on them once the scan
        // holds PARALLEL_MIN_BYTES of text, kept or not.
        const first: (Entry & { size: number })[] = [];
        let text = 0;
        for (let n = listed.next(); !n.done; n = listed.next()) {
          first.push(n.value);
          if ((text += n.value.size) >= PARALLEL_MIN_BYTES) break;
        }
        if (text >= PARALLEL_MIN_BYTES) {
          yield* away(
            (function* () {
              yield* first;
              yield* listed;
            })(),
          );
        } else {
          for (const e of first) {
            yield* grepEntry(source, e, matcher, run, summary, pace);
            if (summary.truncated) break;
            await pace();
          }
        }
      } else {
        // A literal: here until the text it must read back (not kept) passes the bound, lower
        // while the workers run; the rest goes to them.
        const kept = (e: Entry) => !e.digest || texts.has(textKey(e.digest, { mediaType: e.media_type })) || texts.has(textKey(e.digest, 'extracted'));
        const bound = this.#grepPool?.ready ? PARALLEL_MIN_BYTES : COLD_PARALLEL_MIN_BYTES;
        let notKept = 0;
        let text = 0;
        let next = listed.next();
        for (; !next.done; next = listed.next()) {
          if (!kept(next.value) && (notKept += next.value.size) >= bound) break;
          yield* grepEntry(source, next.value, matcher, run, summary, pace);
          text += next.value.size;
          if (summary.truncated) break;
          await pace();
        }
        // A store with text enough for the workers: they start now, loaded by the time a grep
        // of a pattern that is no literal comes (a server's, an assistant's), which otherwise
        // waited ~0.3 s for them (the search suite's first regex: 0.32x ripgrep).
        if (text >= PARALLEL_MIN_BYTES) (this.#grepPool ??= new GrepPool(threads)).warm();
        if (!next.done && !summary.truncated) {
          const first = next.value;
          yield* away(
            (function* () {
              yield first;
              yield* listed;
            })(),
          );
        }
      }
    } catch (e) {
      usable(ctx); // a store closed during the scan: STORE_CLOSED, not the database's own error
      throw e;
    } finally {
      matcher.dispose();
    }
    yield [summary];
  }

  /** @internal What grep's workers scan with (grep-worker.ts), lent a batch's texts. */
  grepSource(texts?: TextLender): GrepSource {
    const ctx = this.context();
    return { db: ctx.db, st: ctx.st, reader: ctx.reader, texts };
  }

  /** Grep keeps up to 256 MiB of checked text, a sixteenth of the machine's memory at most. */
  protected override grepTextBytes(): number {
    return Math.min(256 << 20, Math.floor(totalmem() / 16));
  }

  /** Snapshots called before close() finish first (Store.close). */
  protected override async finishRuns(): Promise<void> {
    await Promise.allSettled([...this.#snapshots]);
  }

  /** Grep's workers go before the database closes (their read connections with them: no WAL left behind). */
  protected override async closeThreads(): Promise<void> {
    const watches = [...this.#watches];
    this.#watches.clear();
    await Promise.all(watches.map((w) => w.close()));
    const pool = this.#grepPool;
    this.#grepPool = undefined;
    await pool?.close();
    this.grepTexts.clear();
  }

  /**
   * Recreates snapshot `id`'s tree under `target` byte for byte (files checked against their
   * digests as they are written, their runs of zeros left as holes, modes, times, symlinks as
   * recorded, empty directories). Every entry is checked first — with `overwrite`, against what
   * is in its way: a restore that cannot finish writes nothing — and nothing is written through
   * a link. `target` must be empty unless `overwrite` (`""` is INVALID_INPUT, not the current
   * directory); one there keeps its own mode (a tree records none for its root), made writable
   * for its owner only while the restore writes. The report names links pointing outside
   * the restored tree. `signal` stops it between files and between a file's chunks: the file
   * being written goes (its temporary name beside it), those written stay, and the restore
   * rejects with the signal's reason. `include`: only these paths of the snapshot, what is under
   * them and the directories above them (`includedEntries`); one the snapshot lacks is NOT_FOUND.
   */
  async restore(id: string, target: string, options: { overwrite?: boolean; onProgress?: (p: RestoreProgress) => void; signal?: AbortSignal; include?: string[] } = {}): Promise<RestoreReport> {
    onlyOptions(options, ['overwrite', 'onProgress', 'signal', 'include'], 'restore');
    const root = restoreTarget(target); // ("" is INVALID_INPUT: resolved, it was the current directory)
    let entries: WalkEntry[] = [];
    for await (const e of this.snapshotEntries(id)) entries.push(e);
    if (options.include !== undefined) entries = includedEntries(entries, options.include, id);
    const overwrite = options.overwrite ?? false;
    // (Checks every entry; a target there is made writable for its owner while the restore writes.)
    const opened = prepareRestore(entries, root, overwrite);
    const files = entries.flatMap(({ entry }) => (entry.type === 'file' ? [entry.digest] : []));
    // A restore reads the snapshot's files whole: on object storage, a pack at a time.
    this.fetchWholePacks(true);
    try {
      return await restoreEntries(entries, root, overwrite, this.restoreStreams(files), options.onProgress, options.signal, opened);
    } finally {
      this.fetchWholePacks(false);
      opened.putBack(); // (done already, unless restoreEntries was never reached)
    }
  }

  /**
   * Opens the documents a restore writes, as streams: their chunks' locations are looked up
   * for all of them at once (document-reads.ts `documentStreams`).
   */
  protected restoreStreams(digests: readonly string[]): (digest: string) => Promise<AsyncIterable<Uint8Array>> {
    const streams = documentStreams(this.context(), digests, async (digest) => (await this.document(digest, { unlisted: true })).stream());
    return async (digest) => {
      this.context(); // STORE_CLOSED once the store closes
      return streams(digest);
    };
  }

  /**
   * Creates a new store in `dir` (created if missing; must not already hold a store), or in an
   * object store when `dir` is an `s3://bucket/prefix` location (decision 0040).
   */
  static async init(dir: string, initOptions: InitOptions & LocationOptions = {}): Promise<Store> {
    // (requireEncryption is an opening's: what init makes, `encryption` says.)
    const { requireEncryption: _required, ...options } = initOptions;
    if (isObjectLocation(dir)) {
      const { cacheDir, s3, packCacheBytes, ...init } = options;
      return this.initObjects(await openObjectLocation(dir, { ...(s3 ? { s3 } : {}) }), { ...init, cacheDir: cacheDir ?? defaultCacheDir(dir), ...(packCacheBytes !== undefined ? { packCacheBytes } : {}) });
    }
    const { cacheDir, s3: _s3, packCacheBytes, password, encryption, ...plainInit } = options;
    parse(InitOptionsSchema, plainInit, 'init options'); // bad options: fail before touching the disk
    const root = resolve(dir);
    if (encryption) {
      // An encrypted store lives as objects in its directory (FORMAT.md §17), its database
      // and every other plaintext in the cache directory, outside it.
      if (existsSync(root) && readdirSync(root).some((f) => !f.startsWith('.'))) throw new InvalidInputError(`${root} is not empty; a store needs a directory of its own`, 'dir');
      mkdirSync(root, { recursive: true, mode: 0o700 }); // (its owner's alone, as its files: dir-objects.ts)
      return this.initObjects(new DirectoryObjectStore(root), { ...plainInit, cacheDir: cacheDir ?? defaultCacheDir(root), password, encryption, ...(packCacheBytes !== undefined ? { packCacheBytes } : {}) });
    }
    // (Said, not zod's "Unrecognized key": the types offer them for the stores that take them.)
    if (cacheDir !== undefined) throw new InvalidInputError('cacheDir is for a store on object storage or an encrypted one: a plain store keeps its database in its directory', 'cacheDir');
    if (password !== undefined) throw new InvalidInputError('password makes an encrypted store only with encryption (encryption: {})', 'password');
    if (_s3 !== undefined) throw new InvalidInputError(`s3 is for a store on object storage (s3://bucket/prefix): ${dir} is a directory`, 's3');
    if (packCacheBytes !== undefined) throw new InvalidInputError('packCacheBytes is for a store on object storage or an encrypted one: a plain store reads its packs where they are', 'packCacheBytes');
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
      b.ingest = bytesOnWorkers(availableParallelism(), WORKER_PUT_MIN);
      const store = (await this.create(b, plainInit)) as Store;
      store.#localRoot = root;
      store.#ownDirs = [root];
      return store;
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
   * Rebuilds `kura.db` from the store's log (FORMAT.md §15.4; rebuild.ts). Refused
   * (STORE_LOCKED) while a writer is open, and (CORRUPT_DATA `log-behind`) when the database
   * it would replace has applied commits the log no longer holds, unless `force`.
   */
  static async rebuild(dir: string, options: { force?: boolean } = {}): Promise<RebuildReport> {
    return rebuildDatabase(dir, options);
  }

  /**
   * Creates a new store in an object store (decision 0040); its database lives in `cacheDir`.
   * The object store is closed with the store.
   */
  static async initObjects(objects: ObjectStore, options: InitOptions & KeyOptions & { cacheDir: string; packCacheBytes?: number }): Promise<Store> {
    const { cacheDir, packCacheBytes, password, encryption, ...init } = options;
    parse(InitOptionsSchema, init, 'init options');
    // The cache is derived: whatever an earlier store left in it goes (objectBackends).
    const b = await objectBackends(objects, cacheDir, false, true, packCacheBytes, true, { password, ...(encryption ? { encryption } : {}) });
    b.ingest = bytesOnWorkers(availableParallelism(), WORKER_PUT_MIN);
    try {
      const store = (await this.create(b, init)) as Store;
      store.#ownDirs = [cacheDir, ...(objects instanceof DirectoryObjectStore ? [objects.root] : [])];
      return store;
    } catch (e) {
      b.db.close();
      await b.release?.();
      throw e;
    }
  }

  /** Opens the store in an object store (decision 0040), its database in `cacheDir` (made from the log when missing). */
  static async openObjects(objects: ObjectStore, options: OpenOptions & Pick<KeyOptions, 'password' | 'requireEncryption'> & { cacheDir: string; packCacheBytes?: number }): Promise<Store> {
    const { cacheDir, packCacheBytes, password, requireEncryption, ...open } = options;
    if (open.readonly) throw new InvalidInputError('a store on object storage opens for writing (its cache is made from the log); read-only replicas are not built yet', 'readonly');
    const store = await Store.#openOn(this, await objectBackends(objects, cacheDir, false, true, packCacheBytes, false, { password, ...(requireEncryption ? { requireEncryption } : {}) }), open);
    store.#ownDirs = [cacheDir, ...(objects instanceof DirectoryObjectStore ? [objects.root] : [])];
    return store;
  }

  /** Opens the store in `b` as a `cls` with this platform's ingest workers; `b` is let go when that fails. */
  static async #openOn(cls: typeof Store, b: StoreBackends, options: OpenOptions): Promise<Store> {
    const workers = options.ingestWorkers ?? availableParallelism();
    b.ingest = bytesOnWorkers(workers, WORKER_PUT_MIN);
    try {
      const store = (await cls.openBackends(b, options)) as Store;
      store.#workers = workers;
      return store;
    } catch (e) {
      b.db.close();
      await b.release?.();
      throw e;
    }
  }

  /**
   * Opens the store in `dir`, or at an `s3://bucket/prefix` location; `readonly: true` to read
   * alongside another process's writer.
   */
  static async open(dir: string, options: OpenOptions & LocationOptions = {}): Promise<Store> {
    if (isObjectLocation(dir)) {
      const { cacheDir, s3, packCacheBytes, ...open } = options;
      return this.openObjects(await openObjectLocation(dir, { ...(s3 ? { s3 } : {}) }), { ...open, cacheDir: cacheDir ?? defaultCacheDir(dir), ...(packCacheBytes !== undefined ? { packCacheBytes } : {}) });
    }
    const root = resolve(dir);
    if (isEncryptedDirectory(root)) {
      // (Opened as every store on object storage is: for writing, its cache made from its
      // objects; readers share it with writers as servers of a bucket do.)
      const { cacheDir, s3: _s3, packCacheBytes, readonly: _readonly, ...open } = options;
      return this.openObjects(new DirectoryObjectStore(root), { ...open, cacheDir: cacheDir ?? defaultCacheDir(root), ...(packCacheBytes !== undefined ? { packCacheBytes } : {}) });
    }
    if (!isStore(root)) throw new NotFoundError(`no Kura store at ${root} (run kura init)`);
    // A plain store where an encrypted one was expected: refused (KeyOptions.requireEncryption).
    if (options.requireEncryption) throw notEncrypted(root, 'a password is configured');
    const cache = options.cacheDir ?? defaultCacheDir(root);
    if (cacheWasEncrypted(join(cache, DB_FILE))) throw notEncrypted(root, `the cache ${cache} was made for an encrypted store here; if it was replaced on purpose, delete that directory`);
    if (options.readonly && !existsSync(join(root, DB_FILE))) {
      throw new NotFoundError(`the store at ${root} has no database yet: open it for writing once (it is rebuilt from the log), or run kura rebuild`);
    }
    // (A plain store asks for no password: one given is not needed.)
    const { password: _password, cacheDir: _cacheDir, s3: _s3, packCacheBytes: _packCacheBytes, requireEncryption: _required, ...open } = options;
    const store = open.readonly ? await Store.#openReading(this, root, open) : await Store.#openOn(this, await backends(root, false), open);
    store.#localRoot = root;
    store.#ownDirs = [root];
    return store;
  }

  /**
   * Read-only, with every acknowledged commit: a writer that died inside a batch (decision
   * 0028: a commit is acknowledged once its frame is in the log, the batch's COMMIT follows)
   * leaves commits in the log that the database lacks. The next writer applies them when it
   * opens; a reader cannot, so a reader that finds some — still there after a live writer's
   * batch would have ended — opens the store for writing once to apply them, then reads. Where
   * that fails (a store it may not write), it reads what the database holds and says how many
   * commits it lacks (`unappliedCommits`).
   */
  static async #openReading(cls: typeof Store, root: string, open: OpenOptions): Promise<Store> {
    const reading = await Store.#openOn(cls, await backends(root, true), open);
    const { logged } = reading.ctx.log.unapplied();
    // (Waiting for the commits found at first, not for the log to be still: a busy writer's
    // next commits are always on their way.)
    for (const since = Date.now(); reading.ctx.log.unapplied().applied < logged; await new Promise((r) => setTimeout(r, 5))) {
      if (Date.now() - since < STRANDED_WAIT_MS) continue;
      await reading.close();
      try {
        await applyStranded(root, open);
      } catch {
        // Whatever kept the commits from being applied (this process may not write here, a
        // writer holds the lock past the busy timeout, the log is damaged past them), the
        // reader reads what the database holds and says what it lacks; `verify` reports damage.
        const store = await Store.#openOn(cls, await backends(root, true), open);
        const { applied, logged: now } = store.ctx.log.unapplied();
        store.#unapplied = now - applied;
        return store;
      }
      return Store.#openOn(cls, await backends(root, true), open);
    }
    return reading;
  }
}

/**
 * How long a reader waits for commits it finds in the log and not in the database to reach it
 * before it applies them itself: a live writer's batch ends within LONE_BATCH_MS while its
 * event loop runs (catalog/commit-batch.ts).
 */
const STRANDED_WAIT_MS = 50;

/**
 * Applies the commits the log holds beyond the database, under the write lock, as a writer's
 * open does (openParts: the schema, the catch-up) — and nothing else a writer's session does
 * (no index drain or compaction at its close: a reader's open stays about the commits).
 */
async function applyStranded(root: string, open: OpenOptions): Promise<void> {
  const b = await backends(root, false);
  try {
    const { opts } = await openParts(b, { ...open, readonly: false });
    await opts.log.close();
  } finally {
    b.db.close();
    await b.release?.();
  }
}
export { openKeyRing } from './key-ring.js';
export { CONFIG_FILE } from './fs-log.js';
