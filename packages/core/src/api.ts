/** The public surface of @kura/core, shared by the Node and browser entry points. */
export * from './errors.js';
export { toHex } from './bytes.js';
export { sha256, blake3, Sha256, Blake3, DIGEST_PATTERN, KEY_PATTERN, type Digest } from './hash.js';
export {
  resolveChunkParams,
  DEFAULT_CHUNK_PARAMS,
  AVG_MIN,
  AVG_MAX,
  DEFAULT_AVG,
  type ChunkParams,
  type ResolvedChunkParams,
} from './params.js';
export { chunk, chunkLengths, chunkStream, Chunker, type ChunkSpan } from './chunk.js';
export {
  compress,
  decompress,
  encodeChunk,
  CODEC_RAW,
  CODEC_ZSTD,
  LEVEL_MIN,
  LEVEL_MAX,
  DEFAULT_LEVEL,
  type CodecId,
} from './compress.js';
export {
  ingest,
  Ingester,
  setDefaultDocumentHasher,
  createDocumentHasher,
  type IngestOptions,
  type IngestChunk,
  type IngestResult,
  type DeferredChunk,
  type DocumentHasher,
  type DocumentHasherChoice,
} from './ingest.js';
export { GroupBuffer } from './group-buffer.js';
export { pieces, type ByteSource } from './source.js';
export { VectorRows } from './vectors.js';
export { LineMatcher, type LineMatch } from './grep.js';
export {
  seal,
  unseal,
  argon2id,
  keyedHash,
  deriveKey,
  randomBytes,
  KEY_BYTES,
  NONCE_BYTES,
  TAG_BYTES,
  SEALED_OVERHEAD,
  NATIVE_AEAD_MIN,
  setNativeAead,
  type KdfParams,
  type NativeAead,
} from './crypto.js';
