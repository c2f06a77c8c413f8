/**
 * How records and indexes lie in a store's packs: as FORMAT.md §6 writes them, or sealed
 * (§17.5, an encrypted store). The writer, the read path, verify and GC's compaction go through
 * one of these two, so neither knows which kind of store it works on; inside a sealed record is
 * a §6 record, checked as ever once opened.
 */
import { CorruptDataError } from '@kura/core';
import type { PackWriter } from '../backend/packs.js';
import { bytesToHex } from '../hex.js';
import type { Sealing } from '../encryption/sealing.js';
import { SEALED_INDEX_END, SEALED_RECORD_OVERHEAD } from '../encryption/sealing.js';
import {
  INDEX_END,
  PACK_SEALED,
  RECORD_HEADER_SIZE,
  decodePackIndex,
  packHeader,
  recordHeader,
  type ChunkLocation,
  type PackIndexBuilder,
  type PackIndexEntry,
} from './pack-record.js';

export interface RecordCodec {
  /**
   * Whether packs are sealed (an encrypted store, FORMAT.md §17.5): their headers' flags are
   * PACK_SEALED (else 0), and every one ends with its sealed index — an encrypted store lives as
   * objects, and a pack object is uploaded whole once its index is appended (object-packs.ts),
   * never left by a writer that died without one.
   */
  readonly sealed: boolean;
  /** The flags of this store's pack headers (FORMAT.md §6): 0, or PACK_SEALED. */
  readonly flags: number;
  /** Bytes a record with `storedLen` bytes of payload takes in a pack. */
  recordSize(storedLen: number): number;
  /** A new pack's first bytes (version 3; flags 1 when sealed). */
  packHeader(): Uint8Array;
  /**
   * Appends the record of `c` to `writer` and answers its offset; `header` receives the §6
   * header (a buffer reused across records: its bytes go to the pack's index).
   */
  append(writer: PackWriter, c: ChunkLocation, payload: Uint8Array, header: Uint8Array): number;
  /** The §6 record in `bytes`, read whole at `offset` of pack `pack` (CORRUPT_DATA when it is not one). */
  plain(pack: string, offset: number, bytes: Uint8Array, key?: string): Uint8Array;
  /** Appends a group record (§6.2: `head`, its header and member table, then `frame`) and answers its offset. */
  appendGroup(writer: PackWriter, head: Uint8Array, frame: Uint8Array): number;
  /** Appends a §6 record read from another pack (GC's compaction) and answers its offset. */
  appendPlain(writer: PackWriter, record: Uint8Array): number;
  /** A sealed pack's index, for its tail. */
  index(pack: string, builder: PackIndexBuilder): Uint8Array;
  /** The magic a pack's last four bytes hold when it has an index (after the index's length, u32). */
  readonly indexEnd: Uint8Array;
  /**
   * The index in `tail` (the pack's last bytes, the whole index at least), or undefined when it
   * has none (a plain pack only: a sealed pack without one is CORRUPT_DATA, `sealed`).
   */
  readIndex(tail: Uint8Array, pack: string): PackIndexEntry[] | undefined;
}

/** FORMAT.md §6: records and indexes as they are. */
export const PLAIN_RECORDS: RecordCodec = {
  sealed: false,
  flags: 0,
  recordSize: (storedLen) => RECORD_HEADER_SIZE + storedLen,
  packHeader,
  append: (writer, c, payload, header) => writer.append(recordHeader(c, header), payload),
  appendGroup: (writer, head, frame) => writer.append(head, frame),
  plain: (_pack, _offset, bytes) => bytes,
  appendPlain: (writer, record) => writer.append(record),
  index: (_pack, builder) => builder.encode(),
  indexEnd: INDEX_END,
  readIndex: decodePackIndex,
};


/** FORMAT.md §17.5: every record sealed to its pack and offset, the index to its pack. */
export function sealedRecords(sealing: Sealing): RecordCodec {
  const appendSealed = (writer: PackWriter, parts: readonly Uint8Array[]) => {
    // Appends are contiguous: the record starts where the pack ends now (its sealed place).
    const offset = writer.size;
    const at = writer.append(sealing.sealRecord(writer.name, offset, parts));
    if (at !== offset) throw new RangeError(`pack ${writer.name}: a record meant for ${offset} was appended at ${at}`);
    return offset;
  };
  return {
    sealed: true,
    flags: PACK_SEALED,
    recordSize: (storedLen) => SEALED_RECORD_OVERHEAD + RECORD_HEADER_SIZE + storedLen,
    packHeader: () => packHeader(PACK_SEALED),
    append: (writer, c, payload, header) => appendSealed(writer, [recordHeader(c, header), payload]),
    appendGroup: (writer, head, frame) => appendSealed(writer, [head, frame]),
    plain: (pack, offset, bytes, key) => sealing.openRecord(pack, offset, bytes, key),
    appendPlain: (writer, record) => appendSealed(writer, [record]),
    index: (pack, builder) => sealing.sealIndex(pack, builder.encode()),
    indexEnd: SEALED_INDEX_END,
    readIndex: (tail, pack) => {
      // Every sealed pack has one (`sealed`): its "KSND" changed was read as a pack without (a trial).
      const end = tail.subarray(Math.max(0, tail.length - SEALED_INDEX_END.length));
      if (!SEALED_INDEX_END.every((b, i) => end[i] === b)) throw new CorruptDataError(`pack ${pack}: it ends with ${bytesToHex(end)} where its sealed index's "KSND" should be (every pack of an encrypted store ends with one)`, 'pack-index');
      const index = sealing.openIndex(pack, tail);
      if (!index) throw new CorruptDataError(`pack ${pack}: its sealed index is cut (${tail.length} bytes)`, 'pack-index');
      return decodePackIndex(index, pack);
    },
  };
}
