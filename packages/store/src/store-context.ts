/**
 * What every part of an open store works with, made once when it opens and handed whole to
 * the modules that do the work (store-open.ts, store-writes.ts, queries.ts, document-reads.ts,
 * put.ts) instead of their pieces as positional arguments. It satisfies their narrower
 * contexts (`CatalogReads`, `DocumentReads`, `PutContext`) as it is.
 */
import { blake3, type DocumentHasherChoice, type ResolvedChunkParams } from '@kura/core';
import type { SqlDatabase } from './backend/sql.js';
import type { CommitLog } from './catalog/commit-log.js';
import type { Op, OpResult } from './catalog/ops.js';
import { ReadOnlyError, StoreClosedError } from './errors.js';
import type { GcReport } from './bytes/gc.js';
import { KnownChunks, preloadKnown } from './ingest/known-chunks.js';
import { extractHere } from './extract/extract.js';
import type { SemanticSearch } from './semantic/semantic-side.js';
import type { Reranker } from './search/rerank.js';
import type { Durability } from './options.js';
import { Reader } from './bytes/read.js';
import { Indexer } from './search/indexer.js';
import type { SearchIndex } from './search/index-writer.js';
import type { Statements } from './catalog/statements.js';
import type { StoreBackends, StoreConfig } from './store-types.js';
import { Writer } from './bytes/writer.js';
import { PLAIN_RECORDS, sealedRecords } from './bytes/record-codec.js';

export interface StoreContext {
  readonly b: StoreBackends;
  readonly db: SqlDatabase;
  readonly st: Statements;
  readonly config: StoreConfig;
  readonly readonly: boolean;
  readonly log: CommitLog;
  readonly writer: Writer;
  readonly reader: Reader;
  readonly indexer: Indexer;
  /** The keyword index: the connection searches read it through, and its writer. */
  readonly search: SearchIndex;
  readonly chunking: ResolvedChunkParams;
  readonly compression: number | false;
  readonly documentHasher: DocumentHasherChoice | undefined;
  /** An encrypted store's chunk-names key (FORMAT.md §17.4). */
  readonly chunkNameKey: Uint8Array | undefined;
  /** How long a chunk stays unreferenced before GC reclaims it while other writers are alive. */
  readonly gcMarginMs: number | undefined;
  /** On an object store: how long the commits a checkpoint covers are kept (decision 0045). */
  readonly logRetentionMs: number | undefined;
  /** The chunks this store holds, for ingest workers: made on first use (`knownChunks`). */
  known: KnownChunks | undefined;
  closed: boolean;
  /** Semantic search, once an embedder is in use (Store.useEmbedder). */
  semantic: SemanticSearch | undefined;
  /** The reranker searches use, when one is configured (Store.useReranker; search/rerank.ts). */
  reranker: Reranker | undefined;
  /** The GC in progress, which a second `gc` call shares. */
  gcRunning: Promise<GcReport> | undefined;
  /** Snapshots being taken in this process: their files' documents are held by nothing until they commit (GC leaves those alone). */
  snapshotsRunning: number;
}

export interface ContextOptions {
  readonly: boolean;
  durability: Durability;
  compression: number | false;
  packSize: number | undefined;
  gcMarginMs: number | undefined;
  logRetentionMs: number | undefined;
  log: CommitLog;
  st: Statements;
  search: SearchIndex;
}

/** Wires an open store's parts; the indexer starts on what a previous session left queued. */
export function makeContext(b: StoreBackends, config: StoreConfig, o: ContextOptions): StoreContext {
  // An encrypted store (FORMAT.md §17): sealed records, chunks named by keyed BLAKE3.
  const sealing = b.sealing;
  const records = sealing ? sealedRecords(sealing) : PLAIN_RECORDS;
  const writer = new Writer(b.db, o.st, o.log, b.packs, o.durability, o.packSize, records);
  const refresh = o.log.publishes ? () => o.log.refresh() : undefined;
  const chunkName = sealing ? (raw: Uint8Array) => sealing.chunkName(raw) : blake3;
  const reader = new Reader(o.st, b.packs, (id) => writer.packName(id), (id) => writer.forgetPack(id), b.documentHasher, config.chunking.max, refresh, records, chunkName);
  const extract = b.extractor ? b.extractor.extract.bind(b.extractor) : extractHere;
  const indexer = new Indexer(b.db, o.search.writer, o.st, reader, () => writer.idle(), () => writer.busy, extract);
  if (o.search.writer?.threaded && !o.log.publishes) indexer.besidePuts = () => writer.bulk;
  indexer.schedule();
  // A batch stays open while puts are on their way (decision 0028): sequential puts share a COMMIT.
  // A catalog replaced by a checkpoint's (decision 0045) may number packs otherwise and hold other chunks.
  const rebased = () => {
    writer.forgetPacks();
    ctx.known = undefined;
    // Every entry is queued again; a file of its own still holds the old catalog's rows. Emptied
    // now, before any later batch's rows (the writer takes calls in order); a batch in flight
    // is dropped by the indexer.
    void o.search.writer?.clear().catch(() => undefined);
    indexer.catalogReplaced();
  };
  o.log.attach({ coming: () => writer.busy || writer.committing, committing: () => writer.committing, openPack: () => writer.openPackRow, packGone: (id) => writer.forgetPack(id), rebased });
  const ctx: StoreContext = {
    b,
    db: b.db,
    st: o.st,
    config,
    readonly: o.readonly,
    log: o.log,
    writer,
    reader,
    indexer,
    search: o.search,
    chunking: config.chunking,
    compression: o.compression,
    documentHasher: b.documentHasher,
    chunkNameKey: sealing?.chunkNameKey,
    gcMarginMs: o.gcMarginMs,
    logRetentionMs: o.logRetentionMs,
    known: undefined,
    closed: false,
    gcRunning: undefined,
    snapshotsRunning: 0,
    semantic: undefined,
    reranker: undefined,
  };
  return ctx;
}

/** The context of a store that is still open (else STORE_CLOSED). */
export function usable(ctx: StoreContext): StoreContext {
  if (ctx.closed) throw new StoreClosedError();
  return ctx;
}

/** The context of a store open for writing (else STORE_CLOSED or READ_ONLY naming `op`). */
export function writable(ctx: StoreContext, op: string): StoreContext {
  usable(ctx);
  if (ctx.readonly) throw new ReadOnlyError(op);
  return ctx;
}

/** One commit of one operation outside the group commit (deletes, metadata, snapshots). */
export async function commitOne(ctx: StoreContext, op: Op): Promise<OpResult> {
  // Indexed, not destructured: destructuring goes through the array iterator, whose map
  // checks threw this function's optimized code away while it warmed up.
  const results = await ctx.log.commitAsync([op]);
  if (ctx.writer.durability === 'full') await ctx.log.sync();
  return results[0]!;
}

/**
 * Brings the search index up to date now (a search, a wait for the index, a close). The open
 * batch of commits ends first. When such a drain ran without turns of the event loop, the
 * batch's timer waited for the whole drain and every index transaction ran inside the batch,
 * holding kura.db's write lock throughout: 0.3-0.55 s at a close after ~700 small puts, while
 * other writers' puts waited up to 1.4 s (decision 0051, amended). It now takes a turn every
 * BREATHE_MS (decision 0007, amended), but a batch left open would still take in the index
 * transactions until its timer got one.
 */
export async function drainIndex(ctx: StoreContext, options?: { extract?: boolean }): Promise<void> {
  ctx.log.endBatch();
  await ctx.indexer.drain(options);
}

/**
 * The chunks this store holds, for ingest workers (decision 0018): made on first use, by a
 * platform that runs workers and has SharedArrayBuffer; from then on every put tells it the
 * chunks it found or committed.
 */
export function knownChunks(ctx: StoreContext): KnownChunks | undefined {
  if (!KnownChunks.available()) return undefined;
  if (!ctx.known) {
    const known = (ctx.known = new KnownChunks());
    preloadKnown(known, ctx.st, () => !ctx.closed && ctx.known === known);
  }
  return ctx.known;
}
