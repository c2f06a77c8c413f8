import { createHash } from 'node:crypto';
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Blake3, InvalidInputError, InvalidStateError, Sha256, blake3, sha256, toHex } from '../src/node.js';
import { coreVector, randomBytes, splitAt } from './helpers/data.js';

const nodeSha256 = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const MiB = 1 << 20;
// Block edges of SHA-256 (55/56: padding spills; 64) and BLAKE3 (64-byte blocks, 1024-byte
// chunks), and the 1 MiB pieces the wrapper copies into wasm.
const LENGTHS = [0, 1, 55, 56, 63, 64, 65, 127, 128, 1023, 1024, 1025, 4096, 65536, MiB - 1, MiB, MiB + 1, 3 * MiB + 5];

describe('sha256', () => {
  it('matches the NIST known answers', () => {
    for (const c of coreVector('sha256.json').cases) {
      const msg = new TextEncoder().encode(c.text.repeat(c.repeat));
      expect(sha256(msg)).toBe(`sha256:${c.sha256}`);
    }
  });

  it('equals node:crypto on random inputs of edge lengths', () => {
    LENGTHS.forEach((len, i) => {
      const data = randomBytes(i + 1, len);
      expect(sha256(data), `len ${len}`).toBe(nodeSha256(data));
    });
  });

  it('is the same digest however the input is split (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 5000 }), fc.array(fc.nat(5000), { maxLength: 20 }), (data, cuts) => {
        const h = new Sha256();
        for (const piece of splitAt(data, cuts)) h.update(piece);
        expect(h.digest()).toBe(nodeSha256(data));
      }),
      { numRuns: 200 },
    );
  });

  it('accepts Node Buffers and views at an offset', () => {
    const buf = Buffer.from('xxabcxx');
    expect(sha256(buf.subarray(2, 5))).toBe(nodeSha256(Buffer.from('abc')));
  });
});

describe('blake3', () => {
  it('matches the official BLAKE3 test vectors', () => {
    for (const c of coreVector('blake3.json').cases) {
      const input = Uint8Array.from({ length: c.input_len }, (_, i) => i % 251);
      expect(blake3(input), `len ${c.input_len}`).toBe(c.hash);
    }
  });

  it('equals an independent implementation (@noble/hashes) on random inputs', () => {
    LENGTHS.forEach((len, i) => {
      const data = randomBytes(100 + i, len);
      expect(blake3(data), `len ${len}`).toBe(toHex(nobleBlake3(data)));
    });
  });

  it('is the same digest however the input is split (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 5000 }), fc.array(fc.nat(5000), { maxLength: 20 }), (data, cuts) => {
        const h = new Blake3();
        splitAt(data, cuts).forEach((p) => h.update(p));
        expect(h.digest()).toBe(toHex(nobleBlake3(data)));
      }),
      { numRuns: 200 },
    );
  });
});

describe('hasher misuse', () => {
  it('rejects non-bytes with INVALID_INPUT before calling wasm', () => {
    for (const bad of ['abc', null, undefined, 42, [1, 2, 3], new ArrayBuffer(3)]) {
      expect(() => sha256(bad as never)).toThrow(InvalidInputError);
      expect(() => blake3(bad as never)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', field: 'data' }));
    }
  });

  it('refuses to be used after digest or dispose', () => {
    const h = new Sha256().update(new Uint8Array([1]));
    h.digest();
    expect(() => h.update(new Uint8Array([2]))).toThrow(InvalidStateError);
    expect(() => h.digest()).toThrow(expect.objectContaining({ code: 'INVALID_STATE' }));
    const b = new Blake3();
    b.dispose();
    b.dispose(); // idempotent
    expect(() => b.digest()).toThrow(InvalidStateError);
  });

  it('keeps independent hashers apart when interleaved', () => {
    const a = new Sha256();
    const b = new Sha256();
    a.update(new TextEncoder().encode('ab'));
    b.update(new TextEncoder().encode('xy'));
    a.update(new TextEncoder().encode('c'));
    expect(a.digest()).toBe(nodeSha256(new TextEncoder().encode('abc')));
    expect(b.digest()).toBe(nodeSha256(new TextEncoder().encode('xy')));
  });
});
