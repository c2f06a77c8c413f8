/**
 * Encryption's byte work (FORMAT.md §17, decision 0062), the same in Node and browsers: sealing
 * with XChaCha20-Poly1305 (`nonce || ciphertext || tag`), Argon2id for keys made from
 * passwords, BLAKE3's keyed hash and key derivation. Random bytes come from the platform's
 * generator (`crypto.getRandomValues`, in Node 20 and every browser).
 */
import { assertBytes, assertInteger } from './bytes.js';
import { CorruptDataError, InvalidInputError } from './errors.js';
import { check, copyInParts, output, wasm } from './wasm/instance.js';

export const KEY_BYTES = 32;
export const NONCE_BYTES = 24;
export const TAG_BYTES = 16;
/** What sealing adds: the nonce before the ciphertext and the tag after it. */
export const SEALED_OVERHEAD = NONCE_BYTES + TAG_BYTES;

/** Argon2id's costs, as RFC 9106 names them: memory in KiB, passes, lanes. */
export interface KdfParams {
  memoryKib: number;
  passes: number;
  lanes: number;
}

const EMPTY = new Uint8Array(0);

/**
 * A platform's own XChaCha20-Poly1305 for large plaintexts — the same bytes, faster (Node:
 * OpenSSL, node-aead.ts): `open` answers undefined when the seal does not authenticate.
 */
export interface NativeAead {
  seal(key: Uint8Array, nonce: Uint8Array, ad: Uint8Array, plaintext: Uint8Array): Uint8Array;
  open(key: Uint8Array, ad: Uint8Array, sealed: Uint8Array): Uint8Array | undefined;
}

/**
 * Plaintexts from this size on are sealed by the native AEAD when there is one: measured in Node
 * 20, OpenSSL is slower than wasm at 1 KiB (7.9 against 4.3 µs a call) and 1.8x faster at 16 KiB.
 */
export const NATIVE_AEAD_MIN = 8192;

let native: NativeAead | undefined;

/** Installs (or, with undefined, removes) the platform's AEAD for large plaintexts. */
export function setNativeAead(aead: NativeAead | undefined): void {
  native = aead;
}

const unauthentic = (what: string) => new CorruptDataError(`${what}: failed authentication (tampered with, or sealed under another key)`, 'unauthentic');
const utf8 = new TextEncoder();

/** `n` bytes from the platform's cryptographically secure generator. */
export function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  // getRandomValues fills at most 65,536 bytes a call.
  for (let at = 0; at < n; at += 65536) globalThis.crypto.getRandomValues(out.subarray(at, Math.min(n, at + 65536)));
  return out;
}

function assertKey(key: unknown, field = 'key'): asserts key is Uint8Array {
  assertBytes(key, field);
  if (key.length !== KEY_BYTES) throw new InvalidInputError(`${field} must be ${KEY_BYTES} bytes, not ${key.length}`, field);
}

/**
 * `plaintext` sealed under `key`, bound to `ad` (associated data: authenticated, not stored):
 * `nonce || ciphertext || tag`, SEALED_OVERHEAD bytes longer. The nonce is drawn at random
 * unless given (known-answer tests give it).
 */
export function seal(key: Uint8Array, plaintext: Uint8Array, ad: Uint8Array = EMPTY, nonce: Uint8Array = randomBytes(NONCE_BYTES)): Uint8Array {
  assertKey(key);
  assertBytes(plaintext, 'plaintext');
  assertBytes(ad, 'ad');
  assertBytes(nonce, 'nonce');
  if (nonce.length !== NONCE_BYTES) throw new InvalidInputError(`nonce must be ${NONCE_BYTES} bytes`, 'nonce');
  if (native && plaintext.length >= NATIVE_AEAD_MIN) return native.seal(key, nonce, ad, plaintext);
  copyInParts([key, nonce, ad, plaintext]);
  check(wasm().kura_seal(ad.length, plaintext.length), 'seal');
  return output();
}

/**
 * The plaintext of sealed bytes, or CorruptDataError (`unauthentic`): tampered with, cut,
 * sealed under another key or bound to other associated data. Nothing unauthenticated is
 * ever returned.
 */
export function unseal(key: Uint8Array, sealed: Uint8Array, ad: Uint8Array = EMPTY): Uint8Array {
  assertKey(key);
  assertBytes(sealed, 'sealed');
  assertBytes(ad, 'ad');
  if (native && sealed.length - SEALED_OVERHEAD >= NATIVE_AEAD_MIN) {
    const plain = native.open(key, ad, sealed);
    if (!plain) throw unauthentic('unseal');
    return plain;
  }
  copyInParts([key, ad, sealed]);
  check(wasm().kura_open(ad.length, sealed.length), 'unseal');
  return output();
}

/**
 * Argon2id (version 0x13) of a password: `length` bytes of key (32 unless said). `secret` and
 * `ad` are RFC 9106's optional inputs (Kura leaves them empty; published vectors set them).
 * Memory at most 1 GiB, salt at least 16 bytes.
 */
export function argon2id(
  password: Uint8Array,
  salt: Uint8Array,
  params: KdfParams,
  options: { secret?: Uint8Array; ad?: Uint8Array; length?: number } = {},
): Uint8Array {
  assertBytes(password, 'password');
  assertBytes(salt, 'salt');
  assertInteger(params.memoryKib, 'memoryKib', 8, 1 << 20);
  assertInteger(params.passes, 'passes', 1, 1 << 16);
  assertInteger(params.lanes, 'lanes', 1, 255);
  const { secret = EMPTY, ad = EMPTY, length = KEY_BYTES } = options;
  assertInteger(length, 'length', 16, 64);
  copyInParts([password, salt, secret, ad]);
  check(wasm().kura_argon2id(params.memoryKib, params.passes, params.lanes, password.length, salt.length, secret.length, ad.length, length), 'argon2id');
  return output();
}

/** BLAKE3's keyed hash of `data` under a 32-byte key (32 bytes). */
export function keyedHash(key: Uint8Array, data: Uint8Array): Uint8Array {
  assertKey(key);
  assertBytes(data, 'data');
  copyInParts([key, data]);
  check(wasm().kura_blake3_keyed(data.length), 'keyed hash');
  return output();
}

/** BLAKE3's key derivation: a 32-byte key for the purpose `context` names, from `material`. */
export function deriveKey(context: string, material: Uint8Array): Uint8Array {
  if (typeof context !== 'string' || context.length === 0) throw new InvalidInputError('a key derivation context must be a non-empty string', 'context');
  assertBytes(material, 'material');
  const c = utf8.encode(context);
  copyInParts([c, material]);
  check(wasm().kura_blake3_derive_key(c.length, material.length), 'derive key');
  return output();
}
