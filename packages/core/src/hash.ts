/**
 * SHA-256 (document digests, written `sha256:<hex>`) and BLAKE3-256 (chunk keys, 64 hex),
 * one-shot and incremental. Inputs larger than one block are fed to wasm in BLOCK pieces, so
 * the wasm memory stays small whatever the input size.
 */
import { assertBytes, toHex } from './bytes.js';
import { InvalidStateError } from './errors.js';
import { copyIn, forEachBlock, output, wasm, BLOCK } from './wasm/instance.js';

/** A document digest: `sha256:` and 64 lowercase hex digits. */
export type Digest = `sha256:${string}`;

export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;
export const KEY_PATTERN = /^[0-9a-f]{64}$/;

export function sha256(data: Uint8Array): Digest {
  assertBytes(data, 'data');
  if (data.length <= BLOCK) {
    wasm().kura_sha256(copyIn(data));
    return `sha256:${toHex(output())}`;
  }
  return new Sha256().update(data).digest();
}

export function blake3(data: Uint8Array): string {
  assertBytes(data, 'data');
  if (data.length <= BLOCK) {
    wasm().kura_blake3(copyIn(data));
    return toHex(output());
  }
  return new Blake3().update(data).digest();
}

/** Frees wasm handles of hashers that were dropped without `digest()`/`dispose()`. */
const registry = new FinalizationRegistry<() => void>((free) => free());

abstract class WasmHasher<D extends string> {
  #handle: number;

  constructor(handle: number, free: (h: number) => void) {
    this.#handle = handle;
    registry.register(this, () => free(handle), this);
  }

  protected abstract updateHandle(h: number, len: number): void;
  protected abstract finishHandle(h: number): void;
  protected abstract freeHandle(h: number): void;
  protected abstract format(bytes: Uint8Array): D;

  /** Feeds more bytes; returns `this` for chaining. */
  update(data: Uint8Array): this {
    assertBytes(data, 'data');
    const h = this.live();
    if (data.length > 0) forEachBlock(data, (len) => this.updateHandle(h, len));
    return this;
  }

  /** The digest of everything fed; the hasher is finished afterwards. */
  digest(): D {
    const h = this.live();
    this.#handle = 0;
    registry.unregister(this);
    this.finishHandle(h);
    return this.format(output());
  }

  /** Releases the hasher without a digest. Idempotent. */
  dispose(): void {
    if (this.#handle === 0) return;
    registry.unregister(this);
    this.freeHandle(this.#handle);
    this.#handle = 0;
  }

  private live(): number {
    if (this.#handle === 0) throw new InvalidStateError(`${this.constructor.name} already finished`);
    return this.#handle;
  }
}

export class Sha256 extends WasmHasher<Digest> {
  constructor() {
    super(wasm().kura_sha256_new(), (h) => wasm().kura_sha256_free(h));
  }
  protected updateHandle(h: number, len: number): void {
    wasm().kura_sha256_update(h, len);
  }
  protected finishHandle(h: number): void {
    wasm().kura_sha256_finish(h);
  }
  protected freeHandle(h: number): void {
    wasm().kura_sha256_free(h);
  }
  protected format(bytes: Uint8Array): Digest {
    return `sha256:${toHex(bytes)}`;
  }
}

export class Blake3 extends WasmHasher<string> {
  constructor() {
    super(wasm().kura_blake3_new(), (h) => wasm().kura_blake3_free(h));
  }
  protected updateHandle(h: number, len: number): void {
    wasm().kura_blake3_update(h, len);
  }
  protected finishHandle(h: number): void {
    wasm().kura_blake3_finish(h);
  }
  protected freeHandle(h: number): void {
    wasm().kura_blake3_free(h);
  }
  protected format(bytes: Uint8Array): string {
    return toHex(bytes);
  }
}
