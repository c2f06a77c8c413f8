/** Byte layouts of pack files (docs/FORMAT.md §6): the pack header and chunk records. */
import { CODEC_RAW, CODEC_ZSTD, CorruptDataError } from '@kura/core';
import { bytesToHex, hexInto } from '../hex.js';

export const PACK_MAGIC = new TextEncoder().encode('KURAPACK');
export const PACK_VERSION = 1;
export const PACK_HEADER_SIZE = 16;
export const RECORD_MAGIC = new TextEncoder().encode('KCHK');
export const RECORD_HEADER_SIZE = 48;

export function packHeader(): Uint8Array {
  const h = new Uint8Array(PACK_HEADER_SIZE);
  h.set(PACK_MAGIC, 0);
  new DataView(h.buffer).setUint32(8, PACK_VERSION, true);
  return h;
}

export interface ChunkLocation {
  key: string;
  codec: number;
  rawLen: number;
  storedLen: number;
}

/**
 * A record's 48-byte header; the payload follows it in the pack. Writes into `into` when
 * given (a buffer reused across records: appends are synchronous).
 */
export function recordHeader(c: ChunkLocation, into: Uint8Array = new Uint8Array(RECORD_HEADER_SIZE)): Uint8Array {
  into.set(RECORD_MAGIC, 0);
  into[4] = c.codec;
  into[5] = into[6] = into[7] = 0;
  const dv = new DataView(into.buffer, into.byteOffset, RECORD_HEADER_SIZE);
  dv.setUint32(8, c.rawLen, true);
  dv.setUint32(12, c.storedLen, true);
  hexInto(c.key, into, 16);
  return into;
}

/**
 * Checks a record read from a pack against what the database says it is and returns its
 * payload. Any difference is damage.
 */
export function checkRecord(rec: Uint8Array, expected: ChunkLocation, where: string): Uint8Array {
  const fail = (what: string) =>
    new CorruptDataError(`chunk ${expected.key} at ${where}: ${what}`, 'pack-record', { key: expected.key });
  if (rec.length < RECORD_HEADER_SIZE + expected.storedLen) {
    throw fail(`record truncated (${rec.length} of ${RECORD_HEADER_SIZE + expected.storedLen} bytes)`);
  }
  for (let i = 0; i < 4; i++) if (rec[i] !== RECORD_MAGIC[i]) throw fail('bad record magic');
  const dv = new DataView(rec.buffer, rec.byteOffset, rec.byteLength);
  const codec = rec[4]!;
  if (codec !== expected.codec || (codec !== CODEC_RAW && codec !== CODEC_ZSTD)) throw fail(`codec ${codec}`);
  if (dv.getUint32(8, true) !== expected.rawLen) throw fail('raw length differs from the index');
  if (dv.getUint32(12, true) !== expected.storedLen) throw fail('stored length differs from the index');
  if (bytesToHex(rec.subarray(16, 48)) !== expected.key) throw fail('key differs from the index');
  return rec.subarray(RECORD_HEADER_SIZE, RECORD_HEADER_SIZE + expected.storedLen);
}
