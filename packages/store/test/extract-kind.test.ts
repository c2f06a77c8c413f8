/**
 * Which extractor a document needs, told from its first bytes (extract/kind.ts). The markers are
 * looked for in the bytes; the reference here is the former implementation, which decoded the
 * bytes as Latin-1 (windows-1252, as WHATWG names it) and searched the text. Both must agree on
 * any bytes: random ones, and ones built around the markers where the two could part — a
 * marker across the 1 KiB limit, byte order marks, each byte \s may match, other high bytes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractKind, type ExtractKind } from '../src/extract/kind.js';

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const latin1 = new TextDecoder('latin1');

function reference(head: Uint8Array, mediaType: string | null): ExtractKind | undefined {
  const start = latin1.decode(head.subarray(0, 1024));
  if (start.includes('%PDF-')) return 'pdf';
  if (start.startsWith('PK\x03\x04') && latin1.decode(head).includes('word/document.xml')) return 'docx';
  if (/^(\uFEFF|\xEF\xBB\xBF)?\s*<(!doctype\s+html|html[\s>])/i.test(start)) return 'html';
  const type = mediaType?.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/pdf') return 'pdf';
  if (type === DOCX_TYPE) return 'docx';
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  return undefined;
}

const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const cat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
};

/** Pieces that bring the two readings close to parting. */
const piece = fc.oneof(
  fc.uint8Array({ maxLength: 64 }),
  fc.uint8Array({ minLength: 900, maxLength: 1100 }), // (puts the next piece around the 1 KiB limit)
  fc.constantFrom(
    ...['%PDF-', '%PDF', 'PDF-', 'PK\x03\x04', 'PK\x03', 'word/document.xml', 'word/document.xm', '<html>', '<HTML ', '<html', '<!DOCTYPE html>', '<!doctype  HTML', '<!doctype', '<htm', '<'].map(ascii),
  ),
  fc.constantFrom(...[[0xef, 0xbb, 0xbf], [0xef, 0xbb], [0xfe, 0xff], [0x20], [0x09], [0x0a], [0x0b], [0x0c], [0x0d], [0xa0], [0x85], [0x00], [0x1c], [0x1f], [0x3c]].map((b) => Uint8Array.from(b))),
);
const heads = fc.array(piece, { maxLength: 12 }).map(cat);
const types = fc.constantFrom(null, 'application/pdf', DOCX_TYPE, 'text/html; charset=utf-8', ' Application/XHTML+XML ', 'application/octet-stream', 'text/plain');

describe('extractKind', () => {
  it('agrees with reading the bytes as Latin-1 text, on any bytes and media type', () => {
    fc.assert(
      fc.property(heads, types, (head, type) => {
        expect(extractKind(head, type)).toBe(reference(head, type));
      }),
      { numRuns: 5000 },
    );
  });

  it('tells each kind where it is written (known answers)', () => {
    expect(extractKind(cat([new Uint8Array(1019).fill(0x41), ascii('%PDF-1.7')]), null)).toBe('pdf'); // (ends at byte 1024)
    expect(extractKind(cat([new Uint8Array(1020).fill(0x41), ascii('%PDF-1.7')]), null)).toBeUndefined(); // (past it)
    expect(extractKind(cat([ascii('PK\x03\x04'), new Uint8Array(40_000), ascii('word/document.xml')]), null)).toBe('docx');
    expect(extractKind(cat([ascii('PK\x03\x04'), ascii('xl/workbook.xml')]), null)).toBeUndefined();
    expect(extractKind(cat([Uint8Array.from([0xef, 0xbb, 0xbf, 0x20, 0xa0, 0x0a]), ascii('<!DOCTYPE HTML>')]), null)).toBe('html');
    expect(extractKind(cat([Uint8Array.from([0x85]), ascii('<html>')]), null)).toBeUndefined(); // (… is not a space)
    expect(extractKind(ascii('<htmlx>'), null)).toBeUndefined();
    expect(extractKind(new Uint8Array(0), 'text/html')).toBe('html');
  });
});
