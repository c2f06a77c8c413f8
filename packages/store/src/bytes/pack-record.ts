/** Byte layouts of pack files (docs/FORMAT.md §6): the pack header and chunk records. */
import { CODEC_RAW, CODEC_ZSTD, CorruptDataError } from '@kura/core';
import { sha256Bytes } from '../sha256-bytes.js';
import { bytesToHex, hexInto } from '../hex.js';

export const PACK_MAGIC = new TextEncoder().encode('KURAPACK');
/** 3: its records may be group records (§6.2); 1, before them, is read the same way. */
export const PACK_VERSION = 3;
/** Pack header flags: records and index sealed (FORMAT.md §17.5). */
export const PACK_SEALED = 1;
export const PACK_HEADER_SIZE = 16;
export const RECORD_MAGIC = new TextEncoder().encode('KCHK');
export const RECORD_HEADER_SIZE = 48;

export function packHeader(flags = 0): Uint8Array {
  const h = new Uint8Array(PACK_HEADER_SIZE);
  h.set(PACK_MAGIC, 0);
  new DataView(h.buffer).setUint32(8, PACK_VERSION, true);
  new DataView(h.buffer).setUint32(12, flags, true);
  return h;
}

/**
 * The versions a pack's header may say (FORMAT.md §6, §17.5): a plain store's packs are 1
 * (before group records) or 3; an encrypted store's (`flags` PACK_SEALED) 2 (before group
 * records) or 3.
 */
export function packVersions(flags: number): readonly number[] {
  return flags & PACK_SEALED ? [2, 3] : [1, 3];
}

/** Whether packs of `version` may hold group records (§6.2): only those written since (3). */
export const holdsGroups = (version: number): boolean => version >= 3;

/**
 * Checks a pack's 16-byte header (`head`) against FORMAT.md §6: the magic, a version its store
 * writes (`packVersions`) and exactly its store's flags (`flags`: 0 plain, PACK_SEALED in an
 * encrypted store; every other bit 0). An encrypted store's header is not inside any seal, so
 * this is all that can be checked of it: a changed byte that leaves an allowed value (3 made 2)
 * reads the same records. Answers the version; CORRUPT_DATA (`pack-header`) naming the pack
 * when the header is not one.
 */
export function checkPackHeader(head: Uint8Array, flags: number, pack: string): number {
  const fail = (what: string) => new CorruptDataError(`pack ${pack}: its header ${what}`, 'pack-header');
  if (head.length < PACK_HEADER_SIZE) throw fail(`is cut (${head.length} of ${PACK_HEADER_SIZE} bytes)`);
  for (let i = 0; i < PACK_MAGIC.length; i++) if (head[i] !== PACK_MAGIC[i]) throw fail("is not a Kura pack's (KURAPACK)");
  const dv = new DataView(head.buffer, head.byteOffset, PACK_HEADER_SIZE);
  const version = dv.getUint32(8, true);
  const versions = packVersions(flags);
  const kind = flags & PACK_SEALED ? 'an encrypted' : 'a plain';
  if (!versions.includes(version)) throw fail(`says version ${version}: ${kind} store's packs are version ${versions.join(' or ')}`);
  const found = dv.getUint32(12, true);
  if (found !== flags) throw fail(`has flags ${found}: ${kind} store's packs have flags ${flags} (FORMAT.md §6${flags & PACK_SEALED ? ', §17.5' : ''})`);
  return version;
}

/** Whether a record read from a pack is a group record (§6.2) rather than a chunk's own (§6). */
export function isGroupRecord(rec: Uint8Array): boolean {
  return rec[0] === GROUP_MAGIC[0] && rec[1] === GROUP_MAGIC[1] && rec[2] === GROUP_MAGIC[2] && rec[3] === GROUP_MAGIC[3];
}

export interface ChunkLocation {
  key: string;
  codec: number;
  rawLen: number;
  storedLen: number;
}

/**
 * The codec a chunk row and an index entry give a member of a group record (FORMAT.md §6.2):
 * its bytes are at `at` in the raw bytes of the group's frame. (Records' own codec bytes are
 * CODEC_RAW or CODEC_ZSTD.)
 */
export const CODEC_GROUP = 2;
export const GROUP_MAGIC = new TextEncoder().encode('KGRP');
/** A group closes once its members' raw bytes reach this (decision 0063). */
export const GROUP_TARGET = 1024 * 1024;
/**
 * A group's raw bytes are fewer than this in a store whose chunks are at most `maxChunk` (a
 * group closes at GROUP_TARGET; its last member is one chunk): readers refuse a larger claim
 * as damage before allocating for it. Its stored length is bounded by its member table (4
 * bytes per member, each at least a byte) and a frame smaller than its raw bytes.
 */
export function groupRawMax(maxChunk: number): number {
  return GROUP_TARGET + maxChunk;
}
export function groupStoredMax(maxChunk: number): number {
  return groupRawMax(maxChunk) * (GROUP_MEMBER_SIZE + 1);
}
/**
 * The pack bytes a chunk's row stands for: its record, or — a group's member — its share of
 * the group record in proportion to its raw bytes, the group taken as GROUP_TARGET raw bytes
 * (an estimate: a put's last group is smaller, and GC frees a group only once all of its
 * members are unreferenced).
 */
export function storedShare(row: { codec: number; raw_len: number; stored_len: number }): number {
  const record = RECORD_HEADER_SIZE + row.stored_len;
  return row.codec === CODEC_GROUP ? Math.ceil((record * row.raw_len) / GROUP_TARGET) : record;
}
/**
 * A group's member table entry: raw_len u32. Members' keys are not kept in the record: a reader
 * hashes a member's bytes against the key its row names (the pack index and the chunk rows name
 * them); 32 bytes a member were ~0.9% of a pack of text and ~4% of one of small files.
 */
export const GROUP_MEMBER_SIZE = 4;

/**
 * The bytes a group record takes after its 48-byte header (its stored length): the member
 * table, then the frame.
 */
export function groupStoredLen(count: number, frameLen: number): number {
  return count * GROUP_MEMBER_SIZE + frameLen;
}

/**
 * A group record's header and member table (FORMAT.md §6.2); the frame follows them:
 *   "KGRP" | codec u8 (1, zstd) | 3 zero | raw_len u32 | stored_len u32 | count u32 | 28 zero
 *   | count × raw_len u32
 */
export function groupHead(members: readonly { length: number }[], rawLen: number, frameLen: number): Uint8Array {
  const head = new Uint8Array(RECORD_HEADER_SIZE + members.length * GROUP_MEMBER_SIZE);
  const dv = new DataView(head.buffer);
  head.set(GROUP_MAGIC, 0);
  head[4] = CODEC_ZSTD;
  dv.setUint32(8, rawLen, true);
  dv.setUint32(12, groupStoredLen(members.length, frameLen), true);
  dv.setUint32(16, members.length, true);
  let at = RECORD_HEADER_SIZE;
  for (const m of members) {
    dv.setUint32(at, m.length, true);
    at += GROUP_MEMBER_SIZE;
  }
  return head;
}

/** Where a group's member is: the group record's location, and the member's place in its raw bytes. */
export interface MemberLocation extends ChunkLocation {
  /** Offset of the member's bytes in the group's raw bytes. */
  at: number;
}

/** A group record as read: its frame, its raw length, and its members' lengths and places. */
export interface GroupRecord {
  frame: Uint8Array;
  rawLen: number;
  members: { length: number; at: number }[];
}

/**
 * Decodes a group record read from a pack (`rec`, at least its header, table and frame) with
 * `storedLen` bytes after its header; `maxRaw` bounds its raw length (a larger claim is damage,
 * refused before anything is allocated for it). Any inconsistency is CORRUPT_DATA.
 */
export function decodeGroupRecord(rec: Uint8Array, storedLen: number, maxRaw: number, where: string, key?: string): GroupRecord {
  const fail = (what: string) => new CorruptDataError(`${key ? `chunk ${key} in the group` : 'group'} at ${where}: ${what}`, 'pack-record', key ? { key } : {});
  if (rec.length < RECORD_HEADER_SIZE + storedLen) throw fail(`record truncated (${rec.length} of ${RECORD_HEADER_SIZE + storedLen} bytes)`);
  for (let i = 0; i < 4; i++) if (rec[i] !== GROUP_MAGIC[i]) throw fail('bad group record magic');
  const dv = new DataView(rec.buffer, rec.byteOffset, rec.byteLength);
  if (rec[4] !== CODEC_ZSTD) throw fail(`codec ${rec[4]}`);
  if (rec[5] || rec[6] || rec[7] || rec.subarray(20, RECORD_HEADER_SIZE).some((b) => b !== 0)) throw fail('reserved bytes are not zero');
  const rawLen = dv.getUint32(8, true);
  if (rawLen > maxRaw) throw fail(`raw length ${rawLen} exceeds a group's ${maxRaw}`);
  if (dv.getUint32(12, true) !== storedLen) throw fail('stored length differs from the index');
  const count = dv.getUint32(16, true);
  if (count < 2 || groupStoredLen(count, 0) >= storedLen) throw fail(`${count} members do not fit ${storedLen} bytes`);
  const members: GroupRecord['members'] = [];
  let at = 0;
  for (let i = 0, e = RECORD_HEADER_SIZE; i < count; i++, e += GROUP_MEMBER_SIZE) {
    const length = dv.getUint32(e, true);
    if (length === 0) throw fail('an empty member');
    members.push({ length, at });
    at += length;
  }
  if (at !== rawLen) throw fail(`members add up to ${at} bytes, the group says ${rawLen}`);
  const frameAt = RECORD_HEADER_SIZE + groupStoredLen(count, 0);
  return { frame: rec.subarray(frameAt, RECORD_HEADER_SIZE + storedLen), rawLen, members };
}

/**
 * The member of `group` that `loc` names: one of its length starts at its place (CORRUPT_DATA
 * when none does). Its bytes are the caller's to check against its key.
 */
export function groupMember(group: Pick<GroupRecord, 'members'>, loc: MemberLocation, where: string): { at: number; length: number } {
  const m = group.members.find((x) => x.at === loc.at);
  if (!m || m.length !== loc.rawLen) {
    throw new CorruptDataError(`chunk ${loc.key} at ${where}: the group does not hold it at ${loc.at}`, 'pack-record', { key: loc.key });
  }
  return m;
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
 *   (a group record, §6.2: codec 2, the group's lengths, its member count u32 and 28 zeros for the key)
 */
export const INDEX_MAGIC = new TextEncoder().encode('KIDX');
export const INDEX_END = new TextEncoder().encode('KEND');
export const INDEX_VERSION = 1;
export const INDEX_ENTRY_SIZE = 52;
const INDEX_HEAD = 12;
const INDEX_TAIL = 40; // hash, length, end magic
/** An index's bytes besides its entries. */
export const INDEX_OVERHEAD = INDEX_HEAD + INDEX_TAIL;

/**
 * A record of a pack's index. For a group record (codec CODEC_GROUP): the group's raw and stored
 * lengths, and `key` holds its member count (u32) and zeros, not a chunk's key.
 */
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

  /**
   * Adds the entry of the group record at `offset` (`head`: its header, at least): codec 2, the
   * group's raw and stored lengths, and in place of a key its member count and 28 zero bytes —
   * one entry per record, its members listed by its own table (FORMAT.md §6.2).
   */
  addGroup(head: Uint8Array, offset: number): void {
    this.add(head, offset);
    this.#bytes[INDEX_HEAD + (this.#count - 1) * INDEX_ENTRY_SIZE + 8] = CODEC_GROUP;
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
 * died). An index that is there and does not check out is CORRUPT_DATA — also one whole but for
 * its "KEND", which would otherwise pass for a pack with none.
 */
export function decodePackIndex(tail: Uint8Array, pack: string): PackIndexEntry[] | undefined {
  const n = tail.length;
  if (n < INDEX_HEAD + INDEX_TAIL) return undefined;
  const fail = (what: string) => new CorruptDataError(`pack ${pack}: its index ${what}`, 'pack-index');
  for (let i = 0; i < 4; i++) {
    if (tail[n - 4 + i] !== INDEX_END[i]) {
      // No "KEND": a pack with no index (sealed for a writer that died) — unless a whole index
      // (its magic, count, length and SHA-256) is there all the same, its end changed: that
      // was read as "no index" and the pack as fine (a trial zeroed it).
      if (!wholeIndexButItsEnd(tail)) return undefined;
      throw fail(`ends with ${bytesToHex(tail.subarray(n - 4))} where "KEND" should be`);
    }
  }
  const dv = new DataView(tail.buffer, tail.byteOffset, n);
  const length = dv.getUint32(n - 8, true);
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
    const entry: PackIndexEntry = {
      offset: Number(dv.getBigUint64(e, true)),
      codec: tail[e + 8]!,
      rawLen: dv.getUint32(e + 12, true),
      storedLen: dv.getUint32(e + 16, true),
      key: bytesToHex(tail.subarray(e + 20, e + 52)),
    };
    return entry;
  });
}

/** Whether `tail` ends with a whole index (§6) but for its last four bytes, which are not "KEND". */
function wholeIndexButItsEnd(tail: Uint8Array): boolean {
  const mended = tail.slice();
  mended.set(INDEX_END, mended.length - INDEX_END.length);
  try {
    return decodePackIndex(mended, '') !== undefined;
  } catch (e) {
    if (e instanceof CorruptDataError) return false; // (no index there: its hash, magic or count is not one's)
    throw e;
  }
}
