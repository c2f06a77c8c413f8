/**
 * Grep's cache of checked text (decision 0055, amendment of 2026-12-01): the text a grep
 * matched of a document — its bytes read back, decompressed and checked against its digest,
 * as UTF-8 — kept in memory, least recently used first out, up to a bound, so that the next
 * grep of the same documents matches them without reading them again. ripgrep reads files the
 * operating system keeps in its page cache; this is Kura's page cache, of text already checked.
 *
 * A document's text never changes (its key is its digest), so nothing is ever invalidated: a
 * key names the same bytes for as long as the store is open. The bytes are kept in
 * SharedArrayBuffers where there are some, so that grep's worker threads are lent them without
 * a copy (node/grep-away.ts) and lend back the texts they read.
 */
import { bytesToHex } from '../hex.js';

/** What a grep reads and lends: the texts of a batch's documents, and those it read (keyed by textKey). */
export interface TextLender {
  get(key: string): Uint8Array | undefined;
  put(key: string, bytes: Uint8Array): void;
}

/** The key of a document's text as grep matches it: its extracted text, or its bytes under a media type. */
export function textKey(digest: Uint8Array, source: 'extracted' | { mediaType: string | null }): string {
  return `${bytesToHex(digest)}|${source === 'extracted' ? '#extracted' : (source.mediaType ?? '')}`;
}

const sharing = typeof SharedArrayBuffer === 'function';

/** `bytes` in memory that can be lent to another thread without a copy (itself when it already is). */
export function shareable(bytes: Uint8Array): Uint8Array {
  if (!sharing || bytes.buffer instanceof SharedArrayBuffer) return bytes;
  const out = new Uint8Array(new SharedArrayBuffer(bytes.length));
  out.set(bytes);
  return out;
}

export class TextCache implements TextLender {
  #texts = new Map<string, Uint8Array>();
  #bytes = 0;

  /** `maxBytes` of text at most; a text larger than `maxEntry` is not kept. */
  constructor(
    readonly maxBytes: number,
    readonly maxEntry: number,
  ) {}

  get bytes(): number {
    return this.#bytes;
  }

  /** Whether `key`'s text is kept (its place in the order unchanged). */
  has(key: string): boolean {
    return this.#texts.has(key);
  }

  get(key: string): Uint8Array | undefined {
    const t = this.#texts.get(key);
    if (t) {
      // (A Map iterates in insertion order: moved to the end, it is the most recently used.)
      this.#texts.delete(key);
      this.#texts.set(key, t);
    }
    return t;
  }

  put(key: string, bytes: Uint8Array): void {
    if (bytes.length > this.maxEntry || bytes.length > this.maxBytes || this.#texts.has(key)) return;
    const kept = shareable(bytes);
    this.#texts.set(key, kept);
    this.#bytes += kept.length;
    for (const [k, t] of this.#texts) {
      if (this.#bytes <= this.maxBytes) break;
      this.#texts.delete(k);
      this.#bytes -= t.length;
    }
  }

  clear(): void {
    this.#texts.clear();
    this.#bytes = 0;
  }
}
