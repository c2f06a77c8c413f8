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

/**
 * Decodes `len` lowercase hex digits of `s` from `at`, or returns undefined if any is not one:
 * validation and decoding in one pass (a regular expression first cost ~2 µs per digest, paid
 * twice per file by a 10,000-file snapshot).
 */
function decodeHex(s: string, at: number, len: number, out: Uint8Array = new Uint8Array(len >> 1)): Uint8Array | undefined {
  for (let i = 0, j = at; i < out.length; i++, j += 2) {
    const hi = NIBBLE[s.charCodeAt(j)] ?? 255;
    const lo = NIBBLE[s.charCodeAt(j + 1)] ?? 255;
    if ((hi | lo) > 15) return undefined;
    out[i] = (hi << 4) | lo;
  }
  return out;
}

/** `sha256:<hex>` (the public form) -> 32 bytes; anything else is INVALID_INPUT. */
export function parseDigest(digest: unknown, field = 'digest'): Uint8Array {
  return parseDigestInto(digest, new Uint8Array(32), field);
}

/** parseDigest into `out` (32 bytes), without allocating: applying a put's operation. */
export function parseDigestInto(digest: unknown, out: Uint8Array, field = 'digest'): Uint8Array {
  const bytes = typeof digest === 'string' && digest.length === 71 && digest.startsWith('sha256:') ? decodeHex(digest, 7, 64, out) : undefined;
  if (!bytes) {
    throw new InvalidInputError(`${field} must be "sha256:" and 64 lowercase hex digits, got ${JSON.stringify(digest)?.slice(0, 80)}`, field);
  }
  return bytes;
}

export function parseKey(key: unknown, field = 'key'): Uint8Array {
  const bytes = typeof key === 'string' && key.length === 64 ? decodeHex(key, 0, 64) : undefined;
  if (!bytes) {
    throw new InvalidInputError(`${field} must be 64 lowercase hex digits, got ${JSON.stringify(key)?.slice(0, 80)}`, field);
  }
  return bytes;
}

export function formatDigest(bytes: Uint8Array): `sha256:${string}` {
  return `sha256:${toHex(bytes)}`;
}

/** `bytes` random bytes as lowercase hex (ids and names: writers, packs, snapshots, stores). */
export function randomHex(bytes: number): string {
  const b = new Uint8Array(bytes);
  crypto.getRandomValues(b);
  return bytesToHex(b);
}
