/**
 * Media types detected from a name's extension and, failing that, from a document's first
 * bytes: `kura add` without --type and HTTP uploads with no type (or curl's form type) share
 * this one detection. A small map of the types people store most, rather than the mime-types
 * package (~150 KiB of mime-db for a guess that only fills a metadata field); platform-neutral
 * (the browser store may use it too).
 */
import { isUtf8 } from './utf8.js';

const TYPES: Record<string, string> = {
  // text
  txt: 'text/plain',
  text: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  toml: 'application/toml',
  ics: 'text/calendar',
  // code and data
  js: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
  ts: 'text/typescript',
  mts: 'text/typescript',
  cts: 'text/typescript',
  json: 'application/json',
  jsonl: 'application/jsonl',
  ndjson: 'application/x-ndjson',
  wasm: 'application/wasm',
  sh: 'application/x-sh',
  py: 'text/x-python',
  rs: 'text/x-rust',
  go: 'text/x-go',
  c: 'text/x-c',
  h: 'text/x-c',
  // images
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  svg: 'image/svg+xml',
  ico: 'image/vnd.microsoft.icon',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  // audio and video
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  // documents and archives
  pdf: 'application/pdf',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  epub: 'application/epub+zip',
  zip: 'application/zip',
  gz: 'application/gzip',
  tgz: 'application/gzip',
  tar: 'application/x-tar',
  zst: 'application/zstd',
  xz: 'application/x-xz',
  bz2: 'application/x-bzip2',
  '7z': 'application/x-7z-compressed',
  // fonts
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
};

/** The media type for a file name, or undefined when the extension is not in the map. */
export function guessMediaType(name: string): string | undefined {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  const ext = dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
  return ext ? TYPES[ext] : undefined;
}

/** How many first bytes `sniffMediaType` looks at. */
export const SNIFF_HEAD = 512;

const startsWith = (head: Uint8Array, bytes: readonly number[], at = 0) => bytes.every((b, i) => head[at + i] === b);
const ascii = (s: string) => Array.from(s, (c) => c.charCodeAt(0));

/** Signatures at the start of a file (the ones the WHATWG MIME sniffing standard lists, and a few archives). */
const MAGIC: [number[], string][] = [
  [ascii('%PDF-'), 'application/pdf'],
  [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'image/png'],
  [[0xff, 0xd8, 0xff], 'image/jpeg'],
  [ascii('GIF87a'), 'image/gif'],
  [ascii('GIF89a'), 'image/gif'],
  [[0x50, 0x4b, 0x03, 0x04], 'application/zip'],
  [[0x1f, 0x8b, 0x08], 'application/gzip'],
  [[0x28, 0xb5, 0x2f, 0xfd], 'application/zstd'],
  [[0x00, 0x61, 0x73, 0x6d], 'application/wasm'],
  [ascii('ID3'), 'audio/mpeg'],
  [ascii('OggS'), 'audio/ogg'],
  [ascii('fLaC'), 'audio/flac'],
];

const RIFF = ascii('RIFF');
const WEBP = ascii('WEBP');

/**
 * The media type a document's first bytes show: a known signature, else `text/plain` for
 * UTF-8 text without NUL bytes (a piece cut mid-character at the end of the head still counts),
 * else undefined.
 */
export function sniffMediaType(head: Uint8Array): string | undefined {
  for (const [sig, type] of MAGIC) if (head.length >= sig.length && startsWith(head, sig)) return type;
  if (startsWith(head, RIFF) && startsWith(head, WEBP, 8)) return 'image/webp'; // RIFF, a length, WEBP
  if (head.length === 0 || head.includes(0)) return undefined;
  // A head shorter than SNIFF_HEAD is the whole document: no character was cut at its end.
  return isUtf8(head, head.length >= SNIFF_HEAD) ? 'text/plain' : undefined;
}

/** One detection for every writer: the name's extension first, then the bytes. */
export function detectMediaType(name: string | undefined, head?: Uint8Array): string | undefined {
  return (name !== undefined ? guessMediaType(name) : undefined) ?? (head ? sniffMediaType(head) : undefined);
}
