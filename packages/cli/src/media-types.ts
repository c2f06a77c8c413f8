/**
 * Media types guessed from file extensions for `kura add` without --type. A small map of the
 * types people store most, rather than the mime-types package (~150 KiB of mime-db for a
 * guess that only fills a metadata field); unknown extensions get no media type.
 */
import { extname } from 'node:path';

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
  const ext = extname(name).slice(1).toLowerCase();
  return ext ? TYPES[ext] : undefined;
}
