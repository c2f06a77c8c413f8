/**
 * zstd compression per chunk, and decompression bounded by the raw length recorded beside the
 * frame: a frame that is corrupt, truncated, or declares or produces any other length throws
 * `CorruptDataError` and never makes wasm allocate more than `rawLength`.
 */
import { assertBytes, assertInteger } from './bytes.js';
import { InvalidInputError } from './errors.js';
import { check, copyIn, output, wasm } from './wasm/instance.js';

export const LEVEL_MIN = -7;
export const LEVEL_MAX = 22;
export const DEFAULT_LEVEL = 3;
/** One call's input or output must fit wasm's i32 results. */
export const MAX_FRAME_INPUT = 0x7fff_ffff;

/** Codec bytes recorded with every stored chunk (docs/FORMAT.md). */
export const CODEC_RAW = 0;
export const CODEC_ZSTD = 1;
export type CodecId = typeof CODEC_RAW | typeof CODEC_ZSTD;

export function assertLevel(level: unknown): asserts level is number {
  assertInteger(level, 'level', LEVEL_MIN, LEVEL_MAX);
  if (level === 0) throw new InvalidInputError('level must not be 0 (zstd reads it as "default"; say 3)', 'level');
}

/** One zstd frame of `data` (content size in the header, no zstd checksum). */
export function compress(data: Uint8Array, level: number = DEFAULT_LEVEL): Uint8Array {
  assertBytes(data, 'data');
  assertLevel(level);
  assertInteger(data.length, 'data.length', 0, MAX_FRAME_INPUT);
  check(wasm().kura_zstd_compress(level, copyIn(data)), 'compress');
  return output();
}

/**
 * A chunk's stored form, decided as the ingest kernel decides it: one zstd frame when the
 * chunk does not look random and the frame saves at least 1/16, else the raw bytes (the same
 * array). For chunks the kernel emitted raw and a store compresses only once it knows it
 * lacks them (deduplication before compression).
 */
export function encodeChunk(raw: Uint8Array, level: number = DEFAULT_LEVEL): { codec: CodecId; payload: Uint8Array } {
  assertBytes(raw, 'raw');
  assertLevel(level);
  assertInteger(raw.length, 'raw.length', 0, MAX_FRAME_INPUT);
  const n = check(wasm().kura_chunk_encode(level, copyIn(raw)), 'encodeChunk');
  return n === 0 ? { codec: CODEC_RAW, payload: raw } : { codec: CODEC_ZSTD, payload: output() };
}

/** Exactly `rawLength` bytes from `frame`, or `CorruptDataError`. */
export function decompress(frame: Uint8Array, rawLength: number): Uint8Array {
  assertBytes(frame, 'frame');
  assertInteger(rawLength, 'rawLength', 0, MAX_FRAME_INPUT);
  assertInteger(frame.length, 'frame.length', 0, MAX_FRAME_INPUT);
  check(wasm().kura_zstd_decompress(copyIn(frame), rawLength), 'decompress');
  return output();
}
