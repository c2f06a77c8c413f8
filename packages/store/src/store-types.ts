/** The store's public shapes: its backends, configuration, statistics and readers. */
import { resolveChunkParams, type ByteSource, type Digest, type DocumentHasherChoice, type IngestChunk, type IngestOptions, type ResolvedChunkParams } from '@kura/core';
import type { PackStore } from './backend/packs.js';
import type { SearchIndex } from './search/index-writer.js';
import type { SqlDatabase } from './backend/sql.js';
import type { LogStore } from './catalog/log-store.js';
import type { DocumentInfo } from './catalog/entries.js';
import { FormatMismatchError, NotFoundError } from './errors.js';
import type { Liveness } from './bytes/gc.js';
import type { Durability, PutMeta } from './options.js';
import type { ChunkEvent, ChunkStream, StreamResult } from './put.js';
import type { KnownChunks } from './ingest/known-chunks.js';
import type { ExtractCaps, Extracted } from './extract/caps.js';
import type { ExtractKind } from './extract/kind.js';
import { prepareStatements } from './catalog/statements.js';
import type { Sealing } from './encryption/sealing.js';

export const FORMAT_NAME = 'kura-store';
/** The newest store format this Kura reads: 2, an encrypted store (FORMAT.md §17.3). */
export const FORMAT_VERSION = 2;
/** What a plain store's configuration says (unchanged by encryption). */
export const PLAIN_FORMAT_VERSION = 1;

export interface StoreBackends {
  db: SqlDatabase;
  /**
   * The keyword index, opened once the catalog is migrated and at the log's head: a store of
   * files keeps it in a file of its own, written on a thread of its own (node/search-file.ts).
   * Absent: a table of `db`'s own, written on the store's thread (search/index-writer.ts).
   */
  searchIndex?: (readonly: boolean) => SearchIndex;
  packs: PackStore;
  /** The configuration object, log and checkpoints (FORMAT.md §15). */
  log: LogStore;
  /**
   * Called once a store opened for writing is open (schema made or migrated, database at the
   * log's head): what the database writes from then on is the store's own work; `created` when
   * the store was made just now (a bulk load follows: every use but a bare `kura init`).
   */
  opened?: (how: { created: boolean }) => void;
  /** Called when the store closes, after everything else (releases the writer lock). */
  release?: () => void | Promise<void>;
  /** Turns a string `put` input (a file path) into bytes; absent where there are no files. */
  openPath?: (path: string) => ByteSource;
  /** Document SHA-256 for puts and reads (default: the platform default of @kura/core). */
  documentHasher?: DocumentHasherChoice;
  /** Applies the durability mode to the database (e.g. PRAGMA synchronous). */
  setDurability?: (d: Durability) => void;
  /**
   * A new, empty database of the platform's, private to the caller and gone once closed:
   * verify replays the log into one to compare with `db` (decision 0073). Absent: not compared.
   */
  scratchDb?: () => SqlDatabase;
  /** An encrypted store's objects under keys/ that are not key files (verify reports them as damage). */
  damagedKeys?: () => Promise<{ id: string; message: string }[]>;
  /**
   * This writer's id and whether another writer is alive (FORMAT.md §5), where several
   * processes may write one store; absent: one writer (this one) at a time.
   */
  writer?: Liveness;
  /**
   * On an object store whose objects are this machine's files (an encrypted store in a local
   * directory): reading its data is as cheap as a local store's, so `verify` reads it by default.
   */
  dataOnDisk?: boolean;
  /** On an object store: how far its clock is ahead of this process's (GC's guard, decision 0041). */
  clockOffsetMs?: () => number | undefined;
  /**
   * On an object store: who holds the GC lease — the cache directory's id, kept across restarts,
   * so a server killed while collecting takes its lease back when it starts again (decision 0041).
   */
  gcHolder?: string;
  /** Byte work off this thread, where the platform has workers (IngestWorkers). */
  ingest?: IngestWorkers;
  /** Where documents' text is extracted (decision 0035); absent: on this thread. */
  extractor?: TextExtractor;
  /** An encrypted store's keys and sealed forms (FORMAT.md §17); absent: a plain store. */
  sealing?: Sealing;
  /**
   * Settles once the backends may be written: on an object store, the conditional-create probe
   * run beside the open's reads (objects/probe.ts); a rejection refuses the store.
   */
  ready?: Promise<void>;
}

/** Extracts the text of PDF, DOCX and HTML documents for search (decision 0035); never throws. */
export interface TextExtractor {
  extract(kind: ExtractKind, bytes: Uint8Array, caps: ExtractCaps): Promise<Extracted>;
  close(): Promise<void>;
}

/**
 * A platform's ingest workers as the store's puts use them: the chunk stream of a put's input
 * computed on a worker, or undefined when this thread ingests it (small inputs, inputs the
 * workers cannot read, no workers). Leased on first use, let go when the store closes.
 */
export interface IngestWorkers {
  /** `known`: the store's known-chunks table, made on first call (only a put on a worker needs it). */
  stream(input: PutInput, options: IngestOptions, known: () => KnownChunks | undefined): ChunkStream | undefined;
  close(): void;
}

export interface StoreStats {
  /** Paths, and puts without a path (decision 0025). */
  entries: number;
  /** Distinct documents the entries show. */
  documents: number;
  /** Sum of the sizes of the documents the entries show (one per entry). */
  logicalBytes: number;
  /** Documents the store keeps: those entries show, older versions, snapshots' files (as verify counts them). */
  keptDocuments: number;
  /** The bytes of everything kept as a user sees it: every entry, every older version, every file of every snapshot. */
  keptBytes: number;
  /** Raw bytes of the distinct chunks documents use. */
  uniqueChunkBytes: number;
  /** Bytes those chunks take in packs (payloads and record headers). */
  storedBytes: number;
  /** Bytes of all pack files, garbage included (what GC can shrink). */
  packBytes: number;
  chunks: number;
  packs: number;
  /** keptBytes / uniqueChunkBytes (1 when empty): what deduplication saves over everything kept. */
  dedupRatio: number;
  /** uniqueChunkBytes / storedBytes (1 when empty). */
  compressionRatio: number;
}

export interface StoreConfig {
  formatVersion: number;
  /** An encrypted store (FORMAT.md §17): its chunking seed is secret. */
  encrypted: boolean;
  storeId: string;
  chunking: ResolvedChunkParams;
  compression: number | false;
  /** Default durability of sessions that do not choose one. */
  durability: Durability;
  createdAt: string;
}

/** Bytes, a stream, a Blob (a browser's File), or where files exist a file's path. */
export type PutInput = ByteSource | Blob | string;

/** A document an ingest worker produced whole: its chunks in order, digest and size (`putReady`). */
export interface ReadyInput {
  chunks: IngestChunk[];
  /** `head`: the document's first bytes, for the search index (text-heads.ts). */
  result: StreamResult;
  meta?: PutMeta | undefined;
  onChunk?: ((chunk: ChunkEvent) => void) | undefined;
}

export interface DocumentHead {
  digest: Digest;
  size: number;
  path: string | null;
  mediaType: string | null;
}

export interface DocumentReader extends DocumentHead {
  /** The whole document, checked against its digest before it is returned. */
  bytes(): Promise<Uint8Array>;
  /** Byte pieces, each chunk checked against its key; ends with CORRUPT_DATA on damage. */
  stream(): AsyncIterable<Uint8Array>;
  /** Bytes [start, end), reading only the chunks that hold them. */
  range(start: number, end: number): AsyncIterable<Uint8Array>;
}

export interface VersionInfo {
  path: string;
  version: number;
  digest: Digest;
  size: number;
  createdAt: string;
  /** Kept whatever a retention policy says (`kura pin path@N`). */
  pinned: boolean;
}

export interface ListResult {
  items: DocumentInfo[];
  /** Pass as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
}

/** The configuration a store's database holds (its `config` rows, FORMAT.md §7, §15.1). */
export function readConfig(db: SqlDatabase): StoreConfig {
  const st = prepareStatements(db);
  const c = new Map(st.configAll.all().map((r) => [r.key, r.value]));
  if (c.get('format') !== FORMAT_NAME) throw new NotFoundError('not a Kura store (no store configuration)');
  const version = Number(c.get('format_version'));
  if (version > FORMAT_VERSION) {
    throw new FormatMismatchError(`this store is format ${version}; this Kura reads up to ${FORMAT_VERSION}: upgrade Kura`, String(FORMAT_VERSION), String(version));
  }
  const level = c.get('compression_level');
  return withJson({
    formatVersion: version,
    storeId: c.get('store_id') ?? '',
    chunking: resolveChunkParams({ avg: Number(c.get('chunk_avg')), seed: BigInt(c.get('chunk_seed') ?? '0') }),
    compression: level === 'none' || level === undefined ? false : Number(level),
    durability: c.get('durability') === 'full' ? 'full' : 'normal',
    createdAt: c.get('created_at') ?? '',
    encrypted: c.has('encryption'),
  });
}

/**
 * The configuration with a `toJSON` (not enumerable: spreading and comparing see the fields
 * alone) that writes it as GET /v1/config does: the seed, a 64-bit integer, as a decimal
 * string, and an encrypted store's left out — it is secret (FORMAT.md §17.3). Without it
 * `JSON.stringify(store.config)` threw ("Do not know how to serialize a BigInt"), and a
 * logger that turned bigints into strings would have written an encrypted store's seed.
 */
function withJson(config: StoreConfig): StoreConfig {
  const { seed, ...chunking } = config.chunking;
  const json = { ...config, chunking: { ...chunking, ...(config.encrypted ? {} : { seed: seed.toString() }) } };
  return Object.defineProperty(config, 'toJSON', { value: () => json, enumerable: false });
}
