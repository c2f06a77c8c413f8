/**
 * The ingest pipeline of a put (FORMAT.md §8): stream -> fused kernel -> shared or appended
 * chunks -> one group-committed transaction.
 */
import {
  InvalidInputError,
  decompress,
  CODEC_RAW,
  encodeChunk,
  ingest,
  type ByteSource,
  type Digest,
  type DocumentHasherChoice,
  type IngestChunk,
  type IngestOptions,
  type IngestResult,
  type ResolvedChunkParams,
} from '@kura/core';
import { APPLIED_VERSION, knowManifest, type Op } from './catalog/ops.js';
import type { PutAttributes } from './catalog/entries.js';
import { DigestMismatchError } from './errors.js';
import { bytesToHex, hexInto } from './hex.js';
import { ManifestBuilder } from './bytes/manifest.js';
import { RECORD_HEADER_SIZE, groupRawMax } from './bytes/pack-record.js';
import type { TextHeads } from './search/text-heads.js';
import type { KnownChunks } from './ingest/known-chunks.js';
import type { Statements } from './catalog/statements.js';
import type { GroupPlace, StoredChunk, Writer } from './bytes/writer.js';
import { groupedStream, type ChunkGroup, type StreamChunk } from './ingest/chunk-groups.js';
import type { CommitTurn } from './commit-order.js';

export interface PutResult {
  digest: Digest;
  size: number;
  chunks: number;
  /** Chunks this put wrote (not found in the store). */
  newChunks: number;
  /** Bytes this put added to pack files (records: headers and payloads). */
  newBytesStored: number;
  /**
   * A file that changed while it was read (its size or times moved between the open and the
   * end of the read): what was stored may mix its old and new bytes, as no state of the file
   * ever was. Said, so that a snapshot can say it and not trust its stamp.
   */
  changed?: true;
  /**
   * A put at a path: the path's version after it — the one it made (`versionMade`), or the
   * latest, which already had these bytes (no version is made then). Asked afterwards with
   * `versions()`, another writer's version could be the one found.
   */
  version?: number;
  versionMade?: boolean;
}

export interface PutContext {
  writer: Writer;
  st: Statements;
  chunking: ResolvedChunkParams;
  compression: number | false;
  documentHasher?: DocumentHasherChoice | undefined;
  /** An encrypted store's chunk-names key (FORMAT.md §17.4): chunks are named by keyed BLAKE3. */
  chunkNameKey?: Uint8Array | undefined;
  /** Told every chunk found stored or committed, when ingest workers share it. */
  known?: KnownChunks | undefined;
  /** The search index's upkeep: takes the first bytes of documents a worker had in hand. */
  indexer?: { heads: TextHeads } | undefined;
}

export interface ResolvedMeta {
  path?: string | undefined;
  mediaType?: string | undefined;
  tags?: string[] | undefined;
  meta?: Record<string, string> | undefined;
  expectDigest?: string | undefined;
  time?: number | undefined;
  version?: number | undefined;
}

/** What a put reports per chunk, in document order (the browser demo draws its chunk map). */
export interface ChunkEvent {
  /** Raw bytes of the chunk. */
  length: number;
  /** True when this put wrote the chunk; false when the store (or this document) had it. */
  fresh: boolean;
}

export interface PutOptions {
  onChunk?: (chunk: ChunkEvent) => void;
  /**
   * False: a file of a snapshot about to be made (snapshot-run.ts): the document is stored and
   * kept for it, and no entry is made (FORMAT.md §13).
   */
  listed?: boolean;
}

/** Chunks of one document, in order, ending with its digest (the generator's return value). */
/** A stream's result; `head`: the document's first bytes, when its ingest worker was asked for them (text-heads.ts). */
export type StreamResult = IngestResult & { head?: Uint8Array; changed?: true };
export type ChunkStream = AsyncGenerator<StreamChunk, StreamResult, undefined>;

/**
 * Runs the fused ingest kernel on this thread. A document that may have more than one chunk
 * has its new chunks compressed in groups (chunk-groups.ts); one that cannot (bytes at hand, no
 * longer than the least chunk) is compressed by the kernel, as a group of one would be.
 */
export function ingestHere(ctx: PutContext, source: ByteSource): ChunkStream {
  const single = source instanceof Uint8Array && source.length <= ctx.chunking.min;
  if (ctx.compression === false || single) return ingest(source, kernelOptions(ctx, ctx.compression));
  return groupedStream(ingest(source, kernelOptions(ctx, false)), ctx.compression, (key) => held(ctx, key));
}

/**
 * The kernel's options for this store. One literal, the same shape every put: built by
 * spreading a shared object instead, 1 KB puts ran 3-5% slower (alternated with the build
 * before, six rounds).
 */
function kernelOptions(ctx: PutContext, compression: number | false): IngestOptions {
  return {
    chunking: ctx.chunking,
    compression,
    ...(ctx.documentHasher ? { documentHasher: ctx.documentHasher } : {}),
    ...(ctx.chunkNameKey ? { chunkNameKey: ctx.chunkNameKey } : {}),
  };
}

/** Whether the store holds the chunk undamaged, or a put in progress has written it: a put shares it (`place`). */
function held(ctx: PutContext, key: string): boolean {
  if (ctx.known?.has(key) || ctx.writer.pending(key)) return true;
  const row = ctx.st.chunkShareable.get(hexInto(key, KEY, 0));
  return row !== undefined && !row.damaged;
}

/** Reused for each chunk lookup: the statement runs synchronously. */
const KEY = new Uint8Array(32);

/**
 * Runs `fn` once the current synchronous step has ended: opening or sealing a pack writes rows,
 * which must not happen inside a caller's read transaction (putReadyDocuments). A put that
 * waits for room re-checks pending records when it appends (writer.ts), and a chunk stored
 * meanwhile by another put only gets a second, unreferenced record, as before.
 */
function afterThisStep<T>(fn: () => Promise<T>): Promise<T> {
  return Promise.resolve().then(fn);
}

/**
 * One document's way into the store: its chunks are placed (shared with the store or with
 * other puts in progress, or appended to the open pack), then its rows are committed. Streamed
 * puts (`putDocument`) and batches of documents ingested whole (`putReadyDocuments`) share it.
 * Call `release` exactly once, whatever happened.
 */
class DocumentPut {
  readonly manifest = new ManifestBuilder();
  /**
   * How many times the document names each chunk, and where those without a row are that this
   * put needs rows for (its own and other pending puts'): one map, not two — a batch makes one
   * DocumentPut per small file, and each map was ~200 bytes more for the scavenger.
   */
  readonly #counts = new Map<string, Counted>();
  // The rarer cases are made on first use: a batch makes one DocumentPut per small file.
  /** Fresh copies of chunks verify found damaged: their rows are repointed at commit. */
  #repairs: Map<string, StoredChunk> | undefined;
  /** Stored chunks this put shares (GC must not take them before it commits). */
  #pinned: Set<string> | undefined;
  /** Group records this put (or its batch) appended: their members are placed one by one. */
  #groups: Map<ChunkGroup, GroupPlace> | undefined;
  readonly #packsUsed: number[] = [];
  readonly #wrote: string[] = [];
  #committed = false;
  readonly #bulk: boolean;
  /** The operation queued (its application leaves the path's version on it: APPLIED_VERSION). */
  #op: Op | undefined;
  newChunks = 0;
  newBytes = 0;

  /**
   * `groups`: shared by the documents of a batch, whose groups hold chunks of several of them.
   * `bulk`: a source of a bulk stream (putMany, which gives it a commit turn).
   */
  constructor(
    readonly ctx: PutContext,
    groups?: Map<ChunkGroup, GroupPlace>,
    bulk = false,
  ) {
    this.#groups = groups;
    this.#bulk = bulk;
    ctx.writer.putStarted(bulk);
  }

  #usePack(id: number): void {
    this.ctx.writer.usePack(id);
    this.#packsUsed.push(id);
  }

  /**
   * Places one chunk; true when this put wrote it. Synchronous unless the pack must be opened
   * or rotated first, or a damaged copy is being replaced: a batch of small documents then
   * places all its chunks without an await, in one read transaction.
   */
  place(c: StreamChunk): boolean | Promise<boolean> {
    const { writer, st } = this.ctx;
    // Readers refuse any chunk above the store's max as damage (read.ts): a chunk stream from a
    // producer with other parameters must be refused here, not stored unreadable.
    if (c.length > this.ctx.chunking.max || c.payload.length > this.ctx.chunking.max) {
      throw new InvalidInputError(`a chunk is at most ${this.ctx.chunking.max} bytes in this store; this one is ${c.length}`, 'chunk');
    }
    this.manifest.add(c.key, c.length);
    const seen = this.#counts.get(c.key);
    if (seen !== undefined) {
      seen.n++;
      return false; // placed already
    }
    const counted: Counted = { n: 1, raw: c.length, unrowed: undefined };
    this.#counts.set(c.key, counted);
    // Check and pin/claim without an await in between (see writer.ts).
    const stored = st.chunkShareable.get(hexInto(c.key, KEY, 0));
    if (stored && !stored.damaged) {
      writer.pin(c.key);
      (this.#pinned ??= new Set()).add(c.key);
      this.ctx.known?.add(c.key);
      return false;
    }
    if (stored) {
      // The stored copy is damaged: this put carries good bytes, so it writes them again — a
      // group's member as a record of its own, from its group's bytes.
      // A chunk the put's producer knew the store held came raw (compressed only once a store
      // knows it lacks it): compressed here as any new chunk is (repairs were stored raw: a
      // trial's text store went from 31x to 7.8x after mending 20 chunks).
      if (!c.group) {
        const e = c.codec === CODEC_RAW && typeof this.ctx.compression === 'number' ? encodeChunk(c.payload, this.ctx.compression) : { codec: c.codec, payload: c.payload };
        return this.#repair(c.key, c.length, e.codec, e.payload);
      }
      const raw = decompress(c.group.frame, c.group.rawLen).subarray(c.at!, c.at! + c.length);
      const e = encodeChunk(raw, typeof this.ctx.compression === 'number' ? this.ctx.compression : undefined);
      return this.#repair(c.key, c.length, e.codec, e.payload);
    }
    const pending = writer.pending(c.key);
    if (pending) {
      this.#usePack(pending.packId);
      counted.unrowed = pending;
      return false;
    }
    if (c.group) return this.#placeMember(c, c.group, counted);
    const location = { key: c.key, codec: c.codec, rawLen: c.length, storedLen: c.payload.length };
    const appended = (a: { chunk: StoredChunk; written: boolean }): boolean => {
      this.#use(c.key, counted, a);
      if (a.written) this.newBytes += RECORD_HEADER_SIZE + c.payload.length;
      return a.written;
    };
    const now = writer.appendNow(location, c.payload);
    return now ? appended(now) : afterThisStep(() => writer.append(location, c.payload)).then(appended);
  }

  /** A chunk this put appended (`written`) or found pending when it did. */
  #use(key: string, counted: Counted, a: { chunk: StoredChunk; written: boolean }): void {
    this.#usePack(a.chunk.packId);
    counted.unrowed = a.chunk;
    if (a.written) {
      this.#wrote.push(key);
      this.newChunks++;
    }
  }

  /**
   * A group's member this put must write (FORMAT.md §6.2): its group record is appended once,
   * by the first member that needs it; each member is then registered as it is placed.
   */
  #placeMember(c: StreamChunk, group: ChunkGroup, counted: Counted): boolean | Promise<boolean> {
    const { writer } = this.ctx;
    if (group.rawLen >= groupRawMax(this.ctx.chunking.max)) {
      throw new InvalidInputError(`a group is under ${groupRawMax(this.ctx.chunking.max)} raw bytes in this store; this one has ${group.rawLen}`, 'chunk');
    }
    // Methods, not closures made per member: most members find their group placed already.
    const placed = this.#groups?.get(group);
    if (placed) return this.#member(c, counted, placed);
    const now = writer.appendGroupNow(group);
    if (now) return this.#member(c, counted, this.#placedGroup(group, now));
    return afterThisStep(() => writer.appendGroup(group)).then((p) => this.#member(c, counted, this.#placedGroup(group, p)));
  }

  #member(c: StreamChunk, counted: Counted, place: GroupPlace): boolean {
    const a = this.ctx.writer.member(c.key, place, c.at!, c.length);
    this.#use(c.key, counted, a);
    // The group record's bytes, shared among its members by their place in its raw bytes (the
    // shares of all its members add up to the record exactly): a group holds several puts'
    // chunks, and the put that appended it was credited all of it, the others 0 (found in a trial).
    if (a.written) {
      const record = RECORD_HEADER_SIZE + place.storedLen;
      const raw = c.group!.rawLen;
      this.newBytes += Math.floor((record * (c.at! + c.length)) / raw) - Math.floor((record * c.at!) / raw);
    }
    return a.written;
  }

  /** A group record this put appended: its documents' members find it here. */
  #placedGroup(group: ChunkGroup, place: GroupPlace): GroupPlace {
    (this.#groups ??= new Map()).set(group, place);
    this.#usePack(place.packId);
    return place;
  }

  /** A fresh record of a chunk whose stored copy verify found damaged; its row is repointed at commit. */
  #repair(key: string, rawLen: number, codec: number, payload: Uint8Array): Promise<boolean> {
    const { writer } = this.ctx;
    writer.pin(key);
    (this.#pinned ??= new Set()).add(key);
    const location = { key, codec, rawLen, storedLen: payload.length };
    return afterThisStep(() => writer.appendCopy(location, payload)).then(({ chunk }) => {
      this.#usePack(chunk.packId);
      (this.#repairs ??= new Map()).set(key, chunk);
      this.newChunks++;
      this.newBytes += RECORD_HEADER_SIZE + payload.length;
      return true;
    });
  }

  /** Refuses a document whose digest is not the one the caller expects. */
  check(result: IngestResult, meta: ResolvedMeta): void {
    if (meta.expectDigest !== undefined && meta.expectDigest !== result.digest) {
      throw new DigestMismatchError(`the bytes hash to ${result.digest}, not ${meta.expectDigest}`, meta.expectDigest, result.digest);
    }
  }

  /** Queues the document's commit (in commit order); resolves once it is committed. */
  queue(result: IngestResult, meta: ResolvedMeta, listed: boolean): Promise<unknown> {
    this.#op = this.op(result, meta, listed);
    return this.ctx.writer.commit([this.#op]);
  }

  /** The document's operation, once its chunks are placed (`queue` commits it). */
  op(result: IngestResult, meta: ResolvedMeta, listed: boolean): Op {
    const { writer } = this.ctx;
    // Chunks by their ordinal among the manifest's distinct keys (catalog/ops.ts `put`): a
    // 2 GiB document has ~130,000, so the operation stays flat numbers, not objects. The
    // arrays the operation keeps are made at their size: grown from empty by push they start
    // at 16 slots, and a small file's were most of what its operation kept alive until its
    // commit (a batch's operations outlive a scavenge or two).
    let runs = 0;
    let members = 0;
    for (const counted of this.#counts.values()) {
      if (!counted.unrowed) continue;
      runs++;
      if (counted.unrowed.at !== undefined) members++;
    }
    const packIds: number[] = [];
    const placed = new Array<number>(runs * 5);
    const at = members > 0 ? new Array<number>(members) : undefined;
    let ordinal = 0;
    let i = 0;
    let m = 0;
    for (const counted of this.#counts.values()) {
      const c = counted.unrowed;
      if (c) {
        placed[i++] = ordinal;
        placed[i++] = packIndex(packIds, c.packId);
        placed[i++] = c.offset;
        placed[i++] = c.storedLen;
        placed[i++] = c.codec;
        if (c.at !== undefined) at![m++] = c.at;
      }
      ordinal++;
    }
    let repaired: number[] | undefined;
    if (this.#repairs) {
      repaired = [];
      ordinal = 0;
      for (const key of this.#counts.keys()) {
        const r = this.#repairs.get(key);
        // (A repair is a record of its own: no place in a group.)
        if (r) repaired.push(ordinal, packIndex(packIds, r.packId), r.offset, r.storedLen, r.codec);
        ordinal++;
      }
    }
    const packs = new Array<string>(packIds.length);
    for (let p = 0; p < packIds.length; p++) packs[p] = writer.packName(packIds[p]!);
    const manifest = this.manifest.bytes();
    const op: Extract<Op, { op: 'put' }> = { op: 'put', digest: result.digest, size: result.size, manifest: bytesToHex(manifest), packs, places: placed };
    if (at) op.at = at;
    if (repaired?.length) op.repairs = repaired;
    // A user's put names the document at its path (or as a pathless entry); a snapshot's
    // file is kept by the snapshot's trees alone (FORMAT.md §13).
    if (listed) op.entry = entryAttributes(meta);
    knowManifest(op, { bytes: manifest, distinct: this.#counts }); // (what applying it would compute)
    return op;
  }

  /** After the commit: later puts find the rows of the chunks this one wrote. */
  committed(result: IngestResult & { changed?: true }): PutResult {
    this.#committed = true;
    for (const [key, counted] of this.#counts) {
      if (!counted.unrowed) continue;
      this.ctx.writer.settle(key);
      this.ctx.known?.add(key);
    }
    for (const key of this.#repairs?.keys() ?? []) this.ctx.known?.add(key);
    const version = (this.#op as { [APPLIED_VERSION]?: { version: number; made: boolean } } | undefined)?.[APPLIED_VERSION];
    return {
      digest: result.digest,
      size: result.size,
      chunks: this.manifest.count,
      newChunks: this.newChunks,
      newBytesStored: this.newBytes,
      ...(result.changed ? { changed: true as const } : {}),
      ...(version ? { version: version.version, versionMade: version.made } : {}),
    };
  }

  get isCommitted(): boolean {
    return this.#committed;
  }

  release(): void {
    const { writer } = this.ctx;
    // A failed put's records must not stay pending: with no put using their pack, GC could
    // reclaim it under a later put that shared them. Puts that already share them keep
    // their own copy of the location and hold the pack.
    if (!this.#committed) this.#wrote.forEach((k) => writer.settle(k));
    writer.putEnded(this.#bulk);
    this.#pinned?.forEach((k) => writer.unpin(k));
    this.#packsUsed.forEach((id) => writer.releasePack(id));
  }
}

/** A chunk a document names: how often, its raw length, and where it is while it has no row (Distinct in ops.ts). */
interface Counted {
  n: number;
  raw: number;
  unrowed: StoredChunk | undefined;
}

/** A pack's number among a put operation's packs, added when new (a document's chunks are mostly in the pack of the one before). */
function packIndex(packIds: number[], id: number): number {
  const last = packIds.length - 1;
  if (last >= 0 && packIds[last] === id) return last;
  const p = packIds.indexOf(id);
  return p >= 0 ? p : packIds.push(id) - 1;
}

/**
 * Stores a document from its chunk stream (from `ingestHere`, or from a worker that ran the
 * same kernel with the store's parameters).
 */
export async function putDocument(
  ctx: PutContext,
  stream: ChunkStream,
  meta: ResolvedMeta,
  order?: CommitTurn,
  /** False for a snapshot's files: kept for the snapshot, no entry made (FORMAT.md §13). */
  listed = true,
  onChunk?: (chunk: ChunkEvent) => void,
): Promise<PutResult> {
  const put = new DocumentPut(ctx, undefined, order !== undefined);
  try {
    let step = await stream.next();
    while (!step.done) {
      const fresh = await put.place(step.value);
      onChunk?.({ length: step.value.length, fresh });
      step = await stream.next();
    }
    const result = step.value;
    put.check(result, meta);
    // For the search index, before the commit queues the entry: never read back what was in hand.
    if (listed && result.head) ctx.indexer?.heads.keep(result.digest, result.head, result.size);
    if (order) await order.turn;
    const queued = put.queue(result, meta, listed);
    order?.done(); // queued: the next put in line may queue its commit behind this one
    await queued;
    return put.committed(result);
  } finally {
    order?.done(); // a put that failed before queuing must not hold up the ones after it
    if (!put.isCommitted) await stream.return?.(undefined as never).catch(() => undefined);
    put.release();
  }
}

/** A document an ingest worker read and ingested whole (a small file or Blob). */
export interface ReadyDocument {
  chunks: StreamChunk[];
  result: StreamResult;
  meta?: ResolvedMeta | undefined;
  onChunk?: ((chunk: ChunkEvent) => void) | undefined;
}

/**
 * Stores documents whose chunks are all at hand (ingest workers answer a batch of small
 * sources in one message): one pass over their chunks with no stream, generator or await per
 * document (the open pack takes their records synchronously), and one commit job each, queued
 * together, so they share a transaction. Per document, its result or the error that refused
 * it; one failing document does not fail the others. `order`: the batch's place in a commit
 * order (all of its documents take it together).
 */
export async function putReadyDocuments(
  ctx: PutContext,
  docs: readonly (ReadyDocument | Error)[],
  listed: boolean,
  order?: CommitTurn,
): Promise<(PutResult | Error)[]> {
  const out: (PutResult | Error | undefined)[] = new Array(docs.length);
  // Every put starts before the read transactions below (starting one may open a pack: a write).
  const groups = new Map<ChunkGroup, GroupPlace>(); // (a worker's batch compresses its documents' chunks together)
  const puts = docs.map((doc) => (doc instanceof Error ? undefined : new DocumentPut(ctx, groups, order !== undefined)));
  try {
    let d = 0;
    let c = 0;
    /**
     * Places chunk after chunk until one must wait for the pack (opened or rotated), then
     * returns that wait; called again, goes on where it stopped. The lookups of a step share
     * one read transaction: one SQLite snapshot and lock instead of one per chunk.
     */
    const step = (): { wait: Promise<void> } | undefined => {
      for (; d < docs.length; d++, c = 0) {
        const doc = docs[d]!;
        if (doc instanceof Error) {
          out[d] = doc;
          continue;
        }
        const put = puts[d]!;
        try {
          while (c < doc.chunks.length) {
            const chunk = doc.chunks[c++]!;
            const placed = put.place(chunk);
            if (typeof placed !== 'boolean') {
              const at = d;
              const wait = placed.then(
                (fresh) => doc.onChunk?.({ length: chunk.length, fresh }),
                (e: unknown) => {
                  out[at] = asError(e); // its other chunks are not placed
                  d = at + 1;
                  c = 0;
                },
              );
              return { wait }; // (not the promise itself: a transaction function may not return one)
            }
            doc.onChunk?.({ length: chunk.length, fresh: placed });
          }
          put.check(doc.result, doc.meta ?? {});
        } catch (e) {
          out[d] = asError(e);
        }
      }
      return undefined;
    };
    for (let paused = ctx.writer.db.read(step); paused; paused = ctx.writer.db.read(step)) await paused.wait;
    if (order) await order.turn;
    if (!listed) {
      // A snapshot's files: one commit job for the batch (a snapshot fails with any of its
      // files, so none needs to fail alone), not a promise and a job per file.
      const ops: Op[] = [];
      const queued: number[] = [];
      puts.forEach((put, i) => {
        if (!put || out[i]) return;
        const doc = docs[i] as ReadyDocument;
        ops.push(put.op(doc.result, doc.meta ?? {}, false));
        queued.push(i);
      });
      const commit = ops.length ? ctx.writer.commit(ops) : undefined;
      order?.done();
      try {
        await commit;
        for (const i of queued) out[i] = puts[i]!.committed((docs[i] as ReadyDocument).result);
      } catch (e) {
        for (const i of queued) out[i] = asError(e);
      }
      return out as (PutResult | Error)[];
    }
    const queued = puts.map((put, i) => {
      if (!put || out[i]) return undefined;
      const doc = docs[i] as ReadyDocument;
      if (doc.result.head) ctx.indexer?.heads.keep(doc.result.digest, doc.result.head, doc.result.size); // (listed: see putDocument)
      return put.queue(doc.result, doc.meta ?? {}, listed);
    });
    order?.done();
    const settled = await Promise.allSettled(queued);
    settled.forEach((s, i) => {
      if (!queued[i]) return;
      out[i] = s.status === 'fulfilled' ? puts[i]!.committed((docs[i] as ReadyDocument).result) : asError(s.reason);
    });
    return out as (PutResult | Error)[];
  } finally {
    order?.done();
    puts.forEach((p) => p?.release());
  }
}

/** The entry attributes a put's operation carries (FORMAT.md §15.3). */
export function entryAttributes(meta: ResolvedMeta): PutAttributes {
  const a: PutAttributes = {};
  if (meta.path !== undefined) a.path = meta.path;
  if (meta.mediaType !== undefined) a.mediaType = meta.mediaType;
  if (meta.tags !== undefined && meta.tags.length) a.tags = meta.tags;
  if (meta.meta !== undefined && Object.keys(meta.meta).length) a.meta = meta.meta;
  if (meta.time !== undefined) a.time = meta.time;
  if (meta.version !== undefined && meta.path !== undefined) a.version = meta.version;
  return a;
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}
