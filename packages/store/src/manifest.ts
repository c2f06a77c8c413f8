/**
 * A document's manifest: its chunks in order, as stored in `documents.manifest`
 * (docs/FORMAT.md §7): chunk_count × (key 32 bytes | raw_len u32 LE).
 */
import { toHex } from '@kura/core';
import { hexToBytes } from './hex.js';

export const ENTRY_SIZE = 36;

export interface ManifestEntry {
  key: string;
  length: number;
  /** Offset of the chunk in the document. */
  offset: number;
}

export function encodeManifest(entries: readonly { key: string; length: number }[]): Uint8Array {
  const out = new Uint8Array(entries.length * ENTRY_SIZE);
  const dv = new DataView(out.buffer);
  entries.forEach((e, i) => {
    out.set(hexToBytes(e.key), i * ENTRY_SIZE);
    dv.setUint32(i * ENTRY_SIZE + 32, e.length, true);
  });
  return out;
}

export function decodeManifest(blob: Uint8Array): ManifestEntry[] {
  const dv = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const out: ManifestEntry[] = [];
  let offset = 0;
  for (let at = 0; at + ENTRY_SIZE <= blob.length; at += ENTRY_SIZE) {
    const length = dv.getUint32(at + 32, true);
    out.push({ key: toHex(blob.subarray(at, at + 32)), length, offset });
    offset += length;
  }
  return out;
}

/** Index of the entry containing byte `pos` (entries sorted by offset, pos < total). */
export function entryAt(entries: readonly ManifestEntry[], pos: number): number {
  let lo = 0;
  let hi = entries.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (entries[mid]!.offset <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
