/**
 * Chunk-level sync (FORMAT.md §12): a client that chunks locally with the store's parameters
 * asks which chunk keys the store lacks, uploads only those, then commits a document as the
 * list of its chunk keys. The store re-hashes every uploaded chunk, and re-reads and hashes
 * the reassembled bytes at commit, so a client can never make a document name bytes it lacks.
 */
import { CODEC_RAW, CODEC_ZSTD, InvalidInputError, blake3, compress, createDocumentHasher, keyedHash, toHex, type Digest } from '@kura/core';
import { DigestMismatchError, MissingChunksError } from '../errors.js';
import { hexToBytes } from '../hex.js';
import type { ChunkLocation } from './pack-record.js';
import type { ChunkStream, PutContext } from '../put.js';
import type { Reader } from './read.js';

/** Most keys one missing-chunks query or one commit may name. */
export const MAX_SYNC_KEYS = 1_000_000;
/** How long an uploaded chunk is kept for its commit (GC leaves it alone until then). */
export const DEFAULT_HOLD_MS = 24 * 60 * 60 * 1000;

const KEY = /^[0-9a-f]{64}$/;

export function checkKeys(keys: unknown, field: string): string[] {
  if (!Array.isArray(keys)) throw new InvalidInputError(`${field} must be an array of chunk keys`, field);
  if (keys.length > MAX_SYNC_KEYS) throw new InvalidInputError(`${field}: at most ${MAX_SYNC_KEYS} keys`, field);
  keys.forEach((k, i) => {
    if (typeof k !== 'string' || !KEY.test(k)) throw new InvalidInputError(`${field}[${i}] is not a chunk key (64 lowercase hex digits)`, `${field}[${i}]`);
  });
  return keys as string[];
}

/** True when the store has an undamaged copy of the chunk. */
function present(ctx: PutContext, key: string): boolean {
  const row = ctx.st.chunkShareable.get(hexToBytes(key));
  return row !== undefined && !row.damaged;
}

/** The keys, in first-seen order without repeats, that the store has no good copy of. */
export function missingChunks(ctx: PutContext, keys: string[]): string[] {
  const seen = new Set<string>();
  const missing: string[] = [];
  for (const k of keys) {
    if (seen.has(k)) continue;
    seen.add(k);
    if (!present(ctx, k)) missing.push(k);
  }
  return missing;
}

export interface ChunkPutResult {
  key: string;
  /** False when the store already had the chunk. */
  stored: boolean;
}

/**
 * Stores one chunk of raw bytes under its BLAKE3 key, held for a later commit until
 * `holdUntil`. `expectKey`, when given, must be the bytes' key (else DIGEST_MISMATCH, nothing
 * stored).
 */
export async function putChunk(ctx: PutContext, bytes: Uint8Array, expectKey: string | undefined, holdUntil: number): Promise<ChunkPutResult> {
  if (!(bytes instanceof Uint8Array)) throw new InvalidInputError('chunk must be bytes', 'chunk');
  if (bytes.length === 0) throw new InvalidInputError('a chunk is never empty', 'chunk');
  if (bytes.length > ctx.chunking.max) {
    throw new InvalidInputError(`a chunk is at most ${ctx.chunking.max} bytes in this store; this one is ${bytes.length}`, 'chunk');
  }
  const key = ctx.chunkNameKey ? toHex(keyedHash(ctx.chunkNameKey, bytes)) : blake3(bytes);
  if (expectKey !== undefined && expectKey !== key) throw new DigestMismatchError(`the chunk hashes to ${key}, not ${expectKey}`, expectKey, key);
  const { writer, st } = ctx;
  const k = hexToBytes(key);
  writer.putStarted();
  const release: (() => void)[] = [];
  try {
    // Check and pin without an await in between (writer.ts): GC cannot take it from here on.
    const row = st.chunkShareable.get(k);
    writer.pin(key);
    release.push(() => writer.unpin(key));
    if (row && !row.damaged) {
      await writer.commit([{ op: 'hold', key, until: holdUntil }]);
      return { key, stored: false };
    }
    const payload = ctx.compression === false ? undefined : compress(bytes, ctx.compression);
    const loc: ChunkLocation = {
      key,
      rawLen: bytes.length,
      codec: payload && payload.length < bytes.length ? CODEC_ZSTD : CODEC_RAW,
      storedLen: 0,
    };
    const body = loc.codec === CODEC_ZSTD ? payload! : bytes;
    loc.storedLen = body.length;
    if (row) {
      // Damaged: this upload carries good bytes; the row is repointed at the fresh copy.
      const { chunk } = await writer.appendCopy(loc, body);
      writer.usePack(chunk.packId);
      release.push(() => writer.releasePack(chunk.packId));
      await writer.commit([{ op: 'hold', key, until: holdUntil, chunk: writer.placeOf(chunk), repair: true }]);
      return { key, stored: true };
    }
    const { chunk, written } = await writer.append(loc, body);
    writer.usePack(chunk.packId);
    release.push(() => writer.releasePack(chunk.packId));
    if (written) release.push(() => writer.settle(key));
    await writer.commit([{ op: 'hold', key, until: holdUntil, chunk: writer.placeOf(chunk) }]);
    return { key, stored: written };
  } finally {
    release.forEach((r) => r());
    writer.putEnded();
  }
}

/**
 * The chunk stream of a document assembled from stored chunks: every key is checked present
 * first (all missing ones reported at once), pinned against GC, read back through the
 * checked path and hashed, so the digest is of the bytes the store really holds.
 */
export async function* storedChunks(ctx: PutContext, reader: Reader, keys: string[], maxSize = Infinity): ChunkStream {
  const missing = missingChunks(ctx, keys);
  if (missing.length) throw new MissingChunksError(missing);
  // Pinned in the same synchronous step as the check above.
  keys.forEach((k) => ctx.writer.pin(k));
  try {
    const hasher = createDocumentHasher(ctx.documentHasher);
    let offset = 0;
    for (const key of keys) {
      const raw = await reader.chunk(key);
      if (offset + raw.length > maxSize) throw new InvalidInputError(`the document these chunks make is over the limit of ${maxSize} bytes`, 'size');
      hasher.update(raw);
      // The payload is only written if the row vanished meanwhile (it cannot while pinned).
      yield { offset, length: raw.length, key, codec: CODEC_RAW, payload: raw };
      offset += raw.length;
    }
    return { digest: `sha256:${toHex(hasher.digest())}` as Digest, size: offset, chunks: keys.length };
  } finally {
    keys.forEach((k) => ctx.writer.unpin(k));
  }
}
