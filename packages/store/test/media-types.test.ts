/** The one media-type detection `kura add` and HTTP uploads share: extension first, then the bytes. */
import { describe, expect, it } from 'vitest';
import { SNIFF_HEAD, detectMediaType, sniffMediaType } from '../src/media-types.js';

const bytes = (...parts: (string | number[])[]) => new Uint8Array(parts.flatMap((p) => (typeof p === 'string' ? Array.from(p, (c) => c.charCodeAt(0)) : p)));

describe('media types', () => {
  it('come from the extension first, whatever the bytes', () => {
    expect(detectMediaType('docs/report.PDF', bytes('plain text'))).toBe('application/pdf');
    expect(detectMediaType('a.tar.gz')).toBe('application/gzip');
    expect(detectMediaType('.bashrc')).toBeUndefined(); // a dot file has no extension
    expect(detectMediaType('dir.d/README')).toBeUndefined();
  });

  it('then from signatures in the first bytes', () => {
    const cases: [Uint8Array, string | undefined][] = [
      [bytes('%PDF-1.7\n'), 'application/pdf'],
      [bytes([0x89], 'PNG', [0x0d, 0x0a, 0x1a, 0x0a, 0]), 'image/png'],
      [bytes([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]), 'image/jpeg'],
      [bytes('GIF89a', [1, 0]), 'image/gif'],
      [bytes('RIFF', [0x24, 0, 0, 0], 'WEBPVP8 '), 'image/webp'],
      [bytes('RIFF', [0x24, 0, 0, 0], 'WAVEfmt '), undefined], // RIFF alone is not WebP
      [bytes('PK', [3, 4, 20, 0]), 'application/zip'],
      [bytes([0x1f, 0x8b, 0x08, 0]), 'application/gzip'],
      [bytes([0x28, 0xb5, 0x2f, 0xfd]), 'application/zstd'],
      [bytes('harbour notes\n'), 'text/plain'],
      [bytes('with a NUL', [0], 'inside'), undefined],
      [bytes([0xc3, 0x28]), undefined], // not UTF-8, and the whole document
      [new Uint8Array(0), undefined],
    ];
    for (const [head, type] of cases) expect(sniffMediaType(head), Array.from(head.subarray(0, 8)).join(',')).toBe(type);
    expect(detectMediaType(undefined, bytes('%PDF-1.4'))).toBe('application/pdf');
  });

  it('forgive a character cut at the end of a head taken from a longer document', () => {
    const text = new TextEncoder().encode(`a${'é'.repeat(SNIFF_HEAD)}`); // 1 + 2 bytes each
    const head = text.subarray(0, SNIFF_HEAD); // ends with the first byte of an é
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(head)).toThrow();
    expect(sniffMediaType(head)).toBe('text/plain');
    expect(sniffMediaType(text.subarray(0, 4))).toBeUndefined(); // shorter than a head: the whole document, cut
    expect(sniffMediaType(new Uint8Array(SNIFF_HEAD).fill(0xff))).toBeUndefined();
  });
});
