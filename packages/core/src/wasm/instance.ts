/**
 * The one wasm instance of this JS realm and the helpers that move bytes across its
 * boundary. Entry points (node.ts, browser.ts) load the module and call `setWasm`; every API
 * function reaches the instance through `wasm()`.
 *
 * Memory views are rebuilt whenever the module's memory has grown (growth detaches the old
 * ArrayBuffer), the way hash-wasm's WASMInterface does.
 */
import { CorruptDataError, InternalError, InvalidInputError, InvalidStateError, type KuraError } from '../errors.js';
import { WASM_ERROR, type KuraWasmExports } from './exports.js';

let exports: KuraWasmExports | undefined;
let view = new Uint8Array(0);

/** Largest piece copied into wasm memory per call: keeps the input region small. */
export const BLOCK = 1 << 20;

const REQUIRED = ['memory', 'kura_input', 'kura_ingest_update', 'kura_zstd_decompress', 'kura_cdc_new', 'kura_seal'] as const;

export function setWasm(instance: WebAssembly.Instance): void {
  const e = instance.exports as unknown as KuraWasmExports;
  for (const name of REQUIRED) {
    if (!(name in e)) throw new InternalError(`kura_core.wasm lacks export ${name}: rebuild it (scripts/build-wasm.sh)`);
  }
  exports = e;
  // Growing by nothing detaches the memory's first ArrayBuffer now, as the first real growth
  // would later: V8 then never optimizes typed-array code on the promise that no buffer is ever
  // detached. Kept, that promise broke at the first growth mid-run — in a 10,000-file snapshot,
  // near its end — and all such code (hashing, hex, packing, the put path) was thrown away and
  // compiled again (docs/findings/first-snapshot-cpu-budget.md).
  e.memory.grow(0);
  view = new Uint8Array(e.memory.buffer);
}

export function wasm(): KuraWasmExports {
  if (!exports) throw new InternalError('Kura wasm core is not loaded');
  return exports;
}

/** A byte view of the whole memory, current after any growth. */
export function memory(): Uint8Array {
  const buf = wasm().memory.buffer;
  if (view.buffer !== buf) view = new Uint8Array(buf);
  return view;
}

/** Copies `bytes` (at most BLOCK at a time is the caller's business) into the input region. */
export function copyIn(bytes: Uint8Array): number {
  const ptr = wasm().kura_input(bytes.length) >>> 0; // see copyOut
  memory().set(bytes, ptr);
  return bytes.length;
}

/** Copies `parts` end to end into the input region (calls whose input is several fields). */
export function copyInParts(parts: Uint8Array[]): number {
  const total = parts.reduce((n, p) => n + p.length, 0);
  let at = wasm().kura_input(total) >>> 0;
  const mem = memory();
  for (const p of parts) {
    mem.set(p, at);
    at += p.length;
  }
  return total;
}

/** Calls `fn(piece)` for successive BLOCK-sized pieces of `bytes` (once for empty input). */
export function forEachBlock(bytes: Uint8Array, fn: (len: number) => void): void {
  if (bytes.length === 0) {
    fn(copyIn(bytes));
    return;
  }
  for (let at = 0; at < bytes.length; at += BLOCK) {
    fn(copyIn(bytes.subarray(at, Math.min(at + BLOCK, bytes.length))));
  }
}

/**
 * A copy of `len` bytes at `ptr`. Pointers cross the boundary as wasm i32, which JavaScript
 * reads as signed: a region placed past 2 GiB (memory grown by a huge decompression) would
 * come back negative, and a negative offset is a RangeError here, so they are read unsigned.
 */
export function copyOut(ptr: number, len: number): Uint8Array {
  const at = ptr >>> 0;
  return memory().slice(at, at + len);
}

/** A copy of the output region. */
export function output(): Uint8Array {
  const w = wasm();
  return copyOut(w.kura_out_ptr(), w.kura_out_len());
}

/** A copy of `count` u32 values at `ptr` (4-byte aligned by construction in ffi.rs). */
export function copyU32(ptr: number, count: number): Uint32Array {
  return new Uint32Array(wasm().memory.buffer, ptr >>> 0, count).slice(); // unsigned: see copyOut
}

/** Maps a negative wasm result to the typed error; returns non-negative results as they are. */
export function check(result: number, what: string): number {
  if (result >= 0) return result;
  throw wasmError(-result, what);
}

export function wasmError(code: number, what: string): KuraError {
  switch (code) {
    case WASM_ERROR.invalidParams:
      return new InvalidInputError(`${what}: invalid chunking parameters`, 'chunking');
    case WASM_ERROR.invalidLevel:
      return new InvalidInputError(`${what}: compression level out of range`, 'level');
    case WASM_ERROR.corruptFrame:
      return new CorruptDataError(`${what}: corrupt or truncated zstd frame`, 'corrupt-frame');
    case WASM_ERROR.frameTooLarge:
      return new CorruptDataError(`${what}: zstd frame exceeds the expected length`, 'too-large');
    case WASM_ERROR.frameTooShort:
      return new CorruptDataError(`${what}: zstd frame is shorter than the expected length`, 'too-short');
    case WASM_ERROR.invalidState:
      return new InvalidStateError(`${what}: already finished`);
    case WASM_ERROR.unauthentic:
      return new CorruptDataError(`${what}: failed authentication (tampered with, or sealed under another key)`, 'unauthentic');
    case WASM_ERROR.invalidKdfParams:
      return new InvalidInputError(`${what}: key derivation parameters out of range`, 'kdf');
    case WASM_ERROR.invalidShape:
      return new InvalidInputError(`${what}: vectors of the wrong length for the rows' dimensions`, 'vectors');
    default:
      return new InternalError(`${what}: wasm core error ${code}`);
  }
}
