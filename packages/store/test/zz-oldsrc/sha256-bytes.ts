/**
 * SHA-256 as bytes, for the store's own structures (log frames, pack indexes). The wasm core's
 * by default; a platform with a faster one installs it (Node's native SHA-256 is ~4x the wasm
 * one's speed on a 50 KB commit, and spares the hex round trip). The digests are the same, so
 * what one platform writes another reads.
 */
import { sha256 } from '@kura/core';
import { hexToBytes } from './hex.js';

let impl = (bytes: Uint8Array): Uint8Array => hexToBytes(sha256(bytes).slice(7));

export function sha256Bytes(bytes: Uint8Array): Uint8Array {
  return impl(bytes);
}

/** Installs a platform's SHA-256 (node/backends.ts). */
export function useSha256(fn: (bytes: Uint8Array) => Uint8Array): void {
  impl = fn;
}
