/** Byte layouts of pack files (docs/FORMAT.md §6): the pack header and chunk records. */
import { CODEC_RAW, CODEC_ZSTD, CorruptDataError } from '@kura/core';
import { sha256Bytes } from '../sha256-bytes.js';
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

/**
 * A sealed pack's index (FORMAT.md §6): every record the pack holds — its offset, codec,
 * lengths and key — appended after the last record when its writer seals it, so the pack's
 * contents can be listed from its tail (one ranged read on an object store) without the
 * database or a scan of the whole file.
 *
 *   "KIDX" | version u32 (= 1) | count u32 | count × entry | SHA-256 of the bytes before it
 *   | length u32 (of the whole index) | "KEND"
 *   entry = offset u64 | codec u8 | 3 bytes 0 | raw_len u32 | stored_len u32 | key 32 bytes
 */
export const INDEX_MAGIC = new TextEncoder().encode('KIDX');
export const INDEX_END = new TextEncoder().encode('KEND');
export const INDEX_VERSION = 1;
export const INDEX_ENTRY_SIZE = 52;
const INDEX_HEAD = 12;
const INDEX_TAIL = 40; // hash, length, end magic

export interface PackIndexEntry extends ChunkLocation {
  offset: number;
}

/**
 * A pack's index, built as its records are appended: each entry's bytes are written at once,
 * with no object kept per record. (An object per record lived until the seal; V8 pretenured
 * its allocation site mid-burst and threw away the optimized append path that had inlined it,
 * twice: 1 KB puts at 32 in flight recompiled `appendNow` three times in their first 0.4 s.)
 */
export class PackIndexBuilder {
  #bytes = new Uint8Array(INDEX_HEAD + 256 * INDEX_ENTRY_SIZE);
  #view = new DataView(this.#bytes.buffer);
  #count = 0;

  get count(): number {
    return this.#count;
  }

  /**
   * Adds the record at `offset` from its header (`recordHeader`'s 48 bytes): an entry is the
   * offset, then the header's bytes after its magic (codec, 3 zero bytes, lengths, key), so
   * nothing is decoded twice.
   */
  add(header: Uint8Array, offset: number): void {
    const at = INDEX_HEAD + this.#count * INDEX_ENTRY_SIZE;
    if (at + INDEX_ENTRY_SIZE > this.#bytes.length) {
      const grown = new Uint8Array(this.#bytes.length * 2);
      grown.set(this.#bytes);
      this.#bytes = grown;
      this.#view = new DataView(grown.buffer);
    }
    // u64 as two u32 halves: a BigInt per record would allocate.
    this.#view.setUint32(at, offset % 0x1_0000_0000, true);
    this.#view.setUint32(at + 4, Math.floor(offset / 0x1_0000_0000), true);
    this.#bytes.set(header.subarray(4, RECORD_HEADER_SIZE), at + 8);
    this.#bytes[at + 9] = this.#bytes[at + 10] = this.#bytes[at + 11] = 0; // (a copied record's own bytes there are not trusted)
    this.#count++;
  }

  /** The whole index, to append after the pack's last record. */
  encode(): Uint8Array {
    const body = INDEX_HEAD + this.#count * INDEX_ENTRY_SIZE;
    const out = new Uint8Array(body + INDEX_TAIL);
    out.set(this.#bytes.subarray(0, body));
    const dv = new DataView(out.buffer);
    out.set(INDEX_MAGIC, 0);
    dv.setUint32(4, INDEX_VERSION, true);
    dv.setUint32(8, this.#count, true);
    out.set(sha256Bytes(out.subarray(0, body)), body);
    dv.setUint32(body + 32, out.length, true);
    out.set(INDEX_END, body + 36);
    return out;
  }
}

/**
 * The index at the end of a pack's bytes (`tail`: the pack's last bytes, at least the whole
 * index), or undefined when the pack has none (an open pack, or one sealed for a writer that
 * died). An index that is there and does not check out is CORRUPT_DATA.
 */
export function decodePackIndex(tail: Uint8Array, pack: string): PackIndexEntry[] | undefined {
  const n = tail.length;
  if (n < INDEX_HEAD + INDEX_TAIL) return undefined;
  for (let i = 0; i < 4; i++) if (tail[n - 4 + i] !== INDEX_END[i]) return undefined;
  const dv = new DataView(tail.buffer, tail.byteOffset, n);
  const length = dv.getUint32(n - 8, true);
  const fail = (what: string) => new CorruptDataError(`pack ${pack}: its index ${what}`, 'pack-index');
  if (length > n || length < INDEX_HEAD + INDEX_TAIL) throw fail(`claims ${length} bytes`);
  const at = n - length;
  const index = tail.subarray(at);
  const body = length - INDEX_TAIL;
  if (bytesToHex(sha256Bytes(index.subarray(0, body))) !== bytesToHex(index.subarray(body, body + 32))) throw fail('does not match its hash');
  for (let i = 0; i < 4; i++) if (index[i] !== INDEX_MAGIC[i]) throw fail('has a bad magic');
  if (dv.getUint32(at + 4, true) !== INDEX_VERSION) throw fail(`has version ${dv.getUint32(at + 4, true)}`);
  const count = dv.getUint32(at + 8, true);
  if (INDEX_HEAD + count * INDEX_ENTRY_SIZE !== body) throw fail(`counts ${count} entries in ${body} bytes`);
  return Array.from({ length: count }, (_, i) => {
    const e = at + INDEX_HEAD + i * INDEX_ENTRY_SIZE;
    return {
      offset: Number(dv.getBigUint64(e, true)),
      codec: tail[e + 8]!,
      rawLen: dv.getUint32(e + 12, true),
      storedLen: dv.getUint32(e + 16, true),
      key: bytesToHex(tail.subarray(e + 20, e + 52)),
    };
  });
}
