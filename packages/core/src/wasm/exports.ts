/**
 * The raw exports of `kura_core.wasm` (wasm-core/src/ffi.rs is the authority). Pointers and
 * handles are byte addresses in the module's memory; `i32` results are a count or length, or
 * `-code` of an error (see `wasmError`).
 */
export interface KuraWasmExports {
  readonly memory: WebAssembly.Memory;
  kura_input(len: number): number;
  kura_out_ptr(): number;
  kura_out_len(): number;
  kura_last_error(): number;

  kura_sha256(len: number): void;
  kura_blake3(len: number): void;
  kura_sha256_new(): number;
  kura_sha256_update(h: number, len: number): void;
  kura_sha256_finish(h: number): void;
  kura_sha256_free(h: number): void;
  kura_blake3_new(): number;
  kura_blake3_update(h: number, len: number): void;
  kura_blake3_finish(h: number): void;
  kura_blake3_free(h: number): void;

  kura_cdc_oneshot(min: number, avg: number, max: number, seedLo: number, seedHi: number, len: number): number;
  kura_lengths_ptr(): number;
  kura_cdc_new(min: number, avg: number, max: number, seedLo: number, seedHi: number): number;
  kura_cdc_update(h: number, len: number): number;
  kura_cdc_finish(h: number): number;
  kura_cdc_lengths(h: number): number;
  kura_cdc_free(h: number): void;

  kura_zstd_compress(level: number, len: number): number;
  /** Frame length (frame in the output region), 0 for "store raw", or -code. */
  kura_chunk_encode(level: number, len: number): number;
  kura_zstd_decompress(len: number, expected: number): number;

  kura_ingest_new(
    min: number,
    avg: number,
    max: number,
    seedLo: number,
    seedHi: number,
    level: number,
    flags: number,
  ): number;
  kura_ingest_update(h: number, len: number): number;
  kura_ingest_finish(h: number): number;
  kura_ingest_records(h: number): number;
  kura_ingest_digest(h: number): number;
  kura_ingest_free(h: number): void;

  kura_group_new(): number;
  /** The group's length, or -code. */
  kura_group_add_record(g: number, h: number, index: number): number;
  kura_group_add_input(g: number, len: number): number;
  /** Frame length (frame in the output region), 0 for "keep raw", or -code. */
  kura_group_encode(g: number, level: number): number;
  kura_group_raw(g: number): number;
  kura_group_clear(g: number): void;
  kura_group_free(g: number): void;

  kura_rows_new(dims: number): number;
  kura_rows_push(h: number, count: number, len: number): number;
  kura_rows_scores(h: number, len: number): number;
  kura_rows_top(h: number, k: number, len: number): number;
  kura_rows_clear(h: number): void;
  kura_rows_free(h: number): void;

  kura_grep_new(ignoreCase: number, len: number): number;
  kura_grep_lines(h: number, len: number): number;
  kura_grep_matches(h: number, len: number): number;
  kura_grep_free(h: number): void;

  /** Input: key, nonce, associated data (adLen), plaintext (len); output: nonce, ciphertext, tag. */
  kura_seal(adLen: number, len: number): number;
  /** Input: key, associated data (adLen), sealed bytes (len); output: the plaintext, or -code. */
  kura_open(adLen: number, len: number): number;
  kura_argon2id(memoryKib: number, passes: number, lanes: number, passwordLen: number, saltLen: number, secretLen: number, adLen: number, outLen: number): number;
  kura_blake3_keyed(len: number): number;
  kura_blake3_derive_key(contextLen: number, len: number): number;
}

/** Error codes of wasm-core/src/error.rs. */
export const WASM_ERROR = {
  invalidParams: 1,
  invalidLevel: 2,
  corruptFrame: 3,
  frameTooLarge: 4,
  frameTooShort: 5,
  invalidState: 6,
  compressFailed: 7,
  invalidShape: 8,
  invalidPattern: 9,
  unauthentic: 10,
  invalidKdfParams: 11,
} as const;
