/**
 * The store's public face (FORMAT.md §5–15): a thin facade over the modules that do the work,
 * each called with the store's context (store-context.ts) once the call is allowed — open, and
 * open for writing where it writes. Node wires it to better-sqlite3 and the file system
 * (node/index.ts); the browser to SQLite-in-wasm and OPFS (browser/index.ts).
 */
import { verifyLog } from './catalog/log-verify.js';
import { InvalidInputError, type Digest, type ResolvedChunkParams } from '@kura/core';
import type { MetaChange } from './catalog/entries.js';
import { requireDoc, statTarget, type DocumentInfo, type EntryTarget } from './catalog/entries.js';
import { sealAbandonedPacks, type GcProgress, type GcReport } from './bytes/gc.js';
import { formatDigest, parseDigest } from './hex.js';
import type { InitOptions, ListQuery, MetaUpdate, OpenOptions, PutMeta } from './options.js';
import type { ChunkStream, PutOptions, PutResult } from './put.js';
import { verifyStore, type VerifyProgress, type VerifyReport } from './bytes/verify.js';
import type { SearchHit, SearchQuery } from './catalog/search.js';
import type { Embedder } from './semantic/embedder.js';
import { finishIndexing, searchStore, useEmbedder } from './store-search.js';
import { indexStatus, type IndexStatus } from './catalog/index-status.js';
import { chunkBytes, manifestOf, openDocument, rangeBytes } from './document-reads.js';
import { exclusiveSize, listEntries, pathVersion, resolveRef, storeStats, tagCounts, versionsOf } from './catalog/queries.js';
import { FORMAT_NAME, FORMAT_VERSION, type DocumentReader, type ListResult, type PutInput, type ReadyInput, type StoreBackends, type StoreConfig, type StoreStats, type VersionInfo } from './store-types.js';
import { makeContext, usable, writable, type StoreContext } from './store-context.js';
import { createStore, openParts } from './store-open.js';
import * as writes from './store-writes.js';
import { checkKeys, missingChunks, type ChunkPutResult } from './bytes/sync.js';
import { diffTrees, requireSnapshot, snapshotExclusiveSize, snapshotInfo, walkTree, type DirNode, type SnapshotDiff, type SnapshotInfo, type WalkEntry } from './catalog/snapshot.js';

export class Store {
  readonly config: StoreConfig;
  readonly readonly: boolean;
  readonly #ctx: StoreContext;

  protected constructor(ctx: StoreContext) {
    this.#ctx = ctx;
    this.config = ctx.config;
    this.readonly = ctx.readonly;
  }

  /** Creates a store in empty backends and opens it for writing. */
  static async create(b: StoreBackends, options: InitOptions = {}, packSize?: number): Promise<Store> {
    const { durability } = await createStore(b, options);
    return this.openBackends(b, { durability, ...(packSize ? { packSize } : {}) });
  }

  /** Opens an existing store in the given backends. */
  static async openBackends(b: StoreBackends, options: OpenOptions = {}): Promise<Store> {
    const { config, opts } = await openParts(b, options);
    // `this`, not Store: platform subclasses (node/index.ts) get instances of themselves.
    const store = new this(makeContext(b, config, opts));
    if (!opts.readonly) await sealAbandonedPacks(opts.log, opts.st, b.writer);
    return store;
  }

  /** The context, once the store is known to be open (else STORE_CLOSED). */
  #r(): StoreContext {
    return usable(this.#ctx);
  }

  /** The context, once the store is known to be open for writing (else READ_ONLY naming `op`). */
  #w(op: string): StoreContext {
    return writable(this.#ctx, op);
  }

  // ---- writing (store-writes.ts) -----------------------------------------------------------

  /** Stores bytes, a stream or (Node) a file at a path, deduplicated; `meta` names its entry. */
  async put(input: PutInput, meta: PutMeta = {}, options: PutOptions = {}): Promise<PutResult> {
    return writes.put(this.#w('put'), input, meta, options);
  }

  /** Stores a document an ingest worker chunked with `ingestOptions()` (keys and digest trusted). */
  async putChunks(stream: ChunkStream, meta: PutMeta = {}, options: writes.PutChunksOptions = {}): Promise<PutResult> {
    return writes.putChunks(() => this.#w('put'), stream, meta, options);
  }

  /** Stores documents an ingest worker ingested whole, in one group commit: a result or error each. */
  async putReady(docs: readonly (ReadyInput | Error)[], options: Omit<writes.PutChunksOptions, 'onChunk'> = {}): Promise<(PutResult | Error)[]> {
    return writes.putReady(() => this.#w('put'), docs, options);
  }

  /** Of these chunk keys (BLAKE3, 64 hex), the ones the store has no good copy of, first-seen order. */
  async missingChunks(keys: string[]): Promise<string[]> {
    return missingChunks(this.#r(), checkKeys(keys, 'keys'));
  }

  /** Stores one chunk for a later `commitChunks` (FORMAT.md §12), kept until `holdMs` from now. */
  async putChunk(bytes: Uint8Array, options: { expectKey?: string; holdMs?: number } = {}): Promise<ChunkPutResult> {
    return writes.putChunk(this.#w('putChunk'), bytes, options);
  }

  /** Stores a document made of stored chunks, in order, read back and hashed (else MISSING_CHUNKS). */
  async commitChunks(keys: string[], meta: PutMeta = {}): Promise<PutResult> {
    return writes.commitChunks(this.#w('commitChunks'), keys, meta);
  }

  /** The parameters an ingest producer must use for `putChunks`. */
  ingestOptions(): { chunking: ResolvedChunkParams; compression: number | false } {
    return { chunking: this.config.chunking, compression: this.#ctx.compression };
  }

  /** Removes every version and entry naming a document (decision 0025); false when none did. */
  async delete(digest: string): Promise<boolean> {
    return writes.deleteDocument(this.#w('delete'), digest);
  }

  /** Deletes a path's entry and all its versions. False when there is no such path. */
  async deletePath(path: string): Promise<boolean> {
    return writes.deletePath(this.#w('deletePath'), path);
  }

  /** Deletes one version of a path; the others keep their numbers, the document stays. */
  async deleteVersion(path: string, version: number): Promise<boolean> {
    return writes.deleteVersion(this.#w('deleteVersion'), path, version);
  }

  /** Sets (string) or removes (null) key/value metadata of an entry: `ref` a path, or a digest. */
  async setMeta(ref: string, kv: Record<string, string | null>): Promise<void> {
    await this.updateMeta([{ ...targetOf(ref), meta: kv }]);
  }

  async addTags(ref: string, tags: string[]): Promise<void> {
    await this.updateMeta([{ ...targetOf(ref), addTags: tags }]);
  }

  async removeTags(ref: string, tags: string[]): Promise<void> {
    await this.updateMeta([{ ...targetOf(ref), removeTags: tags }]);
  }

  /** Many metadata changes in one commit, all or none (NOT_FOUND, AMBIGUOUS change nothing). */
  async updateMeta(updates: MetaUpdate[]): Promise<{ updated: number }> {
    return writes.updateMeta(this.#w('updateMeta'), updates);
  }

  /** Reclaims unreferenced chunks and compacts mostly-garbage packs (gc.ts); concurrent calls share one. */
  async gc(onProgress?: (p: GcProgress) => void): Promise<GcReport> {
    return writes.gc(this.#w('gc'), onProgress);
  }

  /**
   * Applies what other writers committed — on object storage, by reading the log's new objects
   * (decision 0040) — and answers how many commits that was and the newest commit's seq.
   */
  async refresh(): Promise<{ commits: number; seq: number }> {
    const { log } = this.#r();
    return { commits: await log.refresh(), seq: log.head.seq };
  }

  /** Writes a checkpoint of the catalog at the newest commit (FORMAT.md §15.5); answers its seq. */
  async checkpoint(): Promise<{ seq: number }> {
    return { seq: await this.#w('checkpoint').log.checkpoint() };
  }

  // ---- snapshots (FORMAT.md §13; snapshot.ts) ----------------------------------------------

  /** Records a snapshot of a tree whose files are already in the store, in one commit. */
  async createSnapshot(root: DirNode, options: { label?: string } = {}): Promise<SnapshotInfo> {
    return writes.createSnapshot(this.#w('createSnapshot'), root, options.label ?? null);
  }

  /** All snapshots, oldest first. */
  async snapshots(): Promise<SnapshotInfo[]> {
    return this.#r().st.snapshotsAll.all().map(snapshotInfo);
  }

  async snapshotInfo(id: string): Promise<SnapshotInfo> {
    return snapshotInfo(requireSnapshot(this.#r().st, id));
  }

  /** Every entry of a snapshot, depth first, each directory before its contents. */
  async *snapshotEntries(id: string): AsyncGenerator<WalkEntry> {
    const { st } = this.#r();
    yield* walkTree(st, formatDigest(requireSnapshot(st, id).tree));
  }

  /** Paths added, removed and changed from snapshot `a` to snapshot `b` (one read transaction). */
  async diffSnapshots(a: string, b: string): Promise<SnapshotDiff> {
    const { db, st } = this.#r();
    return db.read(() => diffTrees(st, formatDigest(requireSnapshot(st, a).tree), formatDigest(requireSnapshot(st, b).tree)));
  }

  /** Bytes that deleting the snapshot would free (its chunks no other document uses). */
  async snapshotExclusiveSize(id: string): Promise<number> {
    const { db, st } = this.#r();
    // Many lookups: in one read transaction, ~1.5 µs each instead of ~16 µs on their own.
    return db.read(() => snapshotExclusiveSize(st, requireSnapshot(st, id)));
  }

  /** Deletes a snapshot; documents only it kept go with it, their chunks at the next `gc`. */
  async deleteSnapshot(id: string): Promise<void> {
    await writes.deleteSnapshot(this.#w('deleteSnapshot'), id);
  }

  // ---- reading (queries.ts, document-reads.ts, search.ts) ---------------------------------

  /**
   * Search that sees every committed change: `keyword` (BM25 over paths, tags, metadata and
   * text), `semantic` (the embedder's vectors) or `hybrid` (both, fused by reciprocal rank
   * fusion) — the default once an embedder is in use, else keyword (decision 0036).
   */
  async search(query: string, options: SearchQuery = {}): Promise<SearchHit[]> {
    return searchStore(this.#r(), query, options);
  }

  /**
   * Puts an embedder in use (decision 0036): documents' text is embedded in the background,
   * once per document and model, and search gains its semantic and hybrid modes.
   */
  useEmbedder(embedder: Embedder): void {
    useEmbedder(this.#w('useEmbedder'), embedder);
  }

  /**
   * What the search index has still to do, and which documents' text could not be (fully)
   * extracted (decision 0035), and how far background embedding is (0036); `wait: true`
   * finishes the pending work first, extraction and embedding included, telling `onProgress`
   * how it goes every quarter second.
   */
  async indexStatus(options: { wait?: boolean; onProgress?: (s: IndexStatus) => void } = {}): Promise<IndexStatus> {
    const ctx = this.#r();
    const now = () => indexStatus(ctx.db, ctx.st, ctx.semantic?.embedder.model);
    if (options.wait) await finishIndexing(ctx, now, options.onProgress);
    return now();
  }

  /** The versions of a logical path, oldest first. */
  async versions(path: string): Promise<VersionInfo[]> {
    return versionsOf(this.#r(), path);
  }

  /** The digest a reference names: a digest, a path (latest), `path@N` or `path@<ISO time>`. */
  async resolve(ref: string): Promise<Digest> {
    return resolveRef(this.#r(), ref);
  }

  /** One version of a path (`version` N, or the latest `at` a time, else the latest), unparsed. */
  async pathVersion(path: string, which: { version?: number; at?: Date | string | number } = {}): Promise<VersionInfo> {
    return pathVersion(this.#r(), path, which);
  }

  async has(digest: string): Promise<boolean> {
    return this.#r().st.docIdByDigest.get(parseDigest(digest)) !== undefined;
  }

  /** An entry: `ref` is a path, or a digest naming the entry of that content (else AMBIGUOUS). */
  async stat(ref: string): Promise<DocumentInfo> {
    const ctx = this.#r();
    const target = targetOf(ref);
    return ctx.db.read(() => statTarget(ctx.st, target));
  }

  /** One lookup, then reads bound to the row found (an HTTP GET needs the size before the bytes). */
  async document(digest: string, options: { unlisted?: boolean } = {}): Promise<DocumentReader> {
    return openDocument(this.#r(), digest, options.unlisted ?? false);
  }

  /** The document as a stream of byte pieces; ends with CORRUPT_DATA if anything is damaged. */
  get(digest: string): AsyncIterable<Uint8Array> {
    const ctx = this.#r();
    return ctx.reader.document(requireDoc(ctx.st, digest));
  }

  /** A document's chunks in order: their keys (BLAKE3, hex) and raw lengths. */
  async manifest(digest: string, options: { unlisted?: boolean } = {}): Promise<{ key: string; length: number }[]> {
    return manifestOf(this.#r(), digest, options.unlisted ?? false);
  }

  /** One chunk's raw bytes, checked against its key (CORRUPT_DATA when damaged). */
  async chunk(key: string): Promise<Uint8Array> {
    const ctx = this.#r();
    return chunkBytes(ctx, checkKeys([key], 'key')[0]!);
  }

  /** The whole document, checked against its digest before it is returned. */
  async getBytes(digest: string): Promise<Uint8Array> {
    const ctx = this.#r();
    return ctx.reader.bytes(requireDoc(ctx.st, digest));
  }

  /** Bytes [start, end) as a stream, reading only the chunks that hold them. */
  getRangeStream(digest: string, start: number, end: number): AsyncIterable<Uint8Array> {
    const ctx = this.#r();
    return ctx.reader.range(requireDoc(ctx.st, digest), start, end);
  }

  async getRange(digest: string, start: number, end: number): Promise<Uint8Array> {
    return rangeBytes(this.#r(), digest, start, end);
  }

  /** Entries in the order they were made, filtered, a page at a time, each with its latest document. */
  async list(query: ListQuery = {}): Promise<ListResult> {
    return listEntries(this.#r(), query);
  }

  /** Every tag on an entry, with how many entries carry it, by name. */
  async tags(): Promise<{ tag: string; entries: number }[]> {
    return tagCounts(this.#r());
  }

  /** Bytes that deleting the document would free (stored bytes of chunks only it uses). */
  async exclusiveSize(digest: string): Promise<number> {
    return exclusiveSize(this.#r(), digest);
  }

  /**
   * Checks every chunk, document, tree, pack and commit of the log; a writer marks what is
   * damaged. `readData` (default: on a local store, not on object storage, where it downloads
   * the whole store): every chunk and document read and re-hashed; without it, the packs'
   * presence, sizes and indexes against the rows.
   */
  async verify(onProgress?: (p: VerifyProgress) => void, options: { readData?: boolean } = {}): Promise<VerifyReport> {
    const ctx = this.#r();
    await ctx.log.refresh(); // (an object store: the log's newest commits first)
    const readData = options.readData ?? !ctx.log.publishes;
    const packs = ctx.b.packs.origin?.() ?? ctx.b.packs; // (what the bucket holds, not this server's copies)
    const report = await verifyStore(ctx.st, ctx.reader.over(packs), packs, onProgress, ctx.readonly ? undefined : writes.markDamaged(ctx), readData);
    const log = await verifyLog(ctx.st, ctx.b.log);
    report.logCommitsChecked = log.commitsChecked;
    report.damagedLog = log.damaged;
    if (log.damaged.length) report.ok = false;
    return report;
  }

  async stats(): Promise<StoreStats> {
    return storeStats(this.#r());
  }

  /** Lets puts in progress finish (new calls are refused from now on) and releases the store. Idempotent. */
  async close(): Promise<void> {
    if (this.#ctx.closed) return;
    this.#ctx.closed = true;
    await writes.close(this.#ctx);
  }

  /** For platform subclasses (node/, browser/): the context of an open store, writable for `op`. */
  protected context(op?: string): StoreContext {
    return op === undefined ? this.#r() : this.#w(op);
  }
}

/** A reference as an entry target: `sha256:…` is a digest, anything else a path. */
function targetOf(ref: string): EntryTarget {
  if (typeof ref !== 'string' || !ref) throw new InvalidInputError('reference must be a non-empty string', 'ref');
  return ref.startsWith('sha256:') ? { digest: ref } : { path: ref };
}

export type { Digest, MetaChange };
export { formatDigest };
export { FORMAT_NAME, FORMAT_VERSION };
export type { DocumentHead, DocumentReader, ListResult, PutInput, ReadyInput, StoreBackends, StoreConfig, StoreStats, VersionInfo } from './store-types.js';
