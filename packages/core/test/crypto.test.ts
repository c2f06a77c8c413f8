import { createCipheriv, createDecipheriv } from 'node:crypto';
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CorruptDataError, InvalidInputError, SEALED_OVERHEAD, argon2id, deriveKey, keyedHash, seal, toHex, unseal } from '../src/node.js';
import { coreVector, randomBytes } from './helpers/data.js';

const unhex = (s: string) => Uint8Array.from(Buffer.from(s, 'hex'));
const utf8 = (s: string) => new TextEncoder().encode(s);

/**
 * XChaCha20-Poly1305 by another implementation: HChaCha20 (draft-irtf-cfrg-xchacha §2.2) here,
 * then OpenSSL's ChaCha20-Poly1305 through node:crypto — nothing shared with the wasm core.
 */
function hchacha20(key: Uint8Array, nonce16: Uint8Array): Uint8Array {
  const le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);
  const s = new Uint32Array(16);
  s.set([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]);
  for (let i = 0; i < 8; i++) s[4 + i] = le(key, 4 * i);
  for (let i = 0; i < 4; i++) s[12 + i] = le(nonce16, 4 * i);
  const rotl = (x: number, n: number) => (x << n) | (x >>> (32 - n));
  const qr = (a: number, b: number, c: number, d: number) => {
    s[a] = s[a]! + s[b]!; s[d] = rotl(s[d]! ^ s[a]!, 16);
    s[c] = s[c]! + s[d]!; s[b] = rotl(s[b]! ^ s[c]!, 12);
    s[a] = s[a]! + s[b]!; s[d] = rotl(s[d]! ^ s[a]!, 8);
    s[c] = s[c]! + s[d]!; s[b] = rotl(s[b]! ^ s[c]!, 7);
  };
  for (let i = 0; i < 10; i++) {
    qr(0, 4, 8, 12); qr(1, 5, 9, 13); qr(2, 6, 10, 14); qr(3, 7, 11, 15);
    qr(0, 5, 10, 15); qr(1, 6, 11, 12); qr(2, 7, 8, 13); qr(3, 4, 9, 14);
  }
  const out = Buffer.alloc(32);
  [0, 1, 2, 3, 12, 13, 14, 15].forEach((w, i) => out.writeUInt32LE(s[w]!, 4 * i));
  return out;
}

function openSslParts(key: Uint8Array, nonce: Uint8Array) {
  const iv = Buffer.concat([Buffer.alloc(4), nonce.subarray(16, 24)]);
  return { subkey: hchacha20(key, nonce.subarray(0, 16)), iv };
}

function openSslSeal(key: Uint8Array, nonce: Uint8Array, plain: Uint8Array, ad: Uint8Array): Uint8Array {
  const { subkey, iv } = openSslParts(key, nonce);
  const c = createCipheriv('chacha20-poly1305', subkey, iv, { authTagLength: 16 });
  c.setAAD(ad, { plaintextLength: plain.length });
  return Buffer.concat([nonce, c.update(plain), c.final(), c.getAuthTag()]);
}

function openSslOpen(key: Uint8Array, sealed: Uint8Array, ad: Uint8Array): Uint8Array {
  const nonce = sealed.subarray(0, 24);
  const { subkey, iv } = openSslParts(key, nonce);
  const d = createDecipheriv('chacha20-poly1305', subkey, iv, { authTagLength: 16 });
  d.setAAD(ad, { plaintextLength: sealed.length - SEALED_OVERHEAD });
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([d.update(sealed.subarray(24, sealed.length - 16)), d.final()]);
}

describe('seal and unseal (XChaCha20-Poly1305)', () => {
  it("match Wycheproof's vectors: every valid one sealed and opened, every forgery refused", () => {
    const v = coreVector('wycheproof-xchacha20-poly1305.json');
    let valid = 0;
    let forged = 0;
    for (const group of v.testGroups) {
      if (group.ivSize !== 192) continue; // the sealed form carries 24-byte nonces only
      for (const t of group.tests) {
        const [key, nonce, ad, msg] = [unhex(t.key), unhex(t.iv), unhex(t.aad), unhex(t.msg)];
        const sealed = Buffer.concat([nonce, unhex(t.ct), unhex(t.tag)]);
        if (t.result === 'valid') {
          expect(toHex(seal(key, msg, ad, nonce)), `tc ${t.tcId}`).toBe(toHex(sealed));
          expect(toHex(unseal(key, sealed, ad)), `tc ${t.tcId}`).toBe(t.msg);
          valid++;
        } else {
          expect(() => unseal(key, sealed, ad), `tc ${t.tcId}`).toThrow(CorruptDataError);
          forged++;
        }
      }
    }
    expect([valid, forged]).toEqual([246, 60]);
  });

  it('agree with OpenSSL (node:crypto ChaCha20-Poly1305 after HChaCha20) both ways (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 3000 }), fc.uint8Array({ maxLength: 64 }), (key, plain, ad) => {
        const sealed = seal(key, plain, ad);
        expect(sealed.length).toBe(plain.length + SEALED_OVERHEAD);
        expect(toHex(openSslOpen(key, sealed, ad))).toBe(toHex(plain));
        const theirs = openSslSeal(key, randomBytes(plain.length + 7, 24), plain, ad);
        expect(toHex(unseal(key, theirs, ad))).toBe(toHex(plain));
      }),
      { numRuns: 150 },
    );
  });

  it('refuse every flipped bit, another key, other associated data, a cut or a longer input', () => {
    const key = randomBytes(1, 32);
    const plain = randomBytes(2, 300);
    const ad = utf8('packs/ab/0123 16');
    const sealed = seal(key, plain, ad);
    for (let at = 0; at < sealed.length; at++) {
      const bad = sealed.slice();
      bad[at]! ^= 1 << (at % 8);
      expect(() => unseal(key, bad, ad), `bit at ${at}`).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA', reason: 'unauthentic' }));
    }
    expect(() => unseal(randomBytes(3, 32), sealed, ad)).toThrow(CorruptDataError);
    expect(() => unseal(key, sealed, utf8('packs/ab/0123 17'))).toThrow(CorruptDataError);
    expect(() => unseal(key, sealed.subarray(0, sealed.length - 1), ad)).toThrow(CorruptDataError);
    expect(() => unseal(key, Buffer.concat([sealed, Buffer.alloc(1)]), ad)).toThrow(CorruptDataError);
    expect(() => unseal(key, new Uint8Array(SEALED_OVERHEAD - 1), ad)).toThrow(CorruptDataError);
    expect(toHex(unseal(key, sealed, ad))).toBe(toHex(plain));
  });

  it('draw a fresh nonce each time and refuse keys and nonces of the wrong size', () => {
    const key = randomBytes(4, 32);
    const a = seal(key, utf8('same'));
    const b = seal(key, utf8('same'));
    expect(toHex(a.subarray(0, 24))).not.toBe(toHex(b.subarray(0, 24)));
    expect(() => seal(new Uint8Array(31), utf8('x'))).toThrow(InvalidInputError);
    expect(() => seal(key, utf8('x'), undefined, new Uint8Array(12))).toThrow(InvalidInputError);
    expect(() => unseal(new Uint8Array(33), a)).toThrow(InvalidInputError);
  });
});

describe('argon2id', () => {
  it("matches RFC 9106's vector and the reference implementation's answers", () => {
    const v = coreVector('argon2id.json');
    const params = (c: { memory_kib: number; passes: number; lanes: number }) => ({ memoryKib: c.memory_kib, passes: c.passes, lanes: c.lanes });
    const r = v.rfc9106;
    expect(toHex(argon2id(unhex(r.password_hex), unhex(r.salt_hex), params(r), { secret: unhex(r.secret_hex), ad: unhex(r.ad_hex) }))).toBe(r.tag);
    for (const c of v.cases) expect(toHex(argon2id(unhex(c.password_hex), unhex(c.salt_hex), params(c))), JSON.stringify(c)).toBe(c.tag);
  });

  it('refuses parameters out of bounds as INVALID_INPUT', () => {
    const ok = { memoryKib: 64, passes: 1, lanes: 1 };
    expect(() => argon2id(utf8('pw'), new Uint8Array(15), ok)).toThrow(InvalidInputError);
    expect(() => argon2id(utf8('pw'), new Uint8Array(16), { ...ok, memoryKib: (1 << 20) + 1 })).toThrow(InvalidInputError);
    expect(() => argon2id(utf8('pw'), new Uint8Array(16), { ...ok, passes: 0 })).toThrow(InvalidInputError);
    expect(() => argon2id(utf8('pw'), new Uint8Array(16), { ...ok, memoryKib: 16, lanes: 4 })).toThrow(InvalidInputError);
    expect(argon2id(utf8('pw'), new Uint8Array(16), ok)).toHaveLength(32);
  });
});

describe('keyed hash and key derivation (BLAKE3)', () => {
  it('match the official vectors', () => {
    const v = coreVector('blake3-keyed.json');
    const key = utf8(v.key);
    for (const c of v.cases) {
      const input = Uint8Array.from({ length: c.input_len }, (_, i) => i % 251);
      expect(toHex(keyedHash(key, input)), `keyed len ${c.input_len}`).toBe(c.keyed_hash);
      expect(toHex(deriveKey(v.context_string, input)), `derive len ${c.input_len}`).toBe(c.derive_key);
    }
  });

  it('agree with @noble/hashes on random inputs (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 5000 }), fc.string({ minLength: 1, maxLength: 40 }), (key, data, context) => {
        expect(toHex(keyedHash(key, data))).toBe(toHex(nobleBlake3(data, { key })));
        expect(toHex(deriveKey(context, data))).toBe(toHex(nobleBlake3(data, { context: utf8(context) })));
      }),
      { numRuns: 100 },
    );
  });
});

describe('ingest with a chunk-names key', () => {
  it('names every chunk by keyed BLAKE3 (checked by @noble/hashes) and changes nothing else', async () => {
    const { Ingester } = await import('../src/node.js');
    const data = randomBytes(77, 300_000);
    const key = randomBytes(78, 32);
    const run = (options: object) => {
      const ing = new Ingester({ compression: 3, ...options });
      const chunks = [...ing.update(data.subarray(0, 123_456)), ...ing.update(data.subarray(123_456)), ...ing.finish()];
      return { chunks, digest: ing.result!.digest };
    };
    const plain = run({});
    const keyed = run({ chunkNameKey: key });
    expect(keyed.digest).toBe(plain.digest);
    expect(keyed.chunks.map((c) => [c.offset, c.length, c.codec])).toEqual(plain.chunks.map((c) => [c.offset, c.length, c.codec]));
    for (const c of keyed.chunks) {
      expect(c.key).toBe(toHex(nobleBlake3(data.subarray(c.offset, c.offset + c.length), { key })));
      expect(c.key).toBe(toHex(keyedHash(key, data.subarray(c.offset, c.offset + c.length))));
    }
    expect(() => new Ingester({ chunkNameKey: new Uint8Array(31) })).toThrow(InvalidInputError);
  });
});

describe('sealing large plaintexts through OpenSSL (node-aead.ts)', () => {
  it("derives HChaCha20's published subkey (draft-irtf-cfrg-xchacha §2.2.1)", async () => {
    const { hchacha20 } = await import('../src/node-aead.js');
    const key = Uint8Array.from({ length: 32 }, (_, i) => i);
    const nonce = unhex('000000090000004a0000000031415927');
    expect(toHex(hchacha20(key, nonce))).toBe('82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc');
  });

  it('gives the wasm core\'s bytes on both sides of NATIVE_AEAD_MIN, opens what either sealed, and refuses what is changed', async () => {
    const { NATIVE_AEAD_MIN, setNativeAead } = await import('../src/node.js');
    const { OPENSSL_AEAD } = await import('../src/node-aead.js');
    const key = randomBytes(90, 32);
    const ad = utf8('packs/ab 4096');
    for (const [i, size] of [NATIVE_AEAD_MIN - 1, NATIVE_AEAD_MIN, 65_536, 300_001].entries()) {
      const plain = randomBytes(91 + i, size);
      const nonce = randomBytes(95 + i, 24);
      setNativeAead(undefined);
      const byWasm = seal(key, plain, ad, nonce);
      setNativeAead(OPENSSL_AEAD);
      const byNative = seal(key, plain, ad, nonce);
      expect(toHex(byNative), `size ${size}`).toBe(toHex(byWasm));
      expect(toHex(unseal(key, byWasm, ad))).toBe(toHex(plain));
      setNativeAead(undefined);
      expect(toHex(unseal(key, byNative, ad))).toBe(toHex(plain));
      setNativeAead(OPENSSL_AEAD);
      for (const at of [0, 30, byNative.length >> 1, byNative.length - 1]) {
        const bad = Buffer.from(byNative);
        bad[at]! ^= 2;
        expect(() => unseal(key, bad, ad), `size ${size} byte ${at}`).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA', reason: 'unauthentic' }));
      }
      expect(() => unseal(key, byNative, utf8('packs/ab 4097'))).toThrow(CorruptDataError);
    }
  });
});
