/**
 * verify(): checks the catalog against the packs — with `readData`, by re-reading and
 * re-hashing every chunk and every document; without (restic's `check` without --read-data),
 * by the packs' presence and sizes and their indexes against the chunk rows — and names each
 * damaged chunk with the documents it breaks.
 */
import type { DamagedLog } from '../catalog/log-verify.js';
import type { DamagedCatalog } from '../catalog/catalog-verify.js';
import { CorruptDataError } from '@kura/core';
import { NotFoundError } from '../errors.js';
import { breather } from '../breather.js';
import { bytesToHex, formatDigest, hexToBytes, parseDigest } from '../hex.js';
import { decodeTree } from '../catalog/snapshot.js';
import { decodeManifest } from './manifest.js';
import type { Reader } from './read.js';
import type { ChunkRow, PackRow, Statements } from '../catalog/statements.js';
import { PackMissingError, type PackStore } from '../backend/packs.js';
import { CODEC_GROUP, INDEX_OVERHEAD, PACK_HEADER_SIZE, checkPackHeader, holdsGroups, type PackIndexEntry } from './pack-record.js';
import type { RecordCodec } from './record-codec.js';

export interface DamagedChunk {
  key: string;
  reason: string;
  message: string;
  /** Digests of the documents that need this chunk. */
  documents: string[];
}

export interface DamagedDocument {
  digest: string;
  reason: string;
  message: string;
  /** Keys of its damaged chunks (empty when the chunks are fine but the whole is not). */
  chunks: string[];
}

export interface VerifyReport {
  ok: boolean;
  /** Whether every chunk and document was read and re-hashed (else: packs and indexes against the rows). */
  dataRead: boolean;
  chunksChecked: number;
  documentsChecked: number;
  /** Raw bytes re-hashed: every chunk once, then every document in full. */
  bytesChecked: number;
  damagedChunks: DamagedChunk[];
  damagedDocuments: DamagedDocument[];
  /** Snapshot trees (FORMAT.md §13) checked: hash, format, and that what they name exists. */
  treesChecked: number;
  damagedTrees: DamagedTree[];
  /** Sealed packs checked: their size on disk, and their index (FORMAT.md §6) against the chunk rows. */
  packsChecked: number;
  damagedPacks: DamagedPack[];
  /** Commits of the log read and checked: intact, chained, the database's head among them (catalog/log-verify.ts). */
  logCommitsChecked: number;
  damagedLog: DamagedLog[];
  /**
   * Whether the database's tables were compared row for row with a replay of the log (decision
   * 0073; false when the log is damaged, or does not hold the database's head), and the rows compared.
   */
  catalogChecked: boolean;
  catalogRowsChecked: number;
  /** The database found damaged by SQLite, or tables that are not what the log makes them (catalog/catalog-verify.ts). */
  damagedCatalog: DamagedCatalog[];
  /** An encrypted store's key files that cannot be read (FORMAT.md §17.2): a password whose key file it was no longer opens the store. */
  damagedKeys: { id: string; message: string }[];
  /**
   * What SQLite found wrong with the keyword index (FTS5's segments and structure, BM25's
   * totals; decision 0083). It is derived from the catalog: a store open for writing has
   * emptied it and queued every entry (`remade`), and the indexer makes it anew.
   */
  damagedSearchIndex: { message: string; remade: boolean }[];
}

export interface DamagedPack {
  pack: string;
  /** `pack-size` (the file is not as long as its sealed row says) or `pack-index`. */
  reason: string;
  message: string;
}

export interface DamagedTree {
  digest: string;
  reason: string;
  message: string;
}

export interface VerifyProgress {
  phase: 'chunks' | 'documents';
  done: number;
  total: number;
}

/**
 * `record`: remember damaged chunks in the `damaged` table (writable stores), so a later put of
 * the same bytes writes a fresh copy instead of sharing the damaged one.
 */
export async function verifyStore(
  st: Statements,
  reader: Reader,
  packs: PackStore,
  onProgress?: (p: VerifyProgress) => void,
  record?: (keys: { key: string; reason: string }[]) => void,
  readData = true,
): Promise<VerifyReport> {
  const report: VerifyReport = {
    ok: true,
    dataRead: readData,
    chunksChecked: 0,
    documentsChecked: 0,
    bytesChecked: 0,
    damagedChunks: [],
    damagedDocuments: [],
    treesChecked: 0,
    damagedTrees: [],
    packsChecked: 0,
    damagedPacks: [],
    logCommitsChecked: 0,
    damagedLog: [],
    catalogChecked: false,
    catalogRowsChecked: 0,
    damagedCatalog: [],
    damagedKeys: [],
    damagedSearchIndex: [],
  };
  const damaged = new Map<string, DamagedChunk>();
  const breathe = breather();

  const chunks = st.chunksAll.all();
  // Without reading data: each chunk's record must lie inside a pack that exists (one listing).
  const listed = readData ? undefined : await packSizes(packs, st);
  const packNames = readData ? undefined : new Map(st.packsAll.all().map((p) => [p.id, p.name]));
  for (const row of chunks) {
    const key = bytesToHex(row.key);
    try {
      if (readData) report.bytesChecked += (await reader.chunk(key)).length;
      else placed(row, packNames!, listed!, reader.records);
    } catch (e) {
      if (!(e instanceof CorruptDataError)) throw e;
      // GC may have removed (or moved) the chunk since the list was read: not damage.
      const now = st.chunkGet.get(row.key);
      if (now && now.pack_id === row.pack_id && now.offset === row.offset) {
        damaged.set(key, { key, reason: e.reason, message: e.message, documents: [] });
      }
    }
    report.chunksChecked++;
    onProgress?.({ phase: 'chunks', done: report.chunksChecked, total: chunks.length });
    await breathe();
  }

  const docs = st.docsAll.all();
  for (const doc of docs) {
    if (!st.docById.get(doc.id)) continue; // deleted while verify ran
    const digest = formatDigest(doc.digest);
    const entries = decodeManifest(doc.manifest);
    const bad = [...new Set(entries.map((e) => e.key))].filter((k) => {
      if (damaged.has(k)) return true;
      // A manifest entry with no chunk row: the index lost it.
      if (!st.chunkExists.get(hexToBytes(k))) {
        damaged.set(k, { key: k, reason: 'missing-chunk', message: `chunk ${k} is missing from the index`, documents: [] });
        return true;
      }
      return false;
    });
    if (bad.length) {
      bad.forEach((k) => damaged.get(k)!.documents.push(digest));
      report.damagedDocuments.push({ digest, reason: 'damaged-chunks', message: `${bad.length} damaged chunk(s)`, chunks: bad });
    } else if (readData) {
      try {
        report.bytesChecked += await reader.check(doc);
      } catch (e) {
        // Deleted and collected while it was read: NOT_FOUND (read.ts), gone, not damaged.
        if (!(e instanceof CorruptDataError) && !(e instanceof NotFoundError)) throw e;
        if (e instanceof CorruptDataError && st.docById.get(doc.id)) {
          report.damagedDocuments.push({ digest, reason: e.reason, message: e.message, chunks: e.key ? [e.key] : [] });
        }
      }
    }
    report.documentsChecked++;
    onProgress?.({ phase: 'documents', done: report.documentsChecked, total: docs.length });
    await breathe();
  }
  report.damagedChunks = [...damaged.values()];
  record?.(report.damagedChunks.filter((c) => c.reason !== 'missing-chunk'));
  for (const t of st.treesAll.all()) {
    if (!st.treeGet.get(t.digest)) continue; // its snapshot deleted (and GC run) while verify breathed
    const digest = formatDigest(t.digest);
    try {
      for (const e of decodeTree(t.body, digest)) {
        const missing =
          e.type === 'file' ? !st.docAnyByDigest.get(parseDigest(e.digest)) : e.type === 'dir' ? !st.treeGet.get(parseDigest(e.tree)) : false;
        if (missing) throw new CorruptDataError(`tree ${digest}: ${e.name} names ${e.type === 'dir' ? e.tree : e.type === 'file' ? e.digest : ''}, which is missing`, 'missing-entry');
      }
    } catch (e) {
      if (!(e instanceof CorruptDataError)) throw e;
      report.damagedTrees.push({ digest, reason: e.reason, message: e.message });
    }
    report.treesChecked++;
    await breathe();
  }
  for (const pack of st.packsSealed.all()) {
    const damage = await checkPack(st, packs, pack, reader.records);
    if (damage && st.packById.get(pack.id)) report.damagedPacks.push(damage); // (not dropped by GC meanwhile)
    report.packsChecked++;
    await breathe();
  }
  report.ok = report.damagedChunks.length === 0 && report.damagedDocuments.length === 0 && report.damagedTrees.length === 0 && report.damagedPacks.length === 0;
  return report;
}

/**
 * A sealed pack that holds chunks: its length against its row, and its index (when its writer
 * wrote one) against the chunk rows in it: every row must be an entry at its offset, with its key, codec and
 * lengths. A missing file is the chunks' damage (`missing-pack`), reported with them.
 */
async function checkPack(st: Statements, packs: PackStore, pack: PackRow, records: RecordCodec): Promise<DamagedPack | undefined> {
  const damaged = (reason: string, message: string): DamagedPack => ({ pack: pack.name, reason, message: message.startsWith(`pack ${pack.name}: `) ? message : `pack ${pack.name}: ${message}` });
  // A pack no chunk row points into holds nothing to lose (GC drops it): a writer that failed
  // before its header was written leaves such a file shorter than its row.
  const rows = st.chunksInPacks.all(JSON.stringify([pack.id]));
  if (rows.length === 0) return undefined;
  let end: Uint8Array;
  try {
    end = await packs.read(pack.name, pack.size - 8, 8);
  } catch (e) {
    if (e instanceof PackMissingError) return undefined;
    throw e;
  }
  if (end.length !== 8) return damaged('pack-size', `shorter than the ${pack.size} bytes it was sealed at`);
  // Its header (FORMAT.md §6): magic, version and flags. A pack whose magic was changed was "ok"
  // (a trial), and so was one with version 7 and flags 7 (another), in plain and encrypted stores.
  let version: number;
  try {
    version = checkPackHeader(await packs.read(pack.name, 0, PACK_HEADER_SIZE), records.flags, pack.name);
  } catch (e) {
    if (!(e instanceof CorruptDataError)) throw e;
    return damaged(e.reason, e.message);
  }
  // Packs written before group records (version 1, or 2 sealed) hold none: a row that says one
  // is there means the header's version was changed (an encrypted store's header is in no seal).
  const grouped = rows.find((r) => r.codec === CODEC_GROUP);
  if (!holdsGroups(version) && grouped) return damaged('pack-header', `its header says version ${version}, written before group records, yet chunk ${bytesToHex(grouped.key)} is a member of the group at offset ${grouped.offset}`);
  // Only the index is read: it ends with "KEND" ("KSND" sealed), after its length.
  const ended = records.indexEnd.every((b, i) => end[4 + i] === b);
  const length = new DataView(end.buffer, end.byteOffset).getUint32(0, true);
  if (!ended) {
    // Every sealed pack ends with its index (record-codec.ts): its "KSND" changed was "ok" (a trial).
    if (records.sealed) return damaged('pack-index', `it ends with ${bytesToHex(end.subarray(4))} where its sealed index's "KSND" should be (every pack of an encrypted store ends with one)`);
    // A plain pack sealed for a writer that died has none (FORMAT.md §6), unless its last bytes
    // are a whole index but for its "KEND" (readIndex below says so): a zeroed "KEND" was "ok".
    if (length < INDEX_OVERHEAD || length > pack.size - PACK_HEADER_SIZE) return undefined;
  }
  if (length > pack.size - PACK_HEADER_SIZE) return damaged('pack-index', `its index claims ${length} bytes`);
  const tail = await packs.read(pack.name, pack.size - length, length);
  let index: PackIndexEntry[] | undefined;
  try {
    index = records.readIndex(tail, pack.name);
  } catch (e) {
    if (!(e instanceof CorruptDataError)) throw e;
    return damaged(e.reason, e.message);
  }
  if (!index) return ended ? damaged('pack-index', 'its index is shorter than its layout') : undefined;
  if (!holdsGroups(version) && index.some((e) => e.codec === CODEC_GROUP)) return damaged('pack-header', `its header says version ${version}, written before group records, yet its index lists one`);
  const at = new Map(index.map((e) => [e.offset, e]));
  for (const row of rows) {
    const e = at.get(row.offset);
    const key = bytesToHex(row.key);
    // A group's member (FORMAT.md §6.2) lies inside its group record's raw bytes; its key is in the record's own table.
    const listed =
      e !== undefined &&
      e.codec === row.codec &&
      e.storedLen === row.stored_len &&
      (row.codec === CODEC_GROUP ? row.group_at !== null && row.group_at + row.raw_len <= e.rawLen : e.key === key && e.rawLen === row.raw_len);
    if (!listed) {
      return damaged('pack-index', `its index does not list chunk ${key} at offset ${row.offset} as the catalog does`);
    }
  }
  return undefined;
}

/** Without reading data: the chunk's record lies inside a pack that exists (CORRUPT_DATA, as a read would say, when not). */
function placed(row: ChunkRow, packNames: ReadonlyMap<number, string>, listed: ReadonlyMap<string, number>, records: RecordCodec): void {
  const key = bytesToHex(row.key);
  const name = packNames.get(row.pack_id);
  const size = name === undefined ? undefined : listed.get(name);
  if (size === undefined) throw new CorruptDataError(`chunk ${key}: pack ${name ?? `#${row.pack_id}`} is missing`, 'missing-pack', { key });
  if (row.offset < PACK_HEADER_SIZE || row.offset + records.recordSize(row.stored_len) > size) {
    throw new CorruptDataError(`chunk ${key}: its record (${row.offset} + ${records.recordSize(row.stored_len)}) is outside pack ${name} (${size} bytes)`, 'pack-record', { key });
  }
}

/** Every pack's size in the storage: the listing's, and for packs that commits carry what their log objects hold (decision 0044). */
async function packSizes(packs: PackStore, st: Statements): Promise<Map<string, number>> {
  const sizes = new Map((await packs.list()).map((p) => [p.name, p.size]));
  const carried = new Map(st.packsCarried.all().map((r) => [r.name, { seq: r.log_seq, offset: r.log_offset }]));
  if (carried.size && packs.carriedSizes) for (const [name, size] of await packs.carriedSizes(carried)) sizes.set(name, size);
  return sizes;
}
