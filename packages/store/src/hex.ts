/** Hex <-> bytes for digests and keys (lowercase only: one spelling per identity). */
import { InvalidInputError, toHex } from '@kura/core';

export const bytesToHex = toHex;

/** Nibble value of each char code ('0'-'9', 'a'-'f'), 255 elsewhere. */
const NIBBLE = new Uint8Array(128).fill(255);
for (let i = 0; i < 10; i++) NIBBLE[48 + i] = i;
for (let i = 0; i < 6; i++) NIBBLE[97 + i] = 10 + i;

/** Decodes lowercase hex the caller has already validated (hot path: every key and digest). */
export function hexToBytes(hex: string): Uint8Array {
  return hexInto(hex, new Uint8Array(hex.length >> 1), 0);
}

/** Decodes hex into `out` at `at` without allocating (per-chunk paths). */
export function hexInto(hex: string, out: Uint8Array, at: number): Uint8Array {
  for (let i = 0, j = 0; j < hex.length; i++, j += 2) {
    out[at + i] = (NIBBLE[hex.charCodeAt(j)]! << 4) | NIBBLE[hex.charCodeAt(j + 1)]!;
  }
  return out;
}

const DIGEST = /^sha256:([0-9a-f]{64})$/;
const KEY = /^[0-9a-f]{64}$/;

/** `sha256:<hex>` (the public form) -> 32 bytes; anything else is INVALID_INPUT. */
export function parseDigest(digest: unknown, field = 'digest'): Uint8Array {
  if (typeof digest !== 'string' || !DIGEST.test(digest)) {
    throw new InvalidInputError(`${field} must be "sha256:" and 64 lowercase hex digits, got ${JSON.stringify(digest)?.slice(0, 80)}`, field);
  }
  return hexToBytes(digest.slice(7));
}

export function parseKey(key: unknown, field = 'key'): Uint8Array {
  if (typeof key !== 'string' || !KEY.test(key)) {
    throw new InvalidInputError(`${field} must be 64 lowercase hex digits, got ${JSON.stringify(key)?.slice(0, 80)}`, field);
  }
  return hexToBytes(key);
}

export function formatDigest(bytes: Uint8Array): `sha256:${string}` {
  return `sha256:${toHex(bytes)}`;
}
