/**
 * Which extractor a document's text needs (decision 0035): by its content first, then by the
 * media type of the entry being indexed. Text-like documents need none (search/text.ts).
 */

export type ExtractKind = 'pdf' | 'docx' | 'html';

/** Bytes of a document's start that kind detection looks at. */
export const KIND_HEAD = 64 * 1024;

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

const latin1 = new TextDecoder('latin1');
const PDF = bytesOf('%PDF-');
const ZIP = bytesOf('PK\x03\x04');
const DOCX_PART = bytesOf('word/document.xml');
const HTML_START = /^(\uFEFF|\xEF\xBB\xBF)?\s*<(!doctype\s+html|html[\s>])/i;

/**
 * The kind `head` (a document's first bytes, up to KIND_HEAD) and `mediaType` show, if any.
 * Looked for in the bytes: the markers are ASCII, which Latin-1 leaves as they are. (Decoding
 * 1 KiB as Latin-1 first cost ~5 µs, every binary document the index took; now only a start
 * that may be HTML is decoded.)
 */
export function extractKind(head: Uint8Array, mediaType: string | null): ExtractKind | undefined {
  const start = head.subarray(0, 1024);
  // PDF readers accept junk before the header (PDF 32000 §7.5.2 implementations look within 1 KiB).
  if (indexOfBytes(start, PDF) >= 0) return 'pdf';
  if (startsWith(head, ZIP) && indexOfBytes(head, DOCX_PART) >= 0) return 'docx';
  if (mayStartHtml(start) && HTML_START.test(latin1.decode(start))) return 'html';
  const type = mediaType?.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/pdf') return 'pdf';
  if (type === DOCX_TYPE) return 'docx';
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  return undefined;
}

function bytesOf(ascii: string): Uint8Array {
  return Uint8Array.from(ascii, (c) => c.charCodeAt(0));
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  return bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b);
}

/** Where `needle` first occurs in `bytes`, or -1. */
function indexOfBytes(bytes: Uint8Array, needle: Uint8Array): number {
  const last = bytes.length - needle.length;
  for (let at = bytes.indexOf(needle[0]!); at >= 0 && at <= last; at = bytes.indexOf(needle[0]!, at + 1)) {
    let i = 1;
    while (i < needle.length && bytes[at + i] === needle[i]) i++;
    if (i === needle.length) return at;
  }
  return -1;
}

/**
 * Whether HTML_START could match the Latin-1 text of `start`: past a byte order mark and what
 * \s matches there (tab to carriage return, space, no-break space), the first byte is '<'.
 */
function mayStartHtml(start: Uint8Array): boolean {
  let at = start[0] === 0xef && start[1] === 0xbb && start[2] === 0xbf ? 3 : 0;
  while (at < start.length && (start[at] === 0x20 || start[at] === 0xa0 || (start[at]! >= 0x09 && start[at]! <= 0x0d))) at++;
  return start[at] === 0x3c;
}
