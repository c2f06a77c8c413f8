/**
 * The read path (FORMAT.md §3, §6): every chunk is checked against its record header, its
 * bounded decompression and its BLAKE3 key; every whole document against its SHA-256. Damage
 * throws CorruptDataError naming the chunk or document; wrong bytes are never returned.
 */
import {
  CODEC_ZSTD,
  CorruptDataError,
  KuraError,
  Sha256,
  blake3,
  decompress,
  type DocumentHasher,
  type DocumentHasherChoice,
} from '@kura/core';
import { PackMissingError, type PackStore } from './backend/packs.js';
import { InvalidInputError } from './errors.js';
import { bytesToHex, formatDigest, hexToBytes } from './hex.js';
import { decodeManifest, entryAt, type ManifestEntry } from './manifest.js';
import { RECORD_HEADER_SIZE, checkRecord } from './pack-record.js';
import type { ChunkRow, DocRow, Statements } from './statements.js';

export function documentHasher(choice: DocumentHasherChoice | undefined): DocumentHasher {
  if (choice && choice !== 'wasm') return choice();
  const h = new Sha256();
  return {
    update: (d) => void h.update(d),
    digest: () => hexToBytes(h.digest().slice(7)),
  };
}

export class Reader {
  constructor(
    readonly st: Statements,
    readonly packs: PackStore,
    readonly packName: (id: number) => string,
    readonly forgetPack: (id: number) => void,
    readonly hasher: DocumentHasherChoice | undefined,
  ) {}

  /** The raw bytes of a chunk, checked; CorruptDataError when damaged or missing. */
  async chunk(key: string): Promise<Uint8Array> {
    const keyBytes = hexToBytes(key);
    let row = this.st.chunkGet.get(keyBytes);
    for (let attempt = 0; ; attempt++) {
      if (!row) throw new CorruptDataError(`chunk ${key} is missing from the index`, 'missing-chunk', { key });
      try {
        return await this.readRow(key, row);
      } catch (e) {
        if (!(e instanceof PackMissingError) || attempt > 0) throw this.asCorrupt(e, key);
        // GC may have moved the chunk to another pack since we looked it up: look again.
        this.forgetPack(row.pack_id);
        const again = this.st.chunkGet.get(keyBytes);
        if (again && again.pack_id === row.pack_id && again.offset === row.offset) {
          throw new CorruptDataError(`chunk ${key}: ${e.message}`, 'missing-pack', { key });
        }
        row = again;
      }
    }
  }

  private asCorrupt(e: unknown, key: string): unknown {
    if (e instanceof PackMissingError) return new CorruptDataError(`chunk ${key}: ${e.message}`, 'missing-pack', { key });
    if (e instanceof CorruptDataError && e.key === undefined) {
      return new CorruptDataError(`chunk ${key}: ${e.message}`, e.reason, { key });
    }
    return e;
  }

  private async readRow(key: string, row: ChunkRow): Promise<Uint8Array> {
    let name: string;
    try {
      name = this.packName(row.pack_id);
    } catch {
      throw new PackMissingError(`#${row.pack_id}`);
    }
    const rec = await this.packs.read(name, row.offset, RECORD_HEADER_SIZE + row.stored_len);
    const payload = checkRecord(rec, { key, codec: row.codec, rawLen: row.raw_len, storedLen: row.stored_len }, `${name}@${row.offset}`);
    const raw = row.codec === CODEC_ZSTD ? decompress(payload, row.raw_len) : payload;
    if (blake3(raw) !== key) {
      throw new CorruptDataError(`chunk ${key}: bytes do not hash to their key`, 'key-mismatch', { key });
    }
    return raw;
  }

  /** The document's bytes as a stream; the last step checks its SHA-256. */
  async *document(doc: DocRow): AsyncGenerator<Uint8Array, void, undefined> {
    const digest = formatDigest(doc.digest);
    const hasher = documentHasher(this.hasher);
    let size = 0;
    for (const e of decodeManifest(doc.manifest)) {
      const bytes = await this.chunkFor(e, digest);
      hasher.update(bytes);
      size += bytes.length;
      yield bytes;
    }
    if (size !== doc.size || bytesToHex(hasher.digest()) !== bytesToHex(doc.digest)) {
      throw new CorruptDataError(`document ${digest}: bytes do not hash to its digest`, 'digest-mismatch', { digest });
    }
  }

  /** Bytes [start, end) of the document, reading only the chunks that hold them. */
  async *range(doc: DocRow, start: number, end: number): AsyncGenerator<Uint8Array, void, undefined> {
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start || end > doc.size) {
      throw new InvalidInputError(`range [${start}, ${end}) is not within the document's ${doc.size} bytes`, 'range');
    }
    if (start === end) return;
    const digest = formatDigest(doc.digest);
    const entries = decodeManifest(doc.manifest);
    for (let i = entryAt(entries, start); i < entries.length && entries[i]!.offset < end; i++) {
      const e = entries[i]!;
      const bytes = await this.chunkFor(e, digest);
      yield bytes.subarray(Math.max(0, start - e.offset), Math.min(e.length, end - e.offset));
    }
  }

  private async chunkFor(e: ManifestEntry, digest: string): Promise<Uint8Array> {
    try {
      const bytes = await this.chunk(e.key);
      if (bytes.length !== e.length) {
        throw new CorruptDataError(`chunk ${e.key} has ${bytes.length} bytes, the manifest says ${e.length}`, 'manifest', { key: e.key });
      }
      return bytes;
    } catch (err) {
      if (err instanceof CorruptDataError) {
        throw new CorruptDataError(`document ${digest}: ${err.message}`, err.reason, { key: err.key ?? e.key, digest }, { cause: err });
      }
      throw err instanceof KuraError ? err : err;
    }
  }
}
