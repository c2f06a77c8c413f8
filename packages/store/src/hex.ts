/** Hex <-> bytes for digests and keys (lowercase only: one spelling per identity). */
import { InvalidInputError, toHex } from '@kura/core';

export const bytesToHex = toHex;

export function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}

const DIGEST = /^sha256:([0-9a-f]{64})$/;
const KEY = /^[0-9a-f]{64}$/;

/** `sha256:<hex>` (the public form) -> 32 bytes; anything else is INVALID_INPUT. */
export function parseDigest(digest: unknown, field = 'digest'): Uint8Array {
  const m = typeof digest === 'string' ? DIGEST.exec(digest) : null;
  if (!m) {
    throw new InvalidInputError(`${field} must be "sha256:" and 64 lowercase hex digits, got ${JSON.stringify(digest)?.slice(0, 80)}`, field);
  }
  return hexToBytes(m[1]!);
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
