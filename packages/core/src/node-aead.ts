/**
 * XChaCha20-Poly1305 through OpenSSL (node:crypto), for Node's large plaintexts (crypto.ts
 * NATIVE_AEAD_MIN): HChaCha20 here derives the subkey from the key and the nonce's first 16
 * bytes (draft-irtf-cfrg-xchacha §2.2), then OpenSSL's ChaCha20-Poly1305 seals with the nonce's
 * last 8 bytes — the same bytes the wasm core gives (test/crypto.test.ts checks both ways).
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';
import type { NativeAead } from './crypto.js';

const state = new Uint32Array(16);
const word = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

/** HChaCha20 of a 32-byte key and a 16-byte input: the 32-byte subkey. */
export function hchacha20(key: Uint8Array, input: Uint8Array): Buffer {
  const s = state;
  s[0] = 0x61707865;
  s[1] = 0x3320646e;
  s[2] = 0x79622d32;
  s[3] = 0x6b206574;
  for (let i = 0; i < 8; i++) s[4 + i] = word(key, 4 * i);
  for (let i = 0; i < 4; i++) s[12 + i] = word(input, 4 * i);
  const qr = (a: number, b: number, c: number, d: number) => {
    let x = (s[a]! + s[b]!) >>> 0;
    s[a] = x;
    x = s[d]! ^ x;
    s[d] = (x << 16) | (x >>> 16);
    x = (s[c]! + s[d]!) >>> 0;
    s[c] = x;
    x = s[b]! ^ x;
    s[b] = (x << 12) | (x >>> 20);
    x = (s[a]! + s[b]!) >>> 0;
    s[a] = x;
    x = s[d]! ^ x;
    s[d] = (x << 8) | (x >>> 24);
    x = (s[c]! + s[d]!) >>> 0;
    s[c] = x;
    x = s[b]! ^ x;
    s[b] = (x << 7) | (x >>> 25);
  };
  for (let i = 0; i < 10; i++) {
    qr(0, 4, 8, 12);
    qr(1, 5, 9, 13);
    qr(2, 6, 10, 14);
    qr(3, 7, 11, 15);
    qr(0, 5, 10, 15);
    qr(1, 6, 11, 12);
    qr(2, 7, 8, 13);
    qr(3, 4, 9, 14);
  }
  const out = Buffer.allocUnsafe(32);
  for (const [i, w] of [0, 1, 2, 3, 12, 13, 14, 15].entries()) out.writeUInt32LE(s[w]!, 4 * i);
  return out;
}

/** ChaCha20-Poly1305's 12-byte nonce: 4 zero bytes, then the XChaCha nonce's last 8. */
function iv(nonce: Uint8Array): Buffer {
  const out = Buffer.alloc(12);
  out.set(nonce.subarray(16, 24), 4);
  return out;
}

export const OPENSSL_AEAD: NativeAead = {
  seal(key, nonce, ad, plaintext) {
    const c = createCipheriv('chacha20-poly1305', hchacha20(key, nonce.subarray(0, 16)), iv(nonce), { authTagLength: 16 });
    c.setAAD(ad, { plaintextLength: plaintext.length });
    const out = Buffer.allocUnsafe(24 + plaintext.length + 16);
    out.set(nonce, 0);
    const body = c.update(plaintext);
    out.set(body, 24);
    const tail = c.final();
    out.set(tail, 24 + body.length);
    out.set(c.getAuthTag(), 24 + plaintext.length);
    return out;
  },
  open(key, ad, sealed) {
    const nonce = sealed.subarray(0, 24);
    const n = sealed.length - 40;
    const d = createDecipheriv('chacha20-poly1305', hchacha20(key, nonce.subarray(0, 16)), iv(nonce), { authTagLength: 16 });
    d.setAAD(ad, { plaintextLength: n });
    d.setAuthTag(sealed.subarray(24 + n));
    const body = d.update(sealed.subarray(24, 24 + n));
    try {
      const tail = d.final(); // throws when the tag does not authenticate: nothing is returned then
      return tail.length ? Buffer.concat([body, tail]) : body;
    } catch {
      return undefined;
    }
  },
};
