/**
 * The ingest pipeline of a put (FORMAT.md §8): stream -> fused kernel -> shared or appended
 * chunks -> one group-committed transaction.
 */
import {
  InternalError,
  InvalidInputError,
  ingest,
  type ByteSource,
  type Digest,
  type DocumentHasherChoice,
  type IngestChunk,
  type IngestResult,
  type ResolvedChunkParams,
} from '@kura/core';
import { applyMeta } from './documents.js';
import { DigestMismatchError } from './errors.js';
import { hexInto, hexToBytes } from './hex.js';
import { ManifestBuilder } from './manifest.js';
import { RECORD_HEADER_SIZE } from './pack-record.js';
import type { KnownChunks } from './ingest/known-chunks.js';
import type { Statements } from './statements.js';
import type { StoredChunk, Writer } from './writer.js';

export interface PutResult {
  digest: Digest;
  size: number;
  chunks: number;
  /** Chunks this put wrote (not found in the store). */
  newChunks: number;
  /** Bytes this put added to pack files (records: headers and payloads). */
  newBytesStored: number;
}

export interface PutContext {
  writer: Writer;
  st: Statements;
  chunking: ResolvedChunkParams;
  compression: number | false;
  documentHasher?: DocumentHasherChoice | undefined;
  /** Told every chunk found stored or committed, when ingest workers share it. */
  known?: KnownChunks | undefined;
}

export interface ResolvedMeta {
  path?: string | undefined;
  mediaType?: string | undefined;
  tags?: string[] | undefined;
  meta?: Record<string, string> | undefined;
  expectDigest?: string | undefined;
}

/** A new version at `path`, unless its latest version already is this document (FORMAT.md §11). */
function addVersion(st: Statements, path: string, docId: number, now: number): void {
  if (st.versionLatest.get(path)?.doc_id === docId) return;
  st.versionInsert.run(path, st.versionNext.get(path)!.last, docId, now);
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
}

/**
 * Puts that must commit in the order they were started (putFiles lists documents in input
 * order) and still share group commits: a put waits until every earlier one has *queued* its
 * commit (or failed), not until it has committed, so a whole window of puts joins one
 * transaction. Waiting for the commit itself gave each document its own transaction.
 */
export class CommitOrder {
  #tail: Promise<void> = Promise.resolve();

  /**
   * The next place in line: `turn` resolves when the earlier puts have queued; call `done`
   * once this one has (or failed). A put that fails early still releases the next one only
   * after its own turn: the puts before it may not have queued yet.
   */
  next(): CommitTurn {
    const turn = this.#tail;
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    this.#tail = turn.then(() => mine);
    return { turn, done };
  }
}

export interface CommitTurn {
  turn: Promise<void>;
  done: () => void;
}

/** Chunks of one document, in order, ending with its digest (the generator's return value). */
export type ChunkStream = AsyncGenerator<IngestChunk, IngestResult, undefined>;

/** Runs the fused ingest kernel on this thread. */
export function ingestHere(ctx: PutContext, source: ByteSource): ChunkStream {
  return ingest(source, {
    chunking: ctx.chunking,
    compression: ctx.compression,
    ...(ctx.documentHasher ? { documentHasher: ctx.documentHasher } : {}),
  });
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
  /** False for a snapshot's files: kept for the snapshot, not listed (FORMAT.md §13). */
  listed = true,
  onChunk?: (chunk: ChunkEvent) => void,
): Promise<PutResult> {
  const { writer, st } = ctx;
  const manifest = new ManifestBuilder();
  const keyBuffer = new Uint8Array(32); // reused per lookup: the statement runs synchronously
  /** Chunks without a row that this put needs rows for: its own and other pending puts'. */
  const unrowed = new Map<string, StoredChunk>();
  /** Fresh copies of chunks verify found damaged: their rows are repointed at commit. */
  const repairs = new Map<string, StoredChunk>();
  const pinned = new Set<string>();
  const packsUsed: number[] = [];
  const wrote: string[] = [];
  let committed = false;
  let newChunks = 0;
  let newBytes = 0;

  const usePack = (id: number) => {
    writer.usePack(id);
    packsUsed.push(id);
  };

  /** Places one chunk; true when this put wrote it. */
  const place = async (c: { key: string; length: number; codec: number; payload: Uint8Array }): Promise<boolean> => {
    // Readers refuse any chunk above the store's max as damage (read.ts): a chunk stream from a
    // producer with other parameters must be refused here, not stored unreadable.
    if (c.length > ctx.chunking.max || c.payload.length > ctx.chunking.max) {
      throw new InvalidInputError(`a chunk is at most ${ctx.chunking.max} bytes in this store; this one is ${c.length}`, 'chunk');
    }
    manifest.add(c.key, c.length);
    if (unrowed.has(c.key) || pinned.has(c.key) || repairs.has(c.key)) return false;
    // Check and pin/claim without an await in between (see writer.ts).
    const stored = st.chunkShareable.get(hexInto(c.key, keyBuffer, 0));
    if (stored && !stored.damaged) {
      writer.pin(c.key);
      pinned.add(c.key);
      ctx.known?.add(c.key);
      return false;
    }
    if (stored) {
      // The stored copy is damaged: this put carries good bytes, so it writes them again.
      writer.pin(c.key);
      pinned.add(c.key);
      const { chunk } = await writer.appendCopy({ key: c.key, codec: c.codec, rawLen: c.length, storedLen: c.payload.length }, c.payload);
      usePack(chunk.packId);
      repairs.set(c.key, chunk);
      newChunks++;
      newBytes += RECORD_HEADER_SIZE + c.payload.length;
      return true;
    }
    const pending = writer.pending(c.key);
    if (pending) {
      usePack(pending.packId);
      unrowed.set(c.key, pending);
      return false;
    }
    const { chunk, written } = await writer.append(
      { key: c.key, codec: c.codec, rawLen: c.length, storedLen: c.payload.length },
      c.payload,
    );
    usePack(chunk.packId);
    unrowed.set(c.key, chunk);
    if (written) {
      wrote.push(c.key);
      newChunks++;
      newBytes += RECORD_HEADER_SIZE + c.payload.length;
    }
    return written;
  };

  writer.putStarted();
  try {
    let step = await stream.next();
    while (!step.done) {
      const fresh = await place(step.value);
      onChunk?.({ length: step.value.length, fresh });
      step = await stream.next();
    }
    const { digest, size } = step.value;
    if (meta.expectDigest !== undefined && meta.expectDigest !== digest) {
      throw new DigestMismatchError(`the bytes hash to ${digest}, not ${meta.expectDigest}`, meta.expectDigest, digest);
    }
    const digestBytes = hexToBytes(digest.slice(7));

    const counts = manifest.counts();
    if (order) await order.turn;
    const queued = writer.commit(() => {
      const now = Date.now();
      for (const [key, c] of repairs) {
        const k = hexToBytes(key);
        st.chunkRepair.run(c.packId, c.offset, c.rawLen, c.storedLen, c.codec, k);
        st.damagedClear.run(k);
      }
      const inserted = st.docInsert.run(digestBytes, size, manifest.count, manifest.bytes(), meta.path ?? null, meta.mediaType ?? null, now, now, listed ? 1 : 0);
      if (inserted.changes === 0) {
        // Same bytes again: only metadata changes; chunks this put wrote stay unreferenced.
        // A user's put lists a document that only snapshots kept.
        const existing = st.docAnyByDigest.get(digestBytes)!;
        if (!listed) return;
        st.docList.run(existing.id);
        applyMeta(st, existing.id, { path: meta.path, mediaType: meta.mediaType, meta: meta.meta, addTags: meta.tags }, now);
        if (meta.path !== undefined) addVersion(st, meta.path, existing.id, now);
        return;
      }
      for (const [key, n] of counts) {
        const c = unrowed.get(key);
        if (c) {
          st.chunkUpsert.run(hexToBytes(key), c.packId, c.offset, c.rawLen, c.storedLen, c.codec, n);
        } else if (st.chunkAddRefs.run(n, hexToBytes(key)).changes !== 1) {
          throw new InternalError(`chunk ${key} vanished before its document committed`);
        }
      }
      const docId = Number(inserted.lastInsertRowid);
      if (meta.meta || meta.tags) applyMeta(st, docId, { meta: meta.meta, addTags: meta.tags }, now, false);
      if (listed) st.enqueueIndex.run(docId);
      if (meta.path !== undefined) addVersion(st, meta.path, docId, now);
    });
    order?.done(); // queued: the next put in line may queue its commit behind this one
    await queued;
    committed = true;
    for (const key of unrowed.keys()) {
      writer.settle(key);
      ctx.known?.add(key);
    }
    for (const key of repairs.keys()) ctx.known?.add(key);
    return { digest, size, chunks: manifest.count, newChunks, newBytesStored: newBytes };
  } finally {
    order?.done(); // a put that failed before queuing must not hold up the ones after it
    // A failed put's records must not stay pending: with no put using their pack, GC could
    // reclaim it under a later put that shared them. Puts that already share them keep
    // their own copy of the location and hold the pack.
    if (!committed) {
      wrote.forEach((k) => writer.settle(k));
      await stream.return?.(undefined as never).catch(() => undefined);
    }
    writer.putEnded();
    pinned.forEach((k) => writer.unpin(k));
    packsUsed.forEach((id) => writer.releasePack(id));
  }
}
