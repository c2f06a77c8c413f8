/**
 * The text of a document for search (FORMAT.md §10, decision 0035): a text-like document's
 * own bytes, read from the packs; a PDF's, DOCX's or HTML page's extracted text, kept per
 * document in `doc_text` (zstd-compressed) once extracted; none for other documents.
 */
import { compress, decompress, isKuraError } from '@kura/core';
import type { Reader } from '../bytes/read.js';
import { EXTRACT_CAPS, type ExtractCaps, type Extracted } from '../extract/caps.js';
import { KIND_HEAD, extractKind, type ExtractKind } from '../extract/kind.js';
import type { ChunkLoc, DocRow, DocTextRow, Statements } from '../catalog/statements.js';
import { SNIFF_BYTES, decodeText, looksLikeText, textByType } from './text.js';
import type { TextHeads } from './text-heads.js';
import { formatDigest } from '../hex.js';
import { knownDamage } from '../document-reads.js';
import { isAscii } from '../utf8.js';

/** A document's text, or the extraction it needs first. */
/** A document's text, or the extraction it awaits; `damaged`: its bytes failed their check (the text is then ''). */
export type DocumentBody = { text: string; damaged?: string } | { extract: ExtractKind };
/**
 * What the search index takes: a DocumentBody, or ASCII text as its bytes. FTS5 tokenizes a
 * blob as the UTF-8 it holds, so ASCII bytes index exactly as their string would, without the
 * decoding to a string and the binding's encoding back (~0.04 s of a 32 MiB index's ~0.36 s).
 */
export type IndexBody = DocumentBody | { ascii: Uint8Array };

/** What a caller already has of a document (the indexer reads a batch's rows in one transaction). */
export interface KnownOfDocument {
  /** The first bytes of documents just put (text-heads.ts). */
  heads?: TextHeads | undefined;
  /** Its `doc_text` row, looked up already: null when it has none. */
  stored?: DocTextRow | null | undefined;
  /** Its chunks' locations, looked up already (used when it is read whole). */
  locs?: ReadonlyMap<string, ChunkLoc> | undefined;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The first `max` bytes of a document's text, or which extractor it still needs; '' for binary
 * or damaged documents (indexed by name only; verify reports the damage). The index is built
 * from it, and snippets are made from it again at query time: the index keeps no copy.
 */
export function documentBody(reader: Reader, st: Statements, doc: DocRow, mediaType: string | null, max: number, known: KnownOfDocument = {}): Promise<DocumentBody> {
  return body(reader, st, doc, mediaType, max, known, (bytes) => ({ text: decodeText(bytes) }), true);
}

/** documentBody for the search index: text read as bytes comes as those bytes when ASCII. */
export function indexBody(reader: Reader, st: Statements, doc: DocRow, mediaType: string | null, max: number, known: KnownOfDocument = {}): Promise<IndexBody> {
  return body(reader, st, doc, mediaType, max, known, (bytes) => (isAscii(bytes) ? { ascii: bytes } : { text: decodeText(bytes) }), false);
}

/**
 * `shown`: the text is for showing (a snippet), where extracted text of a document verify has
 * found damaged is that damage; the index keeps such text (it was checked when extracted).
 */
async function body<B>(reader: Reader, st: Statements, doc: DocRow, mediaType: string | null, max: number, known: KnownOfDocument, textOf: (bytes: Uint8Array) => B, shown: boolean): Promise<B | DocumentBody> {
  const { heads, locs } = known;
  const row = known.stored === undefined ? st.docTextGet.get(doc.id) : (known.stored ?? undefined);
  const byType = textByType(mediaType);
  // The first bytes of a document just put, when the index keeps them (text-heads.ts); a
  // document read whole with its chunks' places known, in one pass (one SHA-256, no lookups).
  const kept = heads && formatDigest(doc.digest);
  // (Places looked up before other awaits may be stale — a pack GC dropped, its id reused —
  // so a read with them that fails is made again with places looked up now.)
  const read = (n: number) =>
    (kept && heads!.head(kept, n)) || (locs && n === doc.size ? reader.bytes(doc, locs).catch(() => readHead(reader, doc, n)) : readHead(reader, doc, n));
  try {
    if (row) {
      const damage = shown ? knownDamage(st, doc) : undefined;
      return damage ? { text: '', damaged: damage } : { text: storedText(row.text, row.bytes, max) };
    }
    if (byType === true) {
      const kind = extractKind(new Uint8Array(0), mediaType); // text/html says html
      return kind ? { extract: kind } : textOf(await read(Math.min(doc.size, max)));
    }
    // A binary document just put: its head showed no text and no extractor (text-heads.ts).
    if (kept && heads!.binary(kept)) {
      const kind = extractKind(new Uint8Array(0), mediaType);
      return kind ? { extract: kind } : { text: '' };
    }
    const head = await read(Math.min(doc.size, KIND_HEAD));
    const kind = extractKind(head, mediaType);
    if (kind) return { extract: kind };
    if (byType === false || !looksLikeText(head.subarray(0, SNIFF_BYTES))) return { text: '' };
    const n = Math.min(doc.size, max);
    return textOf(n <= head.length ? head.subarray(0, n) : await read(n));
  } catch (e) {
    // Damage is said to whoever shows this text (a search hit's snippet): taken for an empty
    // text, a damaged document was a hit like any other (a trial; grep said CORRUPT_DATA).
    return isKuraError(e) && e.code === 'CORRUPT_DATA' ? { text: '', damaged: e.message } : { text: '' };
  }
}

/** documentBody's text; '' while the document awaits extraction. `damaged`: told the message when the document's bytes fail their check. */
export async function documentText(reader: Reader, st: Statements, doc: DocRow, mediaType: string | null, max: number, damaged?: (message: string) => void): Promise<string> {
  const body = await documentBody(reader, st, doc, mediaType, max);
  if ('damaged' in body && body.damaged !== undefined) damaged?.(body.damaged);
  return 'text' in body ? body.text : '';
}

/** Reads a document whole for its extractor, unless it is over the cap (then: capped, unread). */
export async function extractDocument(
  reader: Reader,
  doc: DocRow,
  kind: ExtractKind,
  extract: (kind: ExtractKind, bytes: Uint8Array, caps: ExtractCaps) => Promise<Extracted>,
  caps: ExtractCaps = EXTRACT_CAPS,
): Promise<Extracted> {
  if (doc.size > caps.bytes) return { status: 'capped', text: '', note: `not opened: larger than ${caps.bytes} bytes` };
  let bytes: Uint8Array;
  try {
    bytes = await readHead(reader, doc, doc.size);
  } catch (e) {
    return { status: 'failed', text: '', note: `unreadable: ${(e as Error).message}` };
  }
  return extract(kind, bytes, caps);
}

/** Records an extraction (inside the caller's write transaction); nothing when the document is gone. */
export function saveExtracted(st: Statements, docId: number, kind: ExtractKind, r: Extracted, now: number): void {
  const utf8 = encoder.encode(r.text);
  st.docTextPut.run(docId, kind, r.status, compress(utf8), utf8.length, r.pages ?? null, r.note ?? null, now, docId);
}

function storedText(frame: Uint8Array, bytes: number, max: number): string {
  const text = decoder.decode(decompress(frame, bytes));
  return text.length > max ? text.slice(0, max) : text;
}

async function readHead(reader: Reader, doc: DocRow, n: number): Promise<Uint8Array> {
  const out = new Uint8Array(n);
  let at = 0;
  for await (const piece of reader.range(doc, 0, n)) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}
