/**
 * verify(): re-reads and re-hashes every chunk and every document, and names each damaged
 * chunk with the documents it breaks.
 */
import { CorruptDataError } from '@kura/core';
import { breather } from '../breather.js';
import { bytesToHex, formatDigest, hexToBytes, parseDigest } from '../hex.js';
import { decodeTree } from '../catalog/snapshot.js';
import { decodeManifest } from './manifest.js';
import type { Reader } from './read.js';
import type { Statements } from '../catalog/statements.js';

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
  chunksChecked: number;
  documentsChecked: number;
  /** Raw bytes re-hashed: every chunk once, then every document in full. */
  bytesChecked: number;
  damagedChunks: DamagedChunk[];
  damagedDocuments: DamagedDocument[];
  /** Snapshot trees (FORMAT.md §13) checked: hash, format, and that what they name exists. */
  treesChecked: number;
  damagedTrees: DamagedTree[];
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
  onProgress?: (p: VerifyProgress) => void,
  record?: (keys: { key: string; reason: string }[]) => void,
): Promise<VerifyReport> {
  const report: VerifyReport = { ok: true, chunksChecked: 0, documentsChecked: 0, bytesChecked: 0, damagedChunks: [], damagedDocuments: [], treesChecked: 0, damagedTrees: [] };
  const damaged = new Map<string, DamagedChunk>();
  const breathe = breather();

  const chunks = st.chunksAll.all();
  for (const row of chunks) {
    const key = bytesToHex(row.key);
    try {
      report.bytesChecked += (await reader.chunk(key)).length;
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
    } else {
      try {
        report.bytesChecked += await reader.check(doc);
      } catch (e) {
        if (!(e instanceof CorruptDataError)) throw e;
        if (st.docById.get(doc.id)) {
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
  report.ok = report.damagedChunks.length === 0 && report.damagedDocuments.length === 0 && report.damagedTrees.length === 0;
  return report;
}
