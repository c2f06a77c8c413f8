/**
 * The raw bytes of one group of new chunks (grouped compression, FORMAT.md §6.2), gathered in
 * wasm memory and compressed there as one frame. Members come from an ingester's deferred
 * chunks (`Ingester.groupRecord`: no copy out of wasm and back) or as bytes (`add`).
 */
import { assertBytes } from './bytes.js';
import { assertLevel } from './compress.js';
import { InvalidInputError, InvalidStateError } from './errors.js';
import { check, copyOut, forEachBlock, output, wasm } from './wasm/instance.js';

const registry = new FinalizationRegistry<number>((g) => wasm().kura_group_free(g));

export class GroupBuffer {
  #handle: number;
  #length = 0;

  constructor() {
    this.#handle = wasm().kura_group_new();
    registry.register(this, this.#handle, this);
  }

  /** Bytes gathered since the last `clear`. */
  get length(): number {
    return this.#length;
  }

  /** Appends a copy of `bytes`. */
  add(bytes: Uint8Array): void {
    assertBytes(bytes, 'bytes');
    const g = this.handle();
    if (bytes.length === 0) return;
    forEachBlock(bytes, (len) => this.grew(check(wasm().kura_group_add_input(g, len), 'GroupBuffer.add')));
  }

  /**
   * The bytes as one zstd frame (a copy), decided as `encodeChunk` decides a chunk's: when they
   * do not look random and the frame saves at least 1/16 — else undefined (they stay raw).
   */
  compress(level: number): Uint8Array | undefined {
    assertLevel(level);
    const n = check(wasm().kura_group_encode(this.handle(), level), 'GroupBuffer.compress');
    return n === 0 ? undefined : output();
  }

  /** A copy of `length` bytes from `at`. */
  slice(at: number, length: number): Uint8Array {
    if (!Number.isInteger(at) || !Number.isInteger(length) || at < 0 || length < 0 || at + length > this.#length) {
      throw new InvalidInputError(`GroupBuffer.slice(${at}, ${length}) is outside its ${this.#length} bytes`, 'range');
    }
    return copyOut(wasm().kura_group_raw(this.handle()) + at, length);
  }

  /** Empties the buffer (wasm keeps its capacity for the next group). */
  clear(): void {
    wasm().kura_group_clear(this.handle());
    this.#length = 0;
  }

  dispose(): void {
    if (this.#handle === 0) return;
    registry.unregister(this);
    wasm().kura_group_free(this.#handle);
    this.#handle = 0;
  }

  /** @internal The wasm handle (Ingester.groupRecord). */
  handle(): number {
    if (this.#handle === 0) throw new InvalidStateError('GroupBuffer already disposed');
    return this.#handle;
  }

  /** @internal The kernel's answer to an append: the new length. */
  grew(length: number): void {
    this.#length = length;
  }
}
