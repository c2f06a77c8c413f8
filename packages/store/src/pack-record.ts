/** Byte layouts of pack files (docs/FORMAT.md §6): the pack header and chunk records. */
import { CODEC_RAW, CODEC_ZSTD, CorruptDataError } from '@kura/core';
import { hexToBytes, bytesToHex } from './hex.js';

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

/** A record: header followed by the payload, ready to append. */
export function encodeRecord(c: ChunkLocation, payload: Uint8Array): Uint8Array {
  const rec = new Uint8Array(RECORD_HEADER_SIZE + payload.length);
  rec.set(RECORD_MAGIC, 0);
  rec[4] = c.codec;
  const dv = new DataView(rec.buffer);
  dv.setUint32(8, c.rawLen, true);
  dv.setUint32(12, c.storedLen, true);
  rec.set(hexToBytes(c.key), 16);
  rec.set(payload, RECORD_HEADER_SIZE);
  return rec;
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
