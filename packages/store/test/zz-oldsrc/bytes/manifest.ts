/**
 * A document's manifest: its chunks in order, as stored in `documents.manifest`
 * (docs/FORMAT.md §7): chunk_count × (key 32 bytes | raw_len u32 LE).
 */
import { toHex } from '@kura/core';
import { hexInto, hexToBytes } from '../hex.js';

export const ENTRY_SIZE = 36;

export interface ManifestEntry {
  key: string;
  length: number;
  /** Offset of the chunk in the document. */
  offset: number;
}

/** A manifest built chunk by chunk in its stored form (no object per chunk). */
export class ManifestBuilder {
  // One entry to begin with, a small file's whole manifest: an array this small lives in V8's
  // heap, where a larger one is a buffer outside it that every scavenge sweeps (a batch of small
  // files makes one builder per file). Grows by doubling.
  #bytes = new Uint8Array(ENTRY_SIZE);
  count = 0;

  add(key: string, length: number): void {
    const at = this.count * ENTRY_SIZE;
    let b = this.#bytes;
    if (at + ENTRY_SIZE > b.length) {
      const next = new Uint8Array(b.length * 2);
      next.set(b);
      this.#bytes = b = next;
    }
    hexInto(key, b, at);
    // raw_len, u32 little-endian (no DataView to make and keep per builder)
    b[at + 32] = length & 0xff;
    b[at + 33] = (length >>> 8) & 0xff;
    b[at + 34] = (length >>> 16) & 0xff;
    b[at + 35] = length >>> 24;
    this.count++;
  }

  /** The stored form (the builder's array or a view of it; do not add afterwards). */
  bytes(): Uint8Array {
    const n = this.count * ENTRY_SIZE;
    // (A view of an array in V8's heap would move it out first.)
    return n === this.#bytes.length ? this.#bytes : this.#bytes.subarray(0, n);
  }
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

/**
 * The entries holding bytes [start, end) of the document, and the length all entries add up to.
 * Only those entries' keys are decoded: a range of a 100 MB document decoded 6,400 keys to hex
 * (~2 ms) to read one or two chunks.
 */
export function manifestRange(blob: Uint8Array, start: number, end: number): { entries: ManifestEntry[]; total: number } {
  const dv = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const entries: ManifestEntry[] = [];
  let offset = 0;
  for (let at = 0; at + ENTRY_SIZE <= blob.length; at += ENTRY_SIZE) {
    const length = dv.getUint32(at + 32, true);
    if (offset + length > start && offset < end) entries.push({ key: toHex(blob.subarray(at, at + 32)), length, offset });
    offset += length;
  }
  return { entries, total: offset };
}
