/** Which documents are text, and their text for the search index (FORMAT.md §10). */
import { isUtf8 } from '../utf8.js';

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

/** No NUL byte and valid UTF-8 (a multi-byte character cut at the end of the sample is fine). */
export function looksLikeText(sample: Uint8Array): boolean {
  return !sample.includes(0) && isUtf8(sample, true);
}

/** The indexable text of a document's first bytes (invalid sequences become U+FFFD). */
export function decodeText(bytes: Uint8Array): string {
  return lenient.decode(bytes);
}
