/** Which documents are text, and their text for the search index (FORMAT.md §10). */
import { hasUtf8Character, isAscii, isUtf8, isWholeUtf8 } from '../utf8.js';

/** Text indexed per document: the first 1 MiB. */
export const INDEXED_TEXT_MAX = 1 << 20;
/** Bytes sniffed when a document has no media type. */
export const SNIFF_BYTES = 8 * 1024;

const TEXT_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/javascript',
  'application/ecmascript',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/x-sh',
  'application/sql',
  'application/graphql',
]);

/** Whether the media type alone says text (`undefined`: it does not say, sniff the bytes). */
export function textByType(mediaType: string | null): boolean | undefined {
  if (!mediaType) return undefined;
  const t = mediaType.split(';')[0]!.trim().toLowerCase();
  if (t.startsWith('text/') || TEXT_TYPES.has(t) || t.endsWith('+json') || t.endsWith('+xml')) return true;
  return false;
}

const lenient = new TextDecoder('utf-8');

/**
 * No NUL byte, and valid UTF-8 (a multi-byte character cut at the end of the sample is fine) —
 * or text in a single-byte encoding (Latin-1, Windows-1252: old notes, a changelog, NEWS): no
 * UTF-8 character in it, control characters a text holds alone (tab, line ends, form feed,
 * escape, DOS's end-of-file), and mostly ASCII. A file of that kind with no media type (named
 * `CHANGELOG`, `NEWS`) was taken for binary: neither searched nor grepped, and nothing said so
 * (a trial: 19 of a corpus's files); with a type that says text it was read so already.
 * Binary data has control bytes, or as many bytes past ASCII as below.
 */
export function looksLikeText(sample: Uint8Array): boolean {
  if (sample.includes(0)) return false;
  // (The platform's native check first — Node's: ~0.13 µs a KiB against the scan's ~2; the index
  // asks it of every document it reads. Whole UTF-8 is UTF-8 cut nowhere; the scan allows a
  // character cut at the end.)
  if (isWholeUtf8(sample) || isUtf8(sample, true)) return true;
  if (hasUtf8Character(sample)) return false;
  let high = 0;
  for (const b of sample) {
    if (b >= 0x80) high++;
    else if ((b < 0x20 && !TEXT_CONTROLS.has(b)) || b === 0x7f) return false;
  }
  return high * 4 <= sample.length;
}

/** Control characters a text in a single-byte encoding may hold: tab, line ends, form feed, escape, DOS's end of file. */
const TEXT_CONTROLS = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1a, 0x1b]);

const encoder = new TextEncoder();

/**
 * Windows-1252's characters for 0x80-0x9F (its other bytes are their code points, as Latin-1's):
 * decoded here, the same in Node and browsers — Node 20's TextDecoder('windows-1252') gives
 * Latin-1's control characters for these, where browsers give WHATWG's table.
 */
const CP1252 = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];

function decodeWindows1252(bytes: Uint8Array): string {
  const parts: string[] = [];
  const codes = new Uint16Array(Math.min(bytes.length, 8192));
  for (let at = 0; at < bytes.length; at += codes.length) {
    const n = Math.min(codes.length, bytes.length - at);
    for (let i = 0; i < n; i++) {
      const b = bytes[at + i]!;
      codes[i] = b >= 0x80 && b < 0xa0 ? CP1252[b - 0x80]! : b;
    }
    parts.push(String.fromCharCode(...codes.subarray(0, n)));
  }
  return parts.join('');
}

/**
 * The indexable text of a document's first bytes: UTF-8 (invalid sequences become U+FFFD) —
 * unless the bytes are no UTF-8 and hold no UTF-8 character at all, as text written in
 * Latin-1 or Windows-1252 is (old notes, exported CSV): then decoded so (a trial: `café` in
 * Latin-1 was "caf\uFFFD" in snippets and no search found it). UTF-8 pays for the look only
 * when its decoding replaced something.
 */
export function decodeText(bytes: Uint8Array): string {
  const text = lenient.decode(bytes);
  return text.includes('\uFFFD') && singleByteText(bytes) ? decodeWindows1252(bytes) : text;
}

/** A document's text as UTF-8 bytes (grep matches these): its bytes, or a single-byte text's as decodeText reads it. */
export function textAsUtf8(bytes: Uint8Array): Uint8Array {
  return isAscii(bytes) || isWholeUtf8(bytes) || hasUtf8Character(bytes) ? bytes : encoder.encode(decodeWindows1252(bytes));
}

function singleByteText(bytes: Uint8Array): boolean {
  return !isUtf8(bytes, true) && !hasUtf8Character(bytes);
}
