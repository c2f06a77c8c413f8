/**
 * The store's public face (FORMAT.md §5–15): a thin facade over the modules that do the work,
 * each called with the store's context (store-context.ts) once the call is allowed — open, and
 * open for writing where it writes. The reads are in store-reads.ts; here the writes, opening
 * and closing. Node wires it to better-sqlite3 and the file system (node/index.ts); the
 * browser to SQLite-in-wasm and OPFS (browser/index.ts).
 */
import { InvalidInputError, type Digest } from '@kura/core';
import type { MetaChange } from './catalog/entries.js';
import { sealAbandonedPacks, type GcProgress, type GcReport } from './bytes/gc.js';
import { formatDigest } from './hex.js';
import { onlyOptions, type InitOptions, type MetaUpdate, type OpenOptions, type PutMeta } from './options.js';
import type { ChunkStream, PutOptions, PutResult } from './put.js';
import type { Embedder } from './semantic/embedder.js';
import { useEmbedder } from './store-search.js';
import type { Reranker } from './search/rerank.js';
import { FORMAT_NAME, FORMAT_VERSION, type PutInput, type ReadyInput, type StoreBackends } from './store-types.js';
import { makeContext, usable, writable, type StoreContext } from './store-context.js';
import { createStore, openParts } from './store-open.js';
import * as writes from './store-writes.js';
import type { ChunkPutResult } from './bytes/sync.js';
import type { DirNode, SnapshotInfo } from './catalog/snapshot.js';
import { StoreReads, targetOf } from './store-reads.js';
import { applyPolicies, policies, removePolicy, setPolicy, type AppliedPolicy, type StoredPolicy } from './retention/stored.js';
import { addToken, revokeToken, tokenOf, tokens, type NewToken, type StoredToken } from './access/tokens.js';
import { heldUnder, shownUnder } from './access/reach.js';
import { forgetSnapshots, forgetVersions, type ForgetSnapshotsOptions, type ForgetVersionsOptions, type SnapshotForgetReport, type VersionForgetReport } from './retention/forget.js';

export class Store extends StoreReads {
  /** Creates a store in empty backends and opens it for writing. */
  static async create(b: StoreBackends, options: InitOptions = {}, packSize?: number): Promise<Store> {
    const { durability } = await createStore(b, options);
    return this.openBackends(b, { durability, ...(packSize ? { packSize } : {}) }, true);
  }

  /** Opens an existing store in the given backends (`created`: by Store.create, just now). */
  static async openBackends(b: StoreBackends, options: OpenOptions = {}, created = false): Promise<Store> {
    const { config, opts } = await openParts(b, options);
    // `this`, not Store: platform subclasses (node/index.ts) get instances of themselves.
    const store = new this(makeContext(b, config, opts));
    if (!opts.readonly) await sealAbandonedPacks(opts.log, opts.st, b.writer);
    if (!opts.readonly) b.opened?.({ created });
    return store;
  }

  /** The context, once the store is known to be open for writing (else READ_ONLY naming `op`). */
  #w(op: string): StoreContext {
    return writable(this.ctx, op);
  }

  // ---- writing (store-writes.ts) -----------------------------------------------------------

  /** Stores bytes, a stream or (Node) a file at a path, deduplicated; `meta` names its entry. */
  async put(input: PutInput, meta: PutMeta = {}, options: PutOptions = {}): Promise<PutResult> {
    onlyOptions(options, { onChunk: 'function', listed: 'boolean' }, 'put');
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

  /** Stores one chunk for a later `commitChunks` (FORMAT.md §12), kept until `holdMs` from now. */
  async putChunk(bytes: Uint8Array, options: { expectKey?: string; holdMs?: number } = {}): Promise<ChunkPutResult> {
    onlyOptions(options, { expectKey: 'string', holdMs: 'count' }, 'putChunk');
    return writes.putChunk(this.#w('putChunk'), bytes, options);
  }

  /** Stores a document made of stored chunks, in order, read back and hashed (else MISSING_CHUNKS). */
  /** Names a document the store has, at `meta.path` or as a pathless entry, without its bytes (store-writes.ts). */
  async link(digest: string, meta: PutMeta = {}, options: writes.LinkOptions = {}): Promise<PutResult> {
    onlyOptions(options, { newVersion: 'boolean' }, 'link');
    return writes.link(this.#w('link'), digest, meta, options);
  }

  async commitChunks(keys: string[], meta: PutMeta = {}, options: { maxSize?: number } = {}): Promise<PutResult> {
    onlyOptions(options, { maxSize: 'count' }, 'commitChunks');
    return writes.commitChunks(this.#w('commitChunks'), keys, meta, options);
  }

  /** Removes every version and entry naming a document (decision 0025); false when none did. */
  async delete(digest: string): Promise<boolean> {
    return writes.deleteDocument(this.#w('delete'), digest);
  }

  /**
   * Deletes a path's entry and all its versions. False when there is no such path.
   * `keepVersions`: the path leaves listings, search and reads by path, its versions stay
   * (`path@N`) until retention or a delete removes them (decision 0059).
   */
  /**
   * Deletes a path: its entry, and its versions unless `keepVersions`. `time` (with
   * keepVersions): when it went, for a copy that carries another store's (default now).
   */
  async deletePath(path: string, options: { keepVersions?: boolean; time?: Date | string | number } = {}): Promise<boolean> {
    return writes.deletePath(this.#w('deletePath'), path, options);
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
    if (onProgress !== undefined && typeof onProgress !== 'function') throw new InvalidInputError('gc takes a function told how it goes, or nothing', 'onProgress');
    return writes.gc(this.#w('gc'), onProgress);
  }

  /** Writes a checkpoint of the catalog at the newest commit (FORMAT.md §15.5); answers its seq. */
  async checkpoint(): Promise<{ seq: number }> {
    return { seq: await this.#w('checkpoint').log.checkpoint() };
  }

  // ---- snapshots (FORMAT.md §13; snapshot.ts; reading them: store-reads.ts) ----------------

  /** Records a snapshot of a tree whose files are already in the store, in one commit. */
  async createSnapshot(root: DirNode, options: writes.SnapshotAttributes = {}): Promise<SnapshotInfo> {
    return writes.createSnapshot(this.#w('createSnapshot'), root, options);
  }

  /**
   * Applies a retention policy to snapshots (restic's `forget` rules; decision 0058): what it
   * keeps (with why) and what it removes — nothing with `dryRun`. Pinned snapshots stay.
   */
  async forgetSnapshots(options: ForgetSnapshotsOptions): Promise<SnapshotForgetReport> {
    const ctx = options.dryRun ? usable(this.ctx) : this.#w('forgetSnapshots');
    return forgetSnapshots(ctx, options);
  }

  /** Applies a retention policy to the versions of paths (under `prefix`); each path's newest and pinned versions stay. */
  async forgetVersions(options: ForgetVersionsOptions): Promise<VersionForgetReport> {
    const ctx = options.dryRun ? usable(this.ctx) : this.#w('forgetVersions');
    return forgetVersions(ctx, options);
  }

  /** Keeps a retention policy in the store (stored.ts): `kura gc` and servers apply it (applyPolicies). */
  async setPolicy(policy: StoredPolicy): Promise<StoredPolicy> {
    return setPolicy(this.#w('setPolicy'), policy);
  }

  /** Removes the policy for a prefix or a label; false when there was none. */
  async removePolicy(target: { kind: 'versions'; prefix: string } | { kind: 'snapshots'; label?: string }): Promise<boolean> {
    return removePolicy(this.#w('removePolicy'), target);
  }

  /** The retention policies kept in the store. */
  async policies(): Promise<StoredPolicy[]> {
    return policies(usable(this.ctx));
  }

  /** Applies every stored policy: what each keeps and removes (nothing with `dryRun`). */
  async applyPolicies(options: { dryRun?: boolean } = {}): Promise<AppliedPolicy[]> {
    // (A misspelt `dryrun` was dropped, and the policies removed versions for real: a trial.)
    onlyOptions(options, { dryRun: 'boolean' }, 'applyPolicies');
    return applyPolicies(options.dryRun ? usable(this.ctx) : this.#w('applyPolicies'), options.dryRun ?? false);
  }

  // ---- access tokens (access/tokens.ts, decision 0060) --------------------------------------

  /** Makes an access token and keeps its hash: answers its secret, shown this once. */
  async addToken(token: NewToken): Promise<{ token: StoredToken; secret: string }> {
    return addToken(this.#w('addToken'), token);
  }

  /** Revokes the token named `name`; false when there was none. */
  async revokeToken(name: string): Promise<boolean> {
    return revokeToken(this.#w('revokeToken'), name);
  }

  /** The access tokens kept in the store (names, scopes, prefixes; never secrets). */
  async tokens(): Promise<StoredToken[]> {
    return tokens(usable(this.ctx));
  }

  /** The kept token whose secret this is, if any. */
  async tokenOf(secret: string): Promise<StoredToken | undefined> {
    return tokenOf(usable(this.ctx), secret);
  }

  /** Whether a version of some path under `prefixes` is this document (access/reach.ts). */
  async heldUnder(digest: string, prefixes: readonly string[]): Promise<boolean> {
    return heldUnder(usable(this.ctx), digest, prefixes);
  }

  /** The paths under `prefixes` whose latest version is this document, by path (at most `limit`). */
  async shownUnder(digest: string, prefixes: readonly string[], limit?: number): Promise<string[]> {
    return shownUnder(usable(this.ctx), digest, prefixes, limit);
  }

  /** Keeps a snapshot (`{ snapshot: id }`) or a version (`{ path, version }`) whatever a policy says; `pinned: false` lets it go again. */
  async pin(target: { snapshot: string } | { path: string; version: number }, pinned = true): Promise<void> {
    await writes.pin(this.#w('pin'), target, pinned);
  }

  /** Deletes a snapshot; documents only it kept go with it, their chunks at the next `gc`. */
  async deleteSnapshot(id: string): Promise<void> {
    await writes.deleteSnapshot(this.#w('deleteSnapshot'), id);
  }

  /**
   * Puts an embedder in use (decision 0036): documents' text is embedded in the background,
   * once per document and model, and search gains its semantic and hybrid modes.
   */
  useEmbedder(embedder: Embedder): void {
    useEmbedder(this.#w('useEmbedder'), embedder);
  }

  /**
   * Reranks the first hits of every search with `reranker` (search/rerank.ts), within each
   * search's `rerankMs`; undefined stops reranking.
   */
  useReranker(reranker: Reranker | undefined): void {
    usable(this.ctx).reranker = reranker;
  }

  /**
   * Lets snapshots and puts in progress finish (new calls are refused from now on) and
   * releases the store. Idempotent: every call answers when the store is closed.
   */
  close(): Promise<void> {
    return (this.#closing ??= this.#close());
  }

  #closing: Promise<void> | undefined;

  async #close(): Promise<void> {
    if (this.ctx.closed) return;
    this.ctx.closed = true;
    await this.finishRuns();
    await this.closeThreads();
    await writes.close(this.ctx);
  }

  /**
   * For platform subclasses: runs of many steps called before close() (node/: snapshots), let
   * finish — their steps take the context they were given at their call, not this store's
   * checks, which refuse every new call from close() on.
   */
  protected async finishRuns(): Promise<void> {}

  /** For platform subclasses: lets go of threads of their own before the database closes (node/: grep's workers). */
  protected async closeThreads(): Promise<void> {}

  /** For platform subclasses (node/, browser/): the context of an open store, writable for `op`. */
  protected context(op?: string): StoreContext {
    return op === undefined ? usable(this.ctx) : this.#w(op);
  }
}

export type { Digest, MetaChange };
export { formatDigest };
export { FORMAT_NAME, FORMAT_VERSION };
export type { DocumentHead, DocumentReader, ListResult, PutInput, ReadyInput, StoreBackends, StoreConfig, StoreStats, VersionInfo } from './store-types.js';
