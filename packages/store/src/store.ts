/**
 * The store: platform-neutral logic over a SqlDatabase and a PackStore (FORMAT.md §5–9).
 * Node wires it to better-sqlite3 and the file system (node/index.ts); the browser wires it
 * to SQLite-in-wasm and OPFS (browser/index.ts).
 */
import { InvalidInputError, resolveChunkParams, type ByteSource, type Digest, type ResolvedChunkParams } from '@kura/core';
import { CommitLog } from './catalog/commit-log.js';
import { createCatalog, prepareCatalog } from './catalog/open.js';
import type { MetaChange } from './entries.js';
import type { Op, OpResult } from './catalog/ops.js';
import { requireDoc, statTarget, type DocumentInfo, type EntryTarget } from './entries.js';
import { FormatMismatchError, ReadOnlyError, StoreClosedError } from './errors.js';
import { collectGarbage, sealAbandonedPacks, type GcProgress, type GcReport } from './gc.js';
import { formatDigest, hexToBytes, parseDigest } from './hex.js';
import { InitOptions, ListQuery, MetaUpdate, OpenOptions, PutMeta, parse, type Durability } from './options.js';
import { cachedDigests, hasStamps, recordStamps, type StampedFile } from './stamps.js';
import { ingestHere, putDocument, putReadyDocuments, type ChunkStream, type CommitTurn, type PutOptions, type PutResult, type ReadyDocument, type ResolvedMeta } from './put.js';
import { Reader } from './read.js';
import { SCHEMA_VERSION, migrate, schemaVersion } from './schema.js';
import { prepareStatements, type Statements } from './statements.js';
import { verifyStore, type VerifyProgress, type VerifyReport } from './verify.js';
import { Indexer, search, type SearchHit, type SearchQuery } from './search.js';
import { Writer } from './writer.js';
import { chunkBytes, documentStreams, manifestOf, openDocument, rangeBytes, type DocumentReads } from './document-reads.js';
import { exclusiveSize, listEntries, pathVersion, resolveRef, storeStats, tagCounts, versionsOf, type CatalogReads } from './queries.js';
import { FORMAT_NAME, FORMAT_VERSION, readConfig, type DocumentReader, type ListResult, type PutInput, type ReadyInput, type StoreBackends, type StoreConfig, type StoreStats, type VersionInfo } from './store-types.js';
import { KnownChunks, preloadKnown } from './ingest/known-chunks.js';
import {
  diffTrees,
  requireSnapshot,
  snapshotExclusiveSize,
  snapshotInfo,
  walkTree,
  type DirNode,
  type SnapshotDiff,
  type SnapshotInfo,
  type WalkEntry,
} from './snapshot.js';
import { DEFAULT_HOLD_MS, checkKeys, missingChunks, putChunk, storedChunks, type ChunkPutResult } from './sync.js';

function randomHex(bytes: number): string {
  const b = new Uint8Array(bytes);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

function randomSeed(): bigint {
  const b = new Uint8Array(8);
  crypto.getRandomValues(b);
  return b.reduce((acc, x) => (acc << 8n) | BigInt(x), 0n);
}

export class Store {
  readonly config: StoreConfig;
  readonly readonly: boolean;
  readonly #b: StoreBackends;
  readonly #st: Statements;
  readonly #writer: Writer;
  readonly #reader: Reader;
  readonly #indexer: Indexer;
  #compression: number | false;
  #closed = false;
  #gcRunning: Promise<GcReport> | undefined;
  readonly #gcMarginMs: number | undefined;
  readonly #log: CommitLog;
  /** What the catalog reads need (queries.ts), and the document reads (document-reads.ts). */
  readonly #reads: CatalogReads;
  readonly #docs: DocumentReads;
  #known: KnownChunks | undefined;

  protected constructor(
    b: StoreBackends,
    config: StoreConfig,
    opts: { readonly: boolean; durability: Durability; compression: number | false; packSize: number | undefined; gcMarginMs?: number | undefined; log: CommitLog; st: Statements },
  ) {
    this.#gcMarginMs = opts.gcMarginMs;
    this.#b = b;
    this.config = config;
    this.readonly = opts.readonly;
    this.#compression = opts.compression;
    this.#st = opts.st;
    this.#log = opts.log;
    this.#reads = { db: b.db, st: opts.st };
    this.#writer = new Writer(b.db, this.#st, opts.log, b.packs, opts.durability, opts.packSize);
    this.#reader = new Reader(this.#st, b.packs, (id) => this.#writer.packName(id), (id) => this.#writer.forgetPack(id), b.documentHasher, config.chunking.max);
    this.#docs = { db: b.db, st: this.#st, reader: this.#reader };
    this.#indexer = new Indexer(b.db, this.#st, this.#reader, !opts.readonly, () => this.#writer.idle(), () => this.#writer.busy);
    this.#indexer.schedule(); // whatever a previous session left queued
  }

  /** Creates a store in empty backends and opens it for writing. */
  static async create(b: StoreBackends, options: InitOptions = {}, packSize?: number): Promise<Store> {
    const o = parse(InitOptions, options, 'init options');
    const seed = o.chunking.seed === 'random' ? randomSeed() : BigInt(o.chunking.seed);
    const chunking = resolveChunkParams({ avg: o.chunking.avg, seed });
    if (schemaVersion(b.db) !== 0) throw new InvalidInputError('a store already exists here', 'dir');
    migrate(b.db);
    const config = new Map([
      ['format', FORMAT_NAME],
      ['format_version', String(FORMAT_VERSION)],
      ['store_id', randomHex(16)],
      ['created_at', new Date().toISOString()],
      ['chunk_avg', String(chunking.avg)],
      ['chunk_seed', String(chunking.seed)],
      ['compression_level', o.compression === false ? 'none' : String(o.compression)],
      ['durability', o.durability],
    ]);
    await createCatalog(b.db, prepareStatements(b.db), b.log, config);
    return this.openBackends(b, { durability: o.durability, ...(packSize ? { packSize } : {}) });
  }

  /** Opens an existing store in the given backends. */
  static async openBackends(b: StoreBackends, options: OpenOptions = {}): Promise<Store> {
    const o = parse(OpenOptions, options, 'open options');
    if (!o.readonly) migrate(b.db);
    else if (schemaVersion(b.db) > SCHEMA_VERSION) migrate(b.db); // throws FORMAT_MISMATCH
    const st = prepareStatements(b.db);
    // The database is the log's replay: made when missing, brought up to the log's head.
    if (!o.readonly) await prepareCatalog(b.db, st, b.log);
    const config = readConfig(b.db);
    if (o.chunking?.avg !== undefined && o.chunking.avg !== config.chunking.avg) {
      throw new FormatMismatchError(
        `this store chunks with avg ${config.chunking.avg}, not ${o.chunking.avg}; chunking is fixed when a store is created`,
        String(o.chunking.avg),
        String(config.chunking.avg),
      );
    }
    if (o.chunking?.seed !== undefined && o.chunking.seed !== 'random' && BigInt(o.chunking.seed) !== config.chunking.seed) {
      throw new FormatMismatchError('this store was created with another chunking seed', String(o.chunking.seed), String(config.chunking.seed));
    }
    const durability = o.durability ?? config.durability;
    b.setDurability?.(durability);
    // `this`, not Store: platform subclasses (node/index.ts) get instances of themselves.
    const log = o.readonly ? CommitLog.reader(b.db, st, b.log) : await CommitLog.open(b.db, st, b.log, b.writer?.id);
    const store = new this(b, config, { readonly: o.readonly, durability, compression: o.compression ?? config.compression, packSize: o.packSize, gcMarginMs: o.gcMarginMs, log, st });
    if (!o.readonly) sealAbandonedPacks(log, st, b.writer);
    return store;
  }

  // ---- writing -----------------------------------------------------------------------------

  async put(input: PutInput, meta: PutMeta = {}, options: PutOptions = {}): Promise<PutResult> {
    this.#writable('put');
    const m = parse(PutMeta, meta, 'put meta');
    let source: ByteSource;
    if (typeof input === 'string') {
      if (!this.#b.openPath) throw new InvalidInputError('file paths are not supported on this platform', 'input');
      source = this.#b.openPath(input);
    } else {
      source = input;
    }
    const ctx = this.#putContext();
    return this.#indexed(putDocument(ctx, ingestHere(ctx, source), m, undefined, true, options.onChunk));
  }

  /** For platform subclasses: a put on this thread of a snapshot's file (kept, not listed). */
  protected putForSnapshot(source: ByteSource): Promise<PutResult> {
    this.#writable('snapshot');
    const ctx = this.#putContext();
    return putDocument(ctx, ingestHere(ctx, source), {}, undefined, false);
  }

  async #indexed<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } finally {
      this.#indexer.schedule();
    }
  }

  /**
   * Stores a document whose chunks were produced elsewhere (a worker running the same kernel
   * with `config.chunking` and `ingestOptions().compression`). Chunk keys and the digest are
   * trusted as computed by the kernel; the ingest pools (Node worker threads, browser Web
   * Workers: ingest/pool.ts) are the producers.
   */
  async putChunks(stream: ChunkStream, meta: PutMeta = {}, options: { order?: CommitTurn; listed?: boolean } & PutOptions = {}): Promise<PutResult> {
    let checked: ResolvedMeta;
    try {
      this.#writable('put');
      checked = parse(PutMeta, meta, 'put meta');
    } catch (e) {
      // Refused before it started: the producer (a worker) is told to stop, and the puts
      // behind this one in a commit order go on.
      options.order?.done();
      await stream.return?.(undefined as never).catch(() => undefined);
      throw e;
    }
    return this.#indexed(putDocument(this.#putContext(), stream, checked, options.order, options.listed ?? true, options.onChunk));
  }

  /**
   * Stores documents an ingest worker read and ingested whole (its answer to a batch of small
   * files or Blobs) in one pass and one group commit (put.ts `putReadyDocuments`), instead of
   * a chunk stream and a commit per document. Per document, its result or the error that
   * refused it (its meta, or its bytes).
   */
  async putReady(
    docs: readonly (ReadyInput | Error)[],
    options: { order?: CommitTurn; listed?: boolean } = {},
  ): Promise<(PutResult | Error)[]> {
    try {
      this.#writable('put');
    } catch (e) {
      options.order?.done();
      throw e;
    }
    const ready = docs.map((d): ReadyDocument | Error => {
      if (d instanceof Error || d.meta === undefined) return d as ReadyDocument | Error;
      try {
        return { ...d, meta: parse(PutMeta, d.meta, 'put meta') };
      } catch (e) {
        return e as Error;
      }
    });
    return this.#indexed(putReadyDocuments(this.#putContext(), ready, options.listed ?? true, options.order));
  }

  // ---- chunk-level sync (FORMAT.md §12) ------------------------------------------------------

  /** Of these chunk keys (BLAKE3, 64 hex), the ones the store has no good copy of, first-seen order. */
  async missingChunks(keys: string[]): Promise<string[]> {
    this.#open();
    return missingChunks(this.#putContext(), checkKeys(keys, 'keys'));
  }

  /**
   * Stores one chunk for a later `commitChunks`. The store computes its key (and refuses a
   * wrong `expectKey` with DIGEST_MISMATCH); GC keeps it until `holdMs` from now even while
   * no document uses it.
   */
  async putChunk(bytes: Uint8Array, options: { expectKey?: string; holdMs?: number } = {}): Promise<ChunkPutResult> {
    this.#writable('putChunk');
    if (options.expectKey !== undefined) checkKeys([options.expectKey], 'expectKey');
    const hold = options.holdMs ?? DEFAULT_HOLD_MS;
    if (!Number.isSafeInteger(hold) || hold < 0) throw new InvalidInputError('holdMs must be a non-negative integer', 'holdMs');
    return putChunk(this.#putContext(), bytes, options.expectKey, Date.now() + hold);
  }

  /**
   * Stores a document made of stored chunks, in order. Every chunk must be in the store
   * (else MISSING_CHUNKS listing all absent keys, nothing stored); the bytes are read back and
   * hashed, and `meta.expectDigest`, when given, must match (else DIGEST_MISMATCH).
   */
  async commitChunks(keys: string[], meta: PutMeta = {}): Promise<PutResult> {
    this.#writable('commitChunks');
    checkKeys(keys, 'chunks');
    const m = parse(PutMeta, meta, 'put meta');
    const ctx = this.#putContext();
    return this.#indexed(putDocument(ctx, storedChunks(ctx, this.#reader, keys), m));
  }

  /** The parameters an ingest producer must use for `putChunks`. */
  ingestOptions(): { chunking: ResolvedChunkParams; compression: number | false } {
    return { chunking: this.config.chunking, compression: this.#compression };
  }

  #putContext() {
    return { writer: this.#writer, st: this.#st, chunking: this.config.chunking, compression: this.#compression, documentHasher: this.#b.documentHasher, known: this.#known };
  }

  /**
   * The chunks this store holds, for ingest workers (decision 0018): made on first use, by a
   * platform that runs workers and has SharedArrayBuffer; from then on every put tells it the
   * chunks it found or committed.
   */
  protected knownChunks(): KnownChunks | undefined {
    if (!KnownChunks.available()) return undefined;
    if (!this.#known) {
      const known = (this.#known = new KnownChunks());
      preloadKnown(known, this.#st, () => !this.#closed && this.#known === known);
    }
    return this.#known;
  }

  /**
   * Removes a document from the namespace: every version naming it and its pathless entry
   * (decision 0025). A snapshot that names it keeps its bytes; otherwise its chunks become
   * garbage unless other documents use them. False when nothing named it.
   */
  async delete(digest: string): Promise<boolean> {
    this.#writable('delete');
    parseDigest(digest);
    return (await this.#commit({ op: 'delete-document', digest })) as boolean;
  }

  /** Deletes a path's entry and all its versions. False when there is no such path. */
  async deletePath(path: string): Promise<boolean> {
    this.#writable('deletePath');
    if (typeof path !== 'string' || !path) throw new InvalidInputError('path must be a non-empty string', 'path');
    return (await this.#commit({ op: 'delete-path', path })) as boolean;
  }

  // ---- snapshots (FORMAT.md §13) ---------------------------------------------------------

  /**
   * Records a snapshot of a directory tree whose files are already in the store (the Node
   * store's `snapshot(dir)` reads a directory and puts its files first). One transaction.
   */
  async createSnapshot(root: DirNode, options: { label?: string } = {}): Promise<SnapshotInfo> {
    this.#writable('createSnapshot');
    if (root?.type !== 'dir' || !Array.isArray(root.entries)) throw new InvalidInputError('a snapshot root is a directory node', 'root');
    const label = options.label ?? null;
    if (label !== null && (typeof label !== 'string' || label.length > 1024)) throw new InvalidInputError('label must be a string of at most 1024 characters', 'label');
    return (await this.#commit({ op: 'snapshot', root, label })) as SnapshotInfo;
  }

  /** For platform snapshots of real directories (FORMAT.md §13.4): stamps.ts `cachedDigests`. */
  protected cachedDigests(files: readonly { path: string; stamp: string; size: number }[]): (`sha256:${string}` | undefined)[] {
    this.#open();
    return this.#b.db.read(() => cachedDigests(this.#st, files));
  }

  /** Whether an earlier snapshot recorded the stamp of any file under `dir` (§13.4). */
  protected hasStamps(dir: string): boolean {
    this.#open();
    return hasStamps(this.#st, dir);
  }

  /**
   * Records the stamps of the files a snapshot of `dir` named (stamps.ts). A hint, not data:
   * its own transaction, after the snapshot's.
   */
  protected recordStamps(dir: string, files: readonly StampedFile[]): void {
    this.#writable('snapshot');
    this.#b.db.transaction(() => recordStamps(this.#st, dir, files));
  }

  /** All snapshots, oldest first. */
  async snapshots(): Promise<SnapshotInfo[]> {
    this.#open();
    return this.#st.snapshotsAll.all().map(snapshotInfo);
  }

  async snapshotInfo(id: number): Promise<SnapshotInfo> {
    this.#open();
    return snapshotInfo(requireSnapshot(this.#st, id));
  }

  /** Every entry of a snapshot, depth first, each directory before its contents. */
  async *snapshotEntries(id: number): AsyncGenerator<WalkEntry> {
    this.#open();
    yield* walkTree(this.#st, formatDigest(requireSnapshot(this.#st, id).tree));
  }

  /** For restores (platform subclasses): document-reads.ts `documentStreams`. */
  protected documentStreams(digests: readonly string[]): (digest: string) => Promise<AsyncIterable<Uint8Array>> {
    const next = documentStreams(this.#docs, digests, async (digest) => (await this.document(digest, { unlisted: true })).stream());
    return async (digest) => {
      this.#open();
      return next(digest);
    };
  }

  /** Paths added, removed and changed from snapshot `a` to snapshot `b`. */
  async diffSnapshots(a: number, b: number): Promise<SnapshotDiff> {
    this.#open();
    // One read transaction: one snapshot of both trees, and one lock for their many reads.
    return this.#b.db.read(() => diffTrees(this.#st, formatDigest(requireSnapshot(this.#st, a).tree), formatDigest(requireSnapshot(this.#st, b).tree)));
  }

  /** Bytes that deleting the snapshot would free (its chunks no other document uses). */
  async snapshotExclusiveSize(id: number): Promise<number> {
    this.#open();
    // A lookup per tree, document and chunk: in one read transaction, ~1.5 µs each instead of
    // ~16 µs as statements of their own (fcntl locks per transaction).
    return this.#b.db.read(() => snapshotExclusiveSize(this.#st, requireSnapshot(this.#st, id)));
  }

  /**
   * Deletes a snapshot. Documents only it kept (never put by a user, or deleted since) go with
   * it; their chunks are reclaimed by the next `gc`.
   */
  async deleteSnapshot(id: number): Promise<void> {
    this.#writable('deleteSnapshot');
    requireSnapshot(this.#st, id); // NOT_FOUND without a commit
    await this.#commit({ op: 'rm-snapshot', id });
  }

  // ---- search and versions ---------------------------------------------------------------

  /**
   * Full-text search over paths, tags, metadata and the text of text-like documents, best
   * first (BM25), with a highlighted snippet each. Sees every committed change. Plain words
   * are matched as words; FTS5 syntax is accepted; a malformed query is INVALID_QUERY.
   */
  async search(query: string, options: SearchQuery = {}): Promise<SearchHit[]> {
    this.#open();
    await this.#indexer.drain();
    return search(this.#b.db, this.#st, this.#reader, query, options);
  }

  /** The versions of a logical path, oldest first. */
  async versions(path: string): Promise<VersionInfo[]> {
    this.#open();
    return versionsOf(this.#reads, path);
  }

  /**
   * The digest a reference names: a digest (`sha256:…`), a path (its latest version),
   * `path@N` (version N) or `path@<ISO time>` (the version that was latest then).
   */
  async resolve(ref: string): Promise<Digest> {
    this.#open();
    return resolveRef(this.#reads, ref);
  }

  /**
   * One version of a path, without parsing a reference string (a path may contain `@`):
   * `version` N, or the version that was latest `at` a time, or else the latest.
   */
  async pathVersion(path: string, which: { version?: number; at?: Date | string | number } = {}): Promise<VersionInfo> {
    this.#open();
    return pathVersion(this.#reads, path, which);
  }

  /** Deletes one version of a path; the others keep their numbers, the document stays. */
  async deleteVersion(path: string, version: number): Promise<boolean> {
    this.#writable('deleteVersion');
    if (!Number.isSafeInteger(version) || version < 1) throw new InvalidInputError('version must be a positive integer', 'version');
    if (typeof path !== 'string' || !path) throw new InvalidInputError('path must be a non-empty string', 'path');
    return (await this.#commit({ op: 'delete-version', path, version })) as boolean;
  }

  /**
   * Sets (string) or removes (null) key/value metadata of one entry: `ref` is a path, or a
   * digest naming the entry of that content (decision 0025; AMBIGUOUS when several show it).
   */
  async setMeta(ref: string, kv: Record<string, string | null>): Promise<void> {
    await this.updateMeta([{ ...targetOf(ref), meta: kv }]);
  }

  async addTags(ref: string, tags: string[]): Promise<void> {
    await this.updateMeta([{ ...targetOf(ref), addTags: tags }]);
  }

  async removeTags(ref: string, tags: string[]): Promise<void> {
    await this.updateMeta([{ ...targetOf(ref), removeTags: tags }]);
  }

  /**
   * Applies many metadata changes in one transaction: all or none (an unknown entry is
   * NOT_FOUND, a digest several entries show AMBIGUOUS, and nothing changes). Returns how
   * many updates were applied; read the entries back with `stat` when needed.
   */
  async updateMeta(updates: MetaUpdate[]): Promise<{ updated: number }> {
    this.#writable('updateMeta');
    if (!Array.isArray(updates)) throw new InvalidInputError('updates must be an array', 'updates');
    if (updates.length > 10_000) throw new InvalidInputError('at most 10,000 updates per batch', 'updates');
    const parsed = updates.map((u, i) => parse(MetaUpdate, u, `updates[${i}]`));
    parsed.forEach((u, i) => u.digest !== undefined && parseDigest(u.digest, `updates[${i}].digest`));
    const op: Op = {
      op: 'meta',
      updates: parsed.map((u) => {
        const change: MetaChange = {};
        if (u.mediaType !== undefined) change.mediaType = u.mediaType;
        if (u.meta !== undefined) change.meta = u.meta;
        if (u.addTags !== undefined) change.addTags = u.addTags;
        if (u.removeTags !== undefined) change.removeTags = u.removeTags;
        return { target: u.digest !== undefined ? { digest: u.digest } : { path: u.path! }, change };
      }),
    };
    await this.#commit(op);
    this.#indexer.schedule();
    return { updated: parsed.length };
  }

  /**
   * Reclaims unreferenced chunks and compacts packs that are mostly garbage, giving the event
   * loop turns as it goes. `onProgress` is told each step (a GC asked for while one runs
   * shares it, and its own `onProgress` is not called).
   */
  async gc(onProgress?: (p: GcProgress) => void): Promise<GcReport> {
    this.#writable('gc');
    this.#gcRunning ??= collectGarbage(this.#b.db, this.#st, this.#b.packs, this.#writer, this.#reader, onProgress, this.#b.writer, this.#gcMarginMs).finally(() => {
      this.#gcRunning = undefined;
      const known = this.#known;
      if (known) {
        // Chunks it deleted would be sent raw, and stored uncompressed: start again.
        known.clear();
        preloadKnown(known, this.#st, () => !this.#closed && this.#known === known);
      }
    });
    return this.#gcRunning;
  }

  /**
   * Writes a checkpoint of the catalog at the newest commit (FORMAT.md §15.5): a rebuild then
   * starts there. Writers make one by themselves every CHECKPOINT_EVERY commits. Answers its seq.
   */
  async checkpoint(): Promise<{ seq: number }> {
    this.#writable('checkpoint');
    return { seq: await this.#log.checkpoint() };
  }

  // ---- reading -----------------------------------------------------------------------------

  async has(digest: string): Promise<boolean> {
    this.#open();
    return this.#st.docIdByDigest.get(parseDigest(digest)) !== undefined;
  }

  /**
   * An entry: `ref` is a path, or a digest naming the entry of that content (decision 0025:
   * AMBIGUOUS when several entries show it). A document only older versions name shows its
   * content with no path, tags or metadata.
   */
  async stat(ref: string): Promise<DocumentInfo> {
    this.#open();
    const target = targetOf(ref);
    return this.#b.db.read(() => statTarget(this.#st, target));
  }

  /**
   * One lookup for a read that needs the size or type before the bytes (an HTTP GET): the
   * head, and readers bound to the row found. A delete after the lookup does not stop the
   * reads until GC reclaims the chunks; then they fail with CORRUPT_DATA (missing-chunk).
   */
  async document(digest: string, options: { unlisted?: boolean } = {}): Promise<DocumentReader> {
    this.#open();
    return openDocument(this.#docs, digest, options.unlisted ?? false);
  }

  /** The document as a stream of byte pieces; ends with CORRUPT_DATA if anything is damaged. */
  get(digest: string): AsyncIterable<Uint8Array> {
    this.#open();
    const doc = requireDoc(this.#st, digest);
    return this.#reader.document(doc);
  }

  /** A document's chunks in order: their keys (BLAKE3, hex) and raw lengths. */
  async manifest(digest: string, options: { unlisted?: boolean } = {}): Promise<{ key: string; length: number }[]> {
    this.#open();
    return manifestOf(this.#docs, digest, options.unlisted ?? false);
  }

  /** One chunk's raw bytes, checked against its key (CORRUPT_DATA when damaged). */
  async chunk(key: string): Promise<Uint8Array> {
    this.#open();
    checkKeys([key], 'key');
    return chunkBytes(this.#docs, key);
  }

  /** The whole document, checked against its digest before it is returned. */
  async getBytes(digest: string): Promise<Uint8Array> {
    this.#open(); // (also guards the other readers below: each calls #open first)
    return this.#reader.bytes(requireDoc(this.#st, digest));
  }

  /** Bytes [start, end) as a stream, reading only the chunks that hold them. */
  getRangeStream(digest: string, start: number, end: number): AsyncIterable<Uint8Array> {
    this.#open();
    return this.#reader.range(requireDoc(this.#st, digest), start, end);
  }

  async getRange(digest: string, start: number, end: number): Promise<Uint8Array> {
    this.#open();
    return rangeBytes(this.#docs, digest, start, end);
  }

  /**
   * Entries (paths, and puts without one) in the order they were made, filtered, one page at
   * a time; each with the document of its latest version.
   */
  async list(query: ListQuery = {}): Promise<ListResult> {
    this.#open();
    return listEntries(this.#reads, query);
  }

  /** Every tag on an entry, with how many entries carry it, by name. */
  async tags(): Promise<{ tag: string; entries: number }[]> {
    this.#open();
    return tagCounts(this.#reads);
  }

  /** Bytes that deleting the document would free (stored bytes of chunks only it uses). */
  async exclusiveSize(digest: string): Promise<number> {
    this.#open();
    return exclusiveSize(this.#reads, digest);
  }

  async verify(onProgress?: (p: VerifyProgress) => void): Promise<VerifyReport> {
    this.#open();
    const record = this.readonly
      ? undefined
      : (keys: { key: string; reason: string }[]) => {
          const now = Date.now();
          this.#b.db.transaction(() => keys.forEach((k) => this.#st.damagedMark.run(hexToBytes(k.key), k.reason, now)));
        };
    return verifyStore(this.#st, this.#reader, onProgress, record);
  }

  async stats(): Promise<StoreStats> {
    this.#open();
    return storeStats(this.#reads);
  }

  /**
   * Lets puts in progress finish (new calls are refused from now on), finishes pending
   * commits, seals the open pack and releases the store. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#writer.idle();
      this.#indexer.stop();
      await this.#indexer.drain().catch(() => undefined); // readers then find it complete
      if (this.#gcRunning) await this.#gcRunning.catch(() => undefined);
      if (!this.readonly) await this.#writer.close();
      await this.#log.close();
      await this.#b.packs.close();
      this.#b.db.close();
    } finally {
      await this.#b.release?.();
    }
  }

  #open(): void {
    if (this.#closed) throw new StoreClosedError();
  }

  /** One commit of one operation outside the group commit (deletes, metadata, snapshots). */
  async #commit(op: Op): Promise<OpResult> {
    const [result] = this.#log.commit([op]);
    if (this.#writer.durability === 'full') await this.#log.sync();
    return result;
  }

  /** For platform subclasses: throws unless the store is open for writing. */
  protected assertWritable(op: string): void {
    this.#writable(op);
  }

  #writable(op: string): void {
    this.#open();
    if (this.readonly) throw new ReadOnlyError(op);
  }
}

/** A reference as an entry target: `sha256:…` is a digest, anything else a path. */
function targetOf(ref: string): EntryTarget {
  if (typeof ref !== 'string' || !ref) throw new InvalidInputError('reference must be a non-empty string', 'ref');
  return ref.startsWith('sha256:') ? { digest: ref } : { path: ref };
}

export type { Digest };
export { formatDigest };
export { FORMAT_NAME, FORMAT_VERSION };
export type { DocumentHead, DocumentReader, ListResult, PutInput, ReadyInput, StoreBackends, StoreConfig, StoreStats, VersionInfo } from './store-types.js';
