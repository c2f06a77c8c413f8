/**
 * The store's writes that do more than commit one operation: puts from every kind of source,
 * chunk uploads, metadata batches, GC and closing. The Store facade (store.ts) checks that
 * the store is open for writing and calls these with its context.
 */
import { DIGEST_PATTERN, InvalidInputError, isKuraError, type ByteSource } from '@kura/core';
import type { EntryTarget, MetaChange } from './catalog/entries.js';
import { collectGarbage, type GcProgress, type GcReport } from './bytes/gc.js';
import { preloadKnown } from './ingest/known-chunks.js';
import { bytesToHex, formatDigest, hexToBytes, parseDigest } from './hex.js';
import { requireDoc } from './catalog/entries.js';
import type { Op } from './catalog/ops.js';
import { ENTRY_SIZE } from './bytes/manifest.js';
import { MetaUpdate, onlyOptions, parse, parsePutMeta, plainMetaUpdate, toMillis, type PutMeta } from './options.js';
import { NotFoundError } from './errors.js';
import { entryAttributes, ingestHere, putDocument, putReadyDocuments, type ChunkStream, type PutOptions, type PutResult, type ReadyDocument, type ResolvedMeta } from './put.js';
import type { CommitTurn } from './commit-order.js';
import { commitOne, drainIndex, knownChunks, type StoreContext } from './store-context.js';
import { newSnapshotId, requireSnapshot, type DirNode, type SnapshotInfo } from './catalog/snapshot.js';
import type { PutInput, ReadyInput } from './store-types.js';
import { DEFAULT_HOLD_MS, checkKeys, putChunk as putOneChunk, storedChunks, type ChunkPutResult } from './bytes/sync.js';

/** Where puts come from besides a caller's bytes. */
export interface PutChunksOptions extends PutOptions {
  /** The commit order a batch of puts keeps (put.ts CommitOrder). */
  order?: CommitTurn;
}

/** Schedules the search index once the put is done, whatever its outcome. */
async function indexed<T>(ctx: StoreContext, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } finally {
    ctx.indexer.schedule();
  }
}

/** Blobs up to this size are read whole when put on this thread (one read, not a stream). */
const READ_WHOLE = 1 << 20;

/**
 * A put: on the platform's ingest workers when it takes the input (IngestWorkers), else on
 * this thread — bytes, a stream, a Blob, or (where files exist) a file path. Everything that
 * can refuse it is checked before a worker starts on it.
 */
export async function put(ctx: StoreContext, input: PutInput, meta: PutMeta, options: PutOptions): Promise<PutResult> {
  try {
    return await putInput(ctx, input, meta, options);
  } catch (e) {
    throw typeof input === 'string' ? fileInputError(e, input) : e;
  }
}

/**
 * The OS's refusal of a file given to put by its path, as a KuraError naming it: it was Node's
 * own `ENOENT: no such file or directory, open 'hello world'` (not a KuraError), met first by
 * whoever passed text as a string — a string is a file's path here (a trial from cacache,
 * whose strings are data).
 */
function fileInputError(e: unknown, path: string): unknown {
  const err = e as NodeJS.ErrnoException;
  if (isKuraError(e) || typeof err?.code !== 'string' || (err.path !== undefined && err.path !== path)) return e;
  const said = JSON.stringify(path);
  if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return new NotFoundError(`no file ${said}: a string given to put is a file's path (to store text, give its bytes: new TextEncoder().encode(text))`);
  if (err.code === 'EISDIR') return new InvalidInputError(`${said} is a directory: put stores one file (putFiles and snapshot take directories)`, 'input');
  if (err.code === 'EACCES' || err.code === 'EPERM') return new InvalidInputError(`${said} cannot be read: permission denied`, 'input');
  return e;
}

async function putInput(ctx: StoreContext, input: PutInput, meta: PutMeta, options: PutOptions): Promise<PutResult> {
  const m = parsePutMeta(meta);
  const { chunking, compression, chunkNameKey } = ctx;
  const off = ctx.b.ingest?.stream(input, { chunking, compression, ...(chunkNameKey ? { chunkNameKey } : {}) }, () => knownChunks(ctx));
  if (off) return putChunks(() => ctx, off, meta, options);
  let source: ByteSource;
  if (typeof input === 'string') {
    if (!ctx.b.openPath) throw new InvalidInputError('file paths are not supported on this platform', 'input');
    source = ctx.b.openPath(input);
  } else if (typeof Blob !== 'undefined' && input instanceof Blob) {
    source = input.size <= READ_WHOLE ? new Uint8Array(await input.arrayBuffer()) : input.stream();
  } else {
    source = input as ByteSource;
  }
  return indexed(ctx, putDocument(ctx, ingestHere(ctx, source), m, undefined, options.listed ?? true, options.onChunk));
}

export interface LinkOptions {
  /**
   * A new version even when the path shows this document already (a copy of a path deleted
   * with its versions kept and put again unchanged). The path's entry is made again: its tags,
   * metadata and media type are the ones `meta` gives.
   */
  newVersion?: boolean;
}

/**
 * Names a document the store has — at a path (a new version, as a put of its bytes would make)
 * or as a pathless entry — without its bytes: the `put` operation of a document that exists
 * records its entry alone (FORMAT.md §15.3). What a copy from another store does for content
 * the destination already holds. NOT_FOUND when the store lacks it.
 */
export async function link(ctx: StoreContext, digest: string, meta: PutMeta, options: LinkOptions = {}): Promise<PutResult> {
  const m = parsePutMeta(meta);
  if (options.newVersion && m.path === undefined) throw new InvalidInputError('newVersion names a version of a path: give the path', 'newVersion');
  const doc = ctx.db.read(() => requireDoc(ctx.st, digest));
  const op: Extract<Op, { op: 'put' }> = { op: 'put', digest: formatDigest(doc.digest), size: doc.size, manifest: bytesToHex(doc.manifest), packs: [], places: [], entry: entryAttributes(m) };
  // A put of the document a path shows makes no version (FORMAT.md §11); after the path's
  // delete with its versions kept, in the same commit, it makes one whatever the path showed.
  const ops: Op[] = options.newVersion ? [{ op: 'delete-path', path: m.path!, keepVersions: true }, op] : [op];
  await indexed(ctx, ctx.writer.commit(ops));
  return { digest: formatDigest(doc.digest), size: doc.size, chunks: doc.manifest.length / ENTRY_SIZE, newChunks: 0, newBytesStored: 0 };
}

/** A put on this thread of a snapshot's file (kept, not listed). */
export function putForSnapshot(ctx: StoreContext, source: ByteSource): Promise<PutResult> {
  return putDocument(ctx, ingestHere(ctx, source), {}, undefined, false);
}

/**
 * A document whose chunks were produced elsewhere (a worker running the same kernel with the
 * store's chunking and compression). Refused (`allowed` throws, or the meta is bad) before it
 * starts, the producer is told to stop and the puts behind this one in a commit order go on.
 */
export async function putChunks(allowed: () => StoreContext, stream: ChunkStream, meta: PutMeta, options: PutChunksOptions): Promise<PutResult> {
  let ctx: StoreContext;
  let checked: ResolvedMeta;
  try {
    ctx = allowed();
    checked = parsePutMeta(meta);
  } catch (e) {
    options.order?.done();
    await stream.return?.(undefined as never).catch(() => undefined);
    throw e;
  }
  return indexed(ctx, putDocument(ctx, stream, checked, options.order, options.listed ?? true, options.onChunk));
}

/** Documents an ingest worker read and ingested whole, in one pass and one group commit. */
export async function putReady(allowed: () => StoreContext, docs: readonly (ReadyInput | Error)[], options: Omit<PutChunksOptions, 'onChunk'>): Promise<(PutResult | Error)[]> {
  let ctx: StoreContext;
  try {
    ctx = allowed();
  } catch (e) {
    options.order?.done(); // refused: the puts behind this one in a commit order go on
    throw e;
  }
  const ready = docs.map((d): ReadyDocument | Error => {
    if (d instanceof Error || d.meta === undefined) return d as ReadyDocument | Error;
    try {
      return { ...d, meta: parsePutMeta(d.meta) };
    } catch (e) {
      return e as Error;
    }
  });
  return indexed(ctx, putReadyDocuments(ctx, ready, options.listed ?? true, options.order));
}

/** One uploaded chunk, held for a later `commitChunks` (FORMAT.md §12). */
export function putChunk(ctx: StoreContext, bytes: Uint8Array, options: { expectKey?: string; holdMs?: number }): Promise<ChunkPutResult> {
  if (options.expectKey !== undefined) checkKeys([options.expectKey], 'expectKey');
  const hold = options.holdMs ?? DEFAULT_HOLD_MS;
  if (!Number.isSafeInteger(hold) || hold < 0) throw new InvalidInputError('holdMs must be a non-negative integer', 'holdMs');
  return putOneChunk(ctx, bytes, options.expectKey, Date.now() + hold);
}

/** A document made of stored chunks, read back and hashed (FORMAT.md §12). */
export function commitChunks(ctx: StoreContext, keys: string[], meta: PutMeta, options: { maxSize?: number } = {}): Promise<PutResult> {
  checkKeys(keys, 'chunks');
  const m = parsePutMeta(meta);
  return indexed(ctx, putDocument(ctx, storedChunks(ctx, ctx.reader, keys, options.maxSize), m));
}

/** Many metadata changes as one commit: all or none (catalog/ops.ts `meta`). */
export async function updateMeta(ctx: StoreContext, updates: MetaUpdate[]): Promise<{ updated: number }> {
  if (!Array.isArray(updates)) throw new InvalidInputError('updates must be an array', 'updates');
  if (updates.length > 10_000) throw new InvalidInputError('at most 10,000 updates per batch', 'updates');
  // Plain loops, not map and forEach: arrays that TurboFan builds inline can take another
  // elements kind than the builtins' ("wrong map" deopts of this function while it warms up).
  const changes: { target: EntryTarget; change: MetaChange }[] = [];
  for (let i = 0; i < updates.length; i++) {
    const given = updates[i];
    // (A batch of one is named as one change: "mediaType: …", not "updates[0].mediaType: …",
    // to a caller who made no batch — PATCH /v1/entry, kura_meta.)
    const what = updates.length === 1 ? 'update' : `updates[${i}]`;
    const u = plainMetaUpdate(given) ? given : parse(MetaUpdate, given, what);
    if (u.digest !== undefined && !DIGEST_PATTERN.test(u.digest)) parseDigest(u.digest, updates.length === 1 ? 'digest' : `updates[${i}].digest`);
    const change: MetaChange = {};
    if (u.mediaType !== undefined) change.mediaType = u.mediaType;
    if (u.meta !== undefined) change.meta = u.meta;
    if (u.addTags !== undefined) change.addTags = u.addTags;
    if (u.removeTags !== undefined) change.removeTags = u.removeTags;
    changes.push({ target: u.digest !== undefined ? { digest: u.digest } : { path: u.path! }, change });
  }
  await commitOne(ctx, { op: 'meta', updates: changes });
  ctx.indexer.schedule();
  return { updated: changes.length };
}

/** GC (gc.ts); a second call while one runs shares it. */
export function gc(ctx: StoreContext, onProgress?: (p: GcProgress) => void): Promise<GcReport> {
  ctx.gcRunning ??= collectGarbage(ctx, onProgress).finally(() => {
    ctx.gcRunning = undefined;
    const known = ctx.known;
    if (known) {
      // Chunks it deleted would be sent raw, and stored uncompressed: start again.
      known.clear();
      preloadKnown(known, ctx.st, () => !ctx.closed && ctx.known === known);
    }
  });
  return ctx.gcRunning;
}

/**
 * Lets puts in progress finish, finishes pending commits and (on a local store) the search
 * index's queue, seals the open pack and releases the backends.
 */
export async function close(ctx: StoreContext): Promise<void> {
  // Every step runs whatever the one before met, and the first failure is thrown at the end:
  // a writer that cannot write its last bytes (a disk or a browser's quota full) still lets
  // go of the database and the packs — a tab whose close failed there kept its files open,
  // and could neither erase the store nor open it again without a reload.
  let failure: { error: unknown } | undefined;
  const step = async (f: () => unknown) => {
    try {
      await f();
    } catch (error) {
      failure ??= { error };
    }
  };
  let sealing: Promise<void> | undefined;
  try {
    await step(() => ctx.writer.idle());
    await step(() => ctx.semantic?.job.stop()); // (the embedder is its owner's to close)
    ctx.indexer.stop();
    // Local readers then find it complete — but for text still to extract, left for the next
    // run. On object storage the index is this cache directory's alone: its next opener goes
    // on with the queue, and a search drains it first (decision 0050).
    if (!ctx.log.publishes) {
      // The last pack's seal (its index record, an fdatasync: mostly a wait on the disk) goes
      // on while the index is brought up to date on this thread: every put is committed, so
      // their records are in the pack's file already and the index reads nothing the seal
      // writes. Not beside a GC, which may still be writing through the writer.
      sealing = !ctx.readonly && !ctx.gcRunning ? step(() => ctx.writer.close()) : undefined;
      await drainIndex(ctx, { extract: false }).catch(() => undefined);
      await ctx.indexer.compact().catch(() => undefined); // (a smaller index; nothing is lost without it)
    }
    await step(() => ctx.search.close());
    if (ctx.gcRunning) await ctx.gcRunning.catch(() => undefined);
    if (sealing) await sealing;
    else if (!ctx.readonly) await step(() => ctx.writer.close());
    await step(() => ctx.log.close());
    await step(() => ctx.b.packs.close());
    await step(() => ctx.db.close());
    if (failure) throw failure.error;
  } finally {
    try {
      ctx.b.ingest?.close();
      await ctx.b.extractor?.close();
    } finally {
      await ctx.b.release?.();
    }
  }
}

/** Removes a document from the namespace (decision 0025); false when nothing named it. */
export async function deleteDocument(ctx: StoreContext, digest: string): Promise<boolean> {
  parseDigest(digest);
  return (await commitOne(ctx, { op: 'delete-document', digest })) as boolean;
}

export async function deletePath(ctx: StoreContext, path: string, options: { keepVersions?: boolean; time?: Date | string | number } = {}): Promise<boolean> {
  checkPath(path);
  onlyOptions(options, { keepVersions: 'boolean', time: 'time' }, 'deletePath');
  if (options.time !== undefined && !options.keepVersions) throw new InvalidInputError('time is when a path deleted with its versions kept went: it needs keepVersions', 'time');
  const time = options.time === undefined ? undefined : new Date(options.time).getTime();
  if (time !== undefined && !Number.isFinite(time)) throw new InvalidInputError('time must be a date', 'time');
  return (await commitOne(ctx, { op: 'delete-path', path, ...(options.keepVersions ? { keepVersions: true as const } : {}), ...(time !== undefined ? { time } : {}) })) as boolean;
}

export async function deleteVersion(ctx: StoreContext, path: string, version: number): Promise<boolean> {
  if (!Number.isSafeInteger(version) || version < 1) throw new InvalidInputError('version must be a positive integer', 'version');
  checkPath(path);
  return (await commitOne(ctx, { op: 'delete-version', path, version })) as boolean;
}

function checkPath(path: unknown): asserts path is string {
  if (typeof path !== 'string' || !path) throw new InvalidInputError('path must be a non-empty string', 'path');
}

/**
 * A snapshot's own attributes (`time`: when it is of, for imports; default now; `id`: the id
 * it has in another store, for a copy — refused when taken).
 */
export interface SnapshotAttributes {
  id?: string;
  label?: string;
  time?: Date | string | number;
  tags?: string[];
  /** Minutes east of UTC where it was made (a copy keeps the original's); default: this process's offset at its time. */
  utcOffset?: number;
}

/** A snapshot of a tree whose files are in the store (FORMAT.md §13), in one commit. */
export async function createSnapshot(ctx: StoreContext, root: DirNode, a: SnapshotAttributes = {}): Promise<SnapshotInfo> {
  if (root?.type !== 'dir' || !Array.isArray(root.entries)) throw new InvalidInputError('a snapshot root is a directory node', 'root');
  const label = a.label ?? null;
  if (label !== null && (typeof label !== 'string' || label.length > 1024)) throw new InvalidInputError('label must be a string of at most 1024 characters', 'label');
  const tags = a.tags ?? [];
  if (!Array.isArray(tags) || tags.length > 64 || tags.some((t) => typeof t !== 'string' || t.length === 0 || t.length > 256 || t.includes(','))) {
    throw new InvalidInputError('tags must be at most 64 non-empty strings of up to 256 characters, without commas', 'tags');
  }
  let time: number | undefined;
  if (a.time !== undefined) {
    time = toMillis(a.time);
    if (!Number.isSafeInteger(time) || time < 0) throw new InvalidInputError('time must be a time (ISO 8601 or milliseconds since 1970)', 'time');
  }
  if (a.id !== undefined && (typeof a.id !== 'string' || !/^[0-9a-f]{32}$/.test(a.id))) throw new InvalidInputError('id must be 32 lowercase hex digits', 'id');
  if (a.utcOffset !== undefined && !(Number.isInteger(a.utcOffset) && Math.abs(a.utcOffset) <= 18 * 60)) throw new InvalidInputError('utcOffset is whole minutes east of UTC, at most 18 hours', 'utcOffset');
  checkFileSizes(ctx, root);
  // (The offset of the local time zone at the snapshot's time: restic records its time with it.)
  const utcOffset = a.utcOffset ?? -new Date(time ?? Date.now()).getTimezoneOffset() + 0; // (+ 0: UTC's is -0)
  const op = { op: 'snapshot' as const, root, label, id: a.id ?? newSnapshotId(), ...(time !== undefined ? { time } : {}), ...(tags.length ? { tags: [...new Set(tags)].sort() } : {}), utcOffset };
  return (await commitOne(ctx, op)) as SnapshotInfo;
}

/**
 * File entries a snapshot run gave the size and digest of the put that just read the file
 * (snapshot-run.ts recordRead): the size is its document's by construction, so checkFileSizes
 * need not look it up (a lookup a file: ~1-2 of the store's thread's ~22 µs a file in a first
 * snapshot of 10,000 small files). Entries of trees made elsewhere (createSnapshot's callers, a
 * reused file's cached digest) are checked.
 */
export const sizedByPut = new WeakSet<object>();

/**
 * Each file of a snapshot's tree says its document's size: a size the document contradicts is
 * INVALID_INPUT (it was recorded, and counted in the snapshot's bytes, while a restore wrote
 * the document's). A document the store lacks is left to the commit (NOT_FOUND there).
 */
function checkFileSizes(ctx: StoreContext, root: DirNode): void {
  ctx.db.read(() => {
    const walk = (dir: DirNode, at: string) => {
      for (const e of dir.entries ?? []) {
        if (e?.type === 'dir') walk(e, `${at}${e.name}/`);
        else if (e?.type === 'file' && !sizedByPut.has(e) && typeof e.digest === 'string' && DIGEST_PATTERN.test(e.digest)) {
          const size = ctx.st.docSizeByDigest.get(parseDigest(e.digest))?.size;
          if (size !== undefined && size !== e.size) throw new InvalidInputError(`${at}${e.name}: size ${e.size}, but its document ${e.digest} has ${size} bytes`, 'root');
        }
      }
    };
    walk(root, '');
  });
}

/** Pins (or unpins) a snapshot or a version of a path: kept whatever a retention policy says. */
export async function pin(ctx: StoreContext, target: { snapshot: string } | { path: string; version: number }, pinned: boolean): Promise<void> {
  if ('snapshot' in target) {
    const row = requireSnapshot(ctx.st, target.snapshot); // NOT_FOUND, AMBIGUOUS without a commit
    await commitOne(ctx, { op: 'pin', target: { snapshot: row.uid }, pinned });
    return;
  }
  checkPath(target.path);
  if (!Number.isSafeInteger(target.version) || target.version < 1) throw new InvalidInputError('version must be a positive integer', 'version');
  if (!(await commitOne(ctx, { op: 'pin', target: { path: target.path, version: target.version }, pinned }))) {
    throw new NotFoundError(`no version ${target.version} of ${target.path}`);
  }
}

/** Deletes the snapshot `id` (or a unique prefix) names: the log records its whole id. */
export async function deleteSnapshot(ctx: StoreContext, id: string): Promise<void> {
  const row = requireSnapshot(ctx.st, id); // NOT_FOUND, AMBIGUOUS without a commit
  await commitOne(ctx, { op: 'rm-snapshot', id: row.uid });
}

/** What verify calls with the damaged chunks it finds: marks them (FORMAT.md §10), one transaction. */
export function markDamaged(ctx: StoreContext): (keys: { key: string; reason: string }[]) => void {
  return (keys) => {
    const now = Date.now();
    ctx.db.transaction(() => keys.forEach((k) => ctx.st.damagedMark.run(hexToBytes(k.key), k.reason, now)));
  };
}

