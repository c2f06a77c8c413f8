/**
 * Node entry point: compiles kura_core.wasm synchronously at import (Node allows it), so the
 * whole API is synchronous; the document digest of ingest defaults to node:crypto's SHA-256
 * (SHA-NI), measured ~10x the wasm one on this project's machines (bench/core), and large
 * plaintexts are sealed through OpenSSL (node-aead.ts).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setDefaultDocumentHasher } from './ingest.js';
import { setNativeAead } from './crypto.js';
import { OPENSSL_AEAD } from './node-aead.js';
import { setWasm } from './wasm/instance.js';

export * from './api.js';

const WASM_URL = new URL('../wasm/kura_core.wasm', import.meta.url);

function load(): void {
  let bytes: Buffer;
  try {
    bytes = readFileSync(WASM_URL);
  } catch (cause) {
    throw new Error(`@kura/core: cannot read ${WASM_URL.pathname}; build it with scripts/build-wasm.sh`, { cause });
  }
  // A Buffer is a Uint8Array view; the cast only narrows @types/node's ArrayBufferLike.
  setWasm(new WebAssembly.Instance(new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>), {}));
}

load();

setDefaultDocumentHasher(() => {
  const h = createHash('sha256');
  return { update: (data) => void h.update(data), digest: () => h.digest() };
});

// Large plaintexts sealed through OpenSSL (the same bytes: node-aead.ts), 1.8x wasm at 16 KiB.
setNativeAead(OPENSSL_AEAD);
