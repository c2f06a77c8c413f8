/**
 * The read path (FORMAT.md §3, §6): every chunk is checked against its record header, its
 * bounded decompression and its BLAKE3 key; every whole document against its SHA-256. Damage
 * throws CorruptDataError naming the chunk or document; wrong bytes are never returned.
 */
import {
  CODEC_ZSTD,
  CorruptDataError,
  blake3,
  createDocumentHasher,
  decompress,
  type DocumentHasher,
  type DocumentHasherChoice,
} from '@kura/core';
import { PackMissingError, type PackStore } from '../backend/packs.js';
import { InvalidInputError, NotFoundError } from '../errors.js';
import { bytesToHex, formatDigest, hexToBytes, parseDigest } from '../hex.js';
import { decodeManifest, manifestRange, type ManifestEntry } from './manifest.js';
import { breather } from '../breather.js';
import { CODEC_GROUP, checkRecord, decodeGroupRecord, groupMember, groupRawMax, groupStoredMax, type GroupRecord } from './pack-record.js';

/** Decompressed groups a reader keeps (each under 1 MiB + a chunk). */
const GROUPS_KEPT = 4;

/** A group record read, checked and decompressed: its raw bytes and its member table. */
interface KeptGroup {
  pack: string;
  offset: number;
  raw: Uint8Array;
  members: GroupRecord['members'];
}
import { PLAIN_RECORDS, type RecordCodec } from './record-codec.js';
import type { ChunkLoc, DocRow, Statements } from '../catalog/statements.js';

/** The platform's document hasher unless the store was given one (see @kura/core). */
export function documentHasher(choice: DocumentHasherChoice | undefined): DocumentHasher {
  return createDocumentHasher(choice);
}

export class Reader {
  constructor(
    readonly st: Statements,
    readonly packs: PackStore,
    readonly packName: (id: number) => string,
    readonly forgetPack: (id: number) => void,
    readonly hasher: DocumentHasherChoice | undefined,
    /** The store's max chunk size (FORMAT.md §2): no record's raw or stored length exceeds it. */
    readonly maxChunk: number,
    /**
     * On an object store: applies what other servers committed. Another server's GC deletes a
     * pack a margin after the commit that moved or dropped its chunks (decision 0041); a reader
     * that has not seen that commit yet finds the rows after a refresh.
     */
    readonly refresh?: () => Promise<unknown>,
    /** How records lie in packs (record-codec.ts), and how chunks are named (plain or keyed BLAKE3, FORMAT.md §17.4). */
    readonly records: RecordCodec = PLAIN_RECORDS,
    readonly chunkName: (raw: Uint8Array) => string = blake3,
  ) {}

  /**
   * The raw bytes of a chunk, checked; CorruptDataError when damaged or missing. `hashCheck`
   * false skips BLAKE3 (record header and bounded decompression are still checked): only for
   * callers that verify the whole document's SHA-256 before any byte leaves.
   */
  async chunk(key: string, hashCheck = true, known?: ChunkLoc): Promise<Uint8Array> {
    const keyBytes = hexToBytes(key);
    // `known`: its location, looked up by the caller (a restore, many at a time); a stale one
    // (its pack gone since) is looked up again below, as when GC moves a chunk mid-read.
    let row = known ?? this.st.chunkLoc.get(keyBytes);
    for (let attempt = 0; ; attempt++) {
      if (!row) throw new CorruptDataError(`chunk ${key} is missing from the index`, 'missing-chunk', { key });
      try {
        return await this.readRow(key, row, hashCheck);
      } catch (e) {
        if (!(e instanceof PackMissingError) || attempt > 0) throw this.asCorrupt(e, key);
        // GC may have moved the chunk to another pack since we looked it up: look again (on an
        // object store, after catching up with the log: the move may be another server's).
        this.forgetPack(row.pack_id);
        if (this.refresh) await this.refresh();
        const again = this.st.chunkLoc.get(keyBytes);
        // Compared by name: SQLite may have given a dropped pack's id to a newer one.
        if (again && again.offset === row.offset && this.nameOf(again.pack_id) === e.pack) {
          throw new CorruptDataError(`chunk ${key}: ${e.message}`, 'missing-pack', { key });
        }
        row = again;
      }
    }
  }

  /** The same reader over other packs (verify's: the storage's own, past any cache). */
  over(packs: PackStore): Reader {
    return packs === this.packs ? this : new Reader(this.st, packs, this.packName, this.forgetPack, this.hasher, this.maxChunk, this.refresh, this.records, this.chunkName);
  }

  private nameOf(id: number): string | undefined {
    try {
      return this.packName(id);
    } catch {
      return undefined;
    }
  }

  private asCorrupt(e: unknown, key: string): unknown {
    if (e instanceof PackMissingError) return new CorruptDataError(`chunk ${key}: ${e.message}`, 'missing-pack', { key });
    if (e instanceof CorruptDataError && e.key === undefined) {
      return new CorruptDataError(`chunk ${key}: ${e.message}`, e.reason, { key });
    }
    return e;
  }

  private async readRow(key: string, row: ChunkLoc, hashCheck: boolean): Promise<Uint8Array> {
    // The row's lengths size the pack read and the decompression buffer, and whoever can write
    // kura.db and the pack can make header and row agree on any u32, so the record checks
    // below cannot be what bounds them. Every chunk is 1 byte to the max chunk size (FORMAT.md
    // §2, §12) and a zstd payload is smaller than its raw bytes (§3): a larger length is
    // damage, refused before anything is allocated for it. (Unbounded, raw_len 2^31-1 made
    // wasm decode 2 GiB and left its memory too large for every later call; 2^32-1 failed
    // with INVALID_INPUT and stored_len 2^32-1 with a RangeError, not CORRUPT_DATA.)
    const member = row.codec === CODEC_GROUP;
    const storedMax = member ? groupStoredMax(this.maxChunk) : this.maxChunk;
    if (row.raw_len > this.maxChunk || row.stored_len > storedMax || (member && (row.group_at ?? -1) + row.raw_len > groupRawMax(this.maxChunk))) {
      throw new CorruptDataError(
        `chunk ${key}: the index says ${row.raw_len} raw, ${row.stored_len} stored bytes${member ? ` at ${row.group_at} of a group` : ''}; no chunk of this store exceeds ${this.maxChunk}${member ? `, no group ${groupRawMax(this.maxChunk)} raw bytes` : ''}`,
        'too-large',
        { key },
      );
    }
    if (row.raw_len < 0 || row.stored_len < 0 || (member && (row.group_at === null || row.group_at < 0))) {
      throw new CorruptDataError(`chunk ${key}: the index says ${row.raw_len} raw, ${row.stored_len} stored bytes`, 'pack-record', { key });
    }
    let name: string;
    try {
      name = this.packName(row.pack_id);
    } catch {
      throw new PackMissingError(`#${row.pack_id}`);
    }
    if (member) {
      // A member of a group decompressed lately: its slice, checked, without reading the pack.
      const group = this.#groupKept(name, row.offset);
      if (group) {
        try {
          return this.member(key, row, group, `${name}@${row.offset}`, hashCheck);
        } catch (e) {
          this.#forgetGroup(name, row.offset); // (read again below: the damage may be the kept copy's)
          if (!(e instanceof CorruptDataError)) throw e;
        }
      }
    }
    const length = this.records.recordSize(row.stored_len);
    try {
      return this.checked(key, row, await this.packs.read(name, row.offset, length), name, hashCheck);
    } catch (e) {
      this.#forgetGroup(name, row.offset);
      // Damage in a local copy (an object store's cache) is not damage of the store: the copy
      // is dropped and the pack read again from the storage, which answers for itself.
      if (!(e instanceof CorruptDataError) || !this.packs.dropCopy?.(name)) throw e;
      this.copiesDropped++;
      return this.checked(key, row, await this.packs.read(name, row.offset, length), name, hashCheck);
    }
  }

  /** Local copies found damaged and dropped (whole() reads a document again after one). */
  private copiesDropped = 0;

  /**
   * Groups decompressed last (most recent first, a few): a document read in order, or a few
   * read at once, decompresses each of its groups once. Packs never change, so a group's
   * pack and offset name its bytes for good.
   */
  readonly #groups: KeptGroup[] = [];

  private checked(key: string, row: ChunkLoc, rec: Uint8Array, name: string, hashCheck: boolean): Uint8Array {
    const plain = this.records.plain(name, row.offset, rec, key);
    const where = `${name}@${row.offset}`;
    if (row.codec === CODEC_GROUP) {
      const group = decodeGroupRecord(plain, row.stored_len, groupRawMax(this.maxChunk), where, key);
      const kept: KeptGroup = { pack: name, offset: row.offset, raw: decompress(group.frame, group.rawLen), members: group.members };
      this.#groups.unshift(kept);
      if (this.#groups.length > GROUPS_KEPT) this.#groups.pop();
      return this.member(key, row, kept, where, hashCheck);
    }
    const payload = checkRecord(plain, { key, codec: row.codec, rawLen: row.raw_len, storedLen: row.stored_len }, where);
    const raw = row.codec === CODEC_ZSTD ? decompress(payload, row.raw_len) : payload;
    return this.hashChecked(key, raw, hashCheck);
  }

  /** A member's bytes: its slice of the group's raw bytes, where the group's table says it is. */
  private member(key: string, row: ChunkLoc, group: KeptGroup, where: string, hashCheck: boolean): Uint8Array {
    const m = groupMember(group, { key, codec: row.codec, rawLen: row.raw_len, storedLen: row.stored_len, at: row.group_at! }, where);
    return this.hashChecked(key, group.raw.subarray(m.at, m.at + m.length), hashCheck);
  }

  private hashChecked(key: string, raw: Uint8Array, hashCheck: boolean): Uint8Array {
    if (hashCheck && this.chunkName(raw) !== key) {
      throw new CorruptDataError(`chunk ${key}: bytes do not hash to their key`, 'key-mismatch', { key });
    }
    return raw;
  }

  /** The group at `offset` of `pack`, when kept (then first in line). */
  #groupKept(pack: string, offset: number): KeptGroup | undefined {
    const i = this.#groups.findIndex((g) => g.offset === offset && g.pack === pack);
    if (i < 0) return undefined;
    const [hit] = this.#groups.splice(i, 1);
    this.#groups.unshift(hit!);
    return hit;
  }

  #forgetGroup(pack: string, offset: number): void {
    const i = this.#groups.findIndex((g) => g.offset === offset && g.pack === pack);
    if (i >= 0) this.#groups.splice(i, 1);
  }

  /**
   * The document's bytes as a stream; every chunk is checked, and the whole before its last
   * piece is given: a stream that ends is the document, one that fails ends short. (Given
   * with the rest, the last piece made a body of the right length — an HTTP 200 that looked
   * whole — of chunks that were each sound but another document's: a trial's forged manifest.)
   * `locs`: chunk locations the caller already looked up (any it lacks are looked up here).
   */
  async *document(doc: DocRow, locs?: ReadonlyMap<string, ChunkLoc>): AsyncGenerator<Uint8Array, void, undefined> {
    const digest = formatDigest(doc.digest);
    const hasher = documentHasher(this.hasher);
    let size = 0;
    let held: Uint8Array | undefined;
    // Pack reads are synchronous: without a turn now and then, reading a 200 MB document held
    // every timer and request of the process for seconds (a trial: a 10 ms interval fired 0
    // times in 3.2 s of `for await (… of store.get(d))`).
    const breathe = breather();
    for (const e of decodeManifest(doc.manifest)) {
      await breathe();
      const bytes = await this.chunkFor(e, digest, true, locs?.get(e.key));
      hasher.update(bytes);
      size += bytes.length;
      if (held) yield held;
      held = bytes;
    }
    if (size !== doc.size || bytesToHex(hasher.digest()) !== bytesToHex(doc.digest)) {
      throw new CorruptDataError(`document ${digest}: bytes do not hash to its digest`, 'digest-mismatch', { digest });
    }
    if (held) yield held;
  }

  /**
   * The whole document into one buffer. One hash pass: the SHA-256 of the whole is checked
   * before the bytes are returned, so per-chunk BLAKE3 would only repeat it. When the digest
   * does not match, the document is read again with every chunk checked, to name the damage.
   */
  async bytes(doc: DocRow, locs?: ReadonlyMap<string, ChunkLoc>): Promise<Uint8Array> {
    // The row's size sizes the buffer, so it must first agree with the manifest, whose every
    // length is a chunk's (at most the max chunk size): a forged size is damage, refused
    // before it is allocated.
    let total = 0;
    for (const e of decodeManifest(doc.manifest)) total += e.length > this.maxChunk ? Infinity : e.length;
    if (total !== doc.size) {
      const digest = formatDigest(doc.digest);
      throw new CorruptDataError(`document ${digest}: its size (${doc.size}) differs from its manifest's`, 'manifest', { digest });
    }
    const out = new Uint8Array(doc.size);
    await this.whole(doc, (bytes, at) => out.set(bytes, at), locs);
    return out;
  }

  /**
   * Re-reads and re-hashes the whole document (verify's second pass, whose first pass has
   * checked every chunk's BLAKE3): one SHA-256 pass; damage throws CorruptDataError.
   */
  async check(doc: DocRow): Promise<number> {
    await this.whole(doc, () => undefined);
    return doc.size;
  }

  private async whole(doc: DocRow, sink: (bytes: Uint8Array, at: number) => void, locs?: ReadonlyMap<string, ChunkLoc>, again = true): Promise<void> {
    const digest = formatDigest(doc.digest);
    const hasher = documentHasher(this.hasher);
    let at = 0;
    const breathe = breather(); // (as document's)
    for (const e of decodeManifest(doc.manifest)) {
      await breathe();
      const bytes = await this.chunkFor(e, digest, false, locs?.get(e.key));
      if (at + bytes.length > doc.size) break; // the digest check below fails
      sink(bytes, at);
      hasher.update(bytes);
      at += bytes.length;
    }
    if (at === doc.size && bytesToHex(hasher.digest()) === bytesToHex(doc.digest)) return;
    const dropped = this.copiesDropped;
    for await (const piece of this.document(doc)) void piece; // throws, naming the chunk
    // No chunk failed its key: the damage was in a local copy, dropped on the way. Once more.
    if (again && this.copiesDropped > dropped) return this.whole(doc, sink, undefined, false);
    throw new CorruptDataError(`document ${digest}: bytes do not hash to its digest`, 'digest-mismatch', { digest });
  }

  /** Bytes [start, end) of the document, reading only the chunks that hold them. */
  async *range(doc: DocRow, start: number, end: number): AsyncGenerator<Uint8Array, void, undefined> {
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start || end > doc.size) {
      throw new InvalidInputError(`range [${start}, ${end}) is not within the document's ${doc.size} bytes`, 'range');
    }
    if (start === end) return;
    const digest = formatDigest(doc.digest);
    const { entries, total } = manifestRange(doc.manifest, start, end);
    if (total < end) {
      // A size the manifest does not reach (a damaged or forged row): the range would end short.
      throw new CorruptDataError(`document ${digest}: its size (${doc.size}) differs from its manifest's`, 'manifest', { digest });
    }
    const breathe = breather(); // (as document's)
    for (const e of entries) {
      await breathe();
      const bytes = await this.chunkFor(e, digest, true);
      yield bytes.subarray(Math.max(0, start - e.offset), Math.min(e.length, end - e.offset));
    }
  }

  private async chunkFor(e: ManifestEntry, digest: string, hashCheck: boolean, known?: ChunkLoc): Promise<Uint8Array> {
    try {
      const bytes = await this.chunk(e.key, hashCheck, known);
      if (bytes.length !== e.length) {
        throw new CorruptDataError(`chunk ${e.key} has ${bytes.length} bytes, the manifest says ${e.length}`, 'manifest', { key: e.key });
      }
      return bytes;
    } catch (err) {
      if (err instanceof CorruptDataError) {
        // A document deleted while it was read, then collected: its chunk (or pack) went with
        // it. Not damage — it is gone, as a read that started later is told.
        if ((err.reason === 'missing-chunk' || err.reason === 'missing-pack') && !this.st.docAnyByDigest.get(parseDigest(digest))) {
          throw new NotFoundError(`no document ${digest} (deleted while being read)`);
        }
        throw new CorruptDataError(`document ${digest}: ${err.message}`, err.reason, { key: err.key ?? e.key, digest }, { cause: err });
      }
      throw err;
    }
  }
}
