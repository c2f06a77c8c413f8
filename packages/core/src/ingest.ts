/**
 * The fused ingest kernel, the hot path of every put: per input piece, one wasm call finds
 * the chunk boundaries, each completed chunk's BLAKE3 key and (when asked) its zstd frame or
 * raw bytes, and advances the document's SHA-256.
 *
 * The document digest may instead come from a native hasher (node:crypto uses SHA-NI, ~10x
 * the wasm speed); the Node entry point makes that the default there, the wasm path stays
 * the portable one (browsers, or `documentHasher: 'wasm'`).
 */
import { assertBytes, toHex } from './bytes.js';
import { InvalidInputError, InvalidStateError } from './errors.js';
import { CODEC_RAW, DEFAULT_LEVEL, assertLevel, type CodecId } from './compress.js';
import { Sha256, type Digest } from './hash.js';
import { resolveChunkParams, seedWords, type ChunkParams, type ResolvedChunkParams } from './params.js';
import { pieces, type ByteSource } from './source.js';
import { BLOCK, check, copyIn, copyOut, forEachBlock, memory, wasm } from './wasm/instance.js';
import type { GroupBuffer } from './group-buffer.js';

const EMPTY = new Uint8Array(0);

/** A SHA-256 implementation outside wasm (e.g. node:crypto). */
export interface DocumentHasher {
  update(data: Uint8Array): void;
  /** The 32-byte digest. */
  digest(): Uint8Array;
}

export type DocumentHasherChoice = 'wasm' | (() => DocumentHasher);

export interface IngestOptions {
  chunking?: ChunkParams | ResolvedChunkParams;
  /** zstd level for payloads, or `false` to emit raw chunk bytes. Default 3. */
  compression?: number | false;
  /** Who computes the document SHA-256. Default: the platform's fastest (see above). */
  documentHasher?: DocumentHasherChoice;
  /**
   * An encrypted store's chunk-names key (FORMAT.md §17.4, 32 bytes): chunk keys are BLAKE3
   * keyed under it instead of plain BLAKE3. Boundaries, payloads and the digest are unchanged.
   */
  chunkNameKey?: Uint8Array;
}

export interface IngestChunk {
  /** Offset of the chunk in the document. */
  offset: number;
  length: number;
  /** BLAKE3-256 of the raw chunk bytes, 64 lowercase hex. */
  key: string;
  /** How `payload` is encoded: CODEC_RAW (the chunk bytes) or CODEC_ZSTD (one zstd frame). */
  codec: CodecId;
  payload: Uint8Array;
}

/**
 * A chunk of `Ingester.updateDeferred`/`finishDeferred`: its raw bytes are still in wasm memory
 * (`payload` is empty) as record `record` of that call, until the next call on the ingester.
 */
export interface DeferredChunk extends IngestChunk {
  record: number;
}

export interface IngestResult {
  digest: Digest;
  size: number;
  chunks: number;
}

let defaultHasher: DocumentHasherChoice = 'wasm';

/**
 * A SHA-256 hasher for whole documents: the given choice, else the platform default (Node:
 * node:crypto; elsewhere wasm). Readers verifying documents use the same one as writers.
 */
export function createDocumentHasher(choice?: DocumentHasherChoice): DocumentHasher {
  const c = choice ?? defaultHasher;
  if (c !== 'wasm') return c();
  const h = new Sha256();
  return {
    update: (d) => void h.update(d),
    digest: () => {
      const hex = h.digest().slice(7);
      const out = new Uint8Array(32);
      for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
      return out;
    },
  };
}

/** Sets the document hasher used when `IngestOptions.documentHasher` is not given. */
export function setDefaultDocumentHasher(choice: DocumentHasherChoice): void {
  defaultHasher = choice;
}

const FLAG_COMPRESS = 1;
const FLAG_NO_DOCUMENT_HASH = 2;
const FLAG_KEYED = 4;
/** u32 words per record: [length, codec, payloadPtr, payloadLen, key × 8] (ffi.rs). */
const RECORD_WORDS = 12;

const registry = new FinalizationRegistry<number>((h) => wasm().kura_ingest_free(h));

/**
 * Set while `ingest` makes an ingester it disposes before it returns: such an ingester is not
 * registered for finalization (a registration and an unregistration per small put, and a
 * weak cell for the collector to visit, measurably slowed 1 KB puts at 32 in flight).
 */
let disposedByCaller = false;

export class Ingester {
  readonly params: ResolvedChunkParams;
  #handle: number;
  #tracked: boolean;
  #external: DocumentHasher | undefined;
  #offset = 0;
  #count = 0;
  #result: IngestResult | undefined;
  /** Records of the last call (deferred chunks name them). */
  #last = 0;
  readonly #compresses: boolean;

  constructor(options: IngestOptions = {}) {
    this.params = resolveChunkParams(options.chunking as ChunkParams);
    const level = options.compression === undefined ? DEFAULT_LEVEL : options.compression;
    if (level !== false) assertLevel(level);
    this.#compresses = level !== false;
    const hasher = options.documentHasher ?? defaultHasher;
    this.#external = hasher === 'wasm' ? undefined : hasher();
    const nameKey = options.chunkNameKey;
    if (nameKey !== undefined) {
      assertBytes(nameKey, 'chunkNameKey');
      if (nameKey.length !== 32) throw new InvalidInputError('chunkNameKey must be 32 bytes', 'chunkNameKey');
      copyIn(nameKey); // the kernel reads it from the input region
    }
    const flags = (level === false ? 0 : FLAG_COMPRESS) | (this.#external ? FLAG_NO_DOCUMENT_HASH : 0) | (nameKey ? FLAG_KEYED : 0);
    const p = this.params;
    const h = wasm().kura_ingest_new(p.min, p.avg, p.max, ...seedWords(p), level === false ? 0 : level, flags);
    if (h === 0) check(-wasm().kura_last_error(), 'Ingester');
    this.#handle = h;
    this.#tracked = !disposedByCaller;
    if (this.#tracked) registry.register(this, h, this);
  }

  /** Feeds bytes; returns the chunks they completed, in order. */
  update(data: Uint8Array): IngestChunk[] {
    const out: IngestChunk[] = [];
    this.#update(data, out, false);
    return out;
  }

  /**
   * As `update`, for a kernel that does not compress (`compression: false`), but the chunks'
   * bytes stay in wasm memory until the next call: each is taken by `groupRecord` or copied
   * by `payloadOf` before then, or not at all. A grouper of new chunks (the store's) saves a
   * copy out and an allocation per chunk, and the copy back in to compress them.
   */
  updateDeferred(data: Uint8Array): DeferredChunk[] {
    if (this.#compresses) throw new InvalidStateError('Ingester.updateDeferred needs compression: false');
    // One kernel call: a second one would overwrite the first's records.
    if (data.length > BLOCK) throw new InvalidInputError(`Ingester.updateDeferred takes at most ${BLOCK} bytes a call`, 'data');
    const out: DeferredChunk[] = [];
    this.#update(data, out, true);
    return out;
  }

  /** Ends the document: returns the last chunks; `result` is set afterwards. */
  finish(): IngestChunk[] {
    const out: IngestChunk[] = [];
    try {
      this.#finish(out, false);
    } finally {
      this.dispose();
    }
    return out;
  }

  /**
   * As `finish`, with the chunks deferred as `updateDeferred`'s: the ingester stays alive for
   * `groupRecord`/`payloadOf` until the caller disposes of it.
   */
  finishDeferred(): DeferredChunk[] {
    if (this.#compresses) throw new InvalidStateError('Ingester.finishDeferred needs compression: false');
    const out: DeferredChunk[] = [];
    this.#finish(out, true);
    return out;
  }

  /** A copy of the raw bytes of record `record` of the last deferred call. */
  payloadOf(record: number): Uint8Array {
    const w = this.#recordWords(record);
    return copyOut(w[2]!, w[3]!);
  }

  /** Appends the raw bytes of record `record` of the last deferred call to `group`, in wasm memory. */
  groupRecord(group: GroupBuffer, record: number): void {
    this.#recordWords(record); // (the kernel checks it too; this says which call)
    group.grew(check(wasm().kura_group_add_record(group.handle(), this.live(), record), 'Ingester.groupRecord'));
  }

  #update(data: Uint8Array, out: IngestChunk[], deferred: boolean): void {
    assertBytes(data, 'data');
    const h = this.live();
    this.#last = 0;
    if (data.length === 0) return;
    this.#external?.update(data);
    forEachBlock(data, (len) => {
      this.read(h, check(wasm().kura_ingest_update(h, len), 'Ingester.update'), out, deferred);
    });
  }

  #finish(out: IngestChunk[], deferred: boolean): void {
    const h = this.live();
    this.#last = 0;
    this.read(h, check(wasm().kura_ingest_finish(h), 'Ingester.finish'), out, deferred);
    const digest = this.#external ? this.#external.digest() : copyOut(wasm().kura_ingest_digest(h), 32);
    this.#result = { digest: `sha256:${toHex(digest)}`, size: this.#offset, chunks: this.#count };
  }

  /** The record's words, checked to be of the last call. */
  #recordWords(record: number): Uint32Array {
    if (!Number.isInteger(record) || record < 0 || record >= this.#last) throw new InvalidStateError(`Ingester: record ${record} is not of the last call`);
    const ptr = wasm().kura_ingest_records(this.live()) >>> 0;
    return new Uint32Array(wasm().memory.buffer, ptr + record * RECORD_WORDS * 4, RECORD_WORDS);
  }

  /** Digest, size and chunk count, once `finish` has returned. */
  get result(): IngestResult | undefined {
    return this.#result;
  }

  dispose(): void {
    if (this.#handle === 0) return;
    if (this.#tracked) registry.unregister(this);
    wasm().kura_ingest_free(this.#handle);
    this.#handle = 0;
  }

  private read(h: number, count: number, out: IngestChunk[], deferred = false): void {
    this.#last = count;
    if (count === 0) return;
    const ptr = wasm().kura_ingest_records(h);
    const words = new Uint32Array(wasm().memory.buffer, ptr, count * RECORD_WORDS);
    const mem = memory();
    for (let i = 0; i < count; i++) {
      const w = i * RECORD_WORDS;
      const length = words[w]!;
      const keyAt = ptr + (w + 4) * 4;
      const key = toHex(mem.subarray(keyAt, keyAt + 32));
      if (deferred) out.push({ offset: this.#offset, length, key, codec: CODEC_RAW, payload: EMPTY, record: i } as DeferredChunk);
      else out.push({ offset: this.#offset, length, key, codec: words[w + 1] === CODEC_RAW ? CODEC_RAW : 1, payload: copyOut(words[w + 2]!, words[w + 3]!) });
      this.#offset += length;
      this.#count++;
    }
  }

  private live(): number {
    if (this.#handle === 0) throw new InvalidStateError('Ingester already finished');
    return this.#handle;
  }
}

/** Bytes at hand up to this size are ingested whole before the first chunk is yielded. */
const WHOLE_MAX = 1 << 20;

/**
 * Ingests a streamed document: yields every chunk as soon as its boundary is final and
 * returns `{ digest, size, chunks }` (the generator's return value).
 */
export async function* ingest(
  source: ByteSource,
  options?: IngestOptions,
): AsyncGenerator<IngestChunk, IngestResult, undefined> {
  if (source instanceof Uint8Array && source.length <= WHOLE_MAX) {
    // At most a MiB already in memory: all at once, with no piece generator and an ingester
    // that is gone before anything is yielded (nothing for a finalizer to clean up).
    disposedByCaller = true;
    let ingester: Ingester;
    try {
      ingester = new Ingester(options);
    } finally {
      disposedByCaller = false;
    }
    let chunks: IngestChunk[];
    try {
      chunks = ingester.update(source);
      chunks.push(...ingester.finish());
    } finally {
      ingester.dispose();
    }
    yield* chunks;
    return ingester.result!;
  }
  const ingester = new Ingester(options);
  try {
    for await (const piece of pieces(source)) {
      yield* ingester.update(piece);
    }
    yield* ingester.finish();
    return ingester.result!;
  } finally {
    ingester.dispose();
  }
}
