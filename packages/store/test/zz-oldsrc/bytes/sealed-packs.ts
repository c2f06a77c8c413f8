/**
 * On an object store (decision 0040): the operations of packs sealed since the last commit —
 * uploaded, or carried by the next commit's object (decision 0044) — which the next commit
 * carries before its puts. A pack gets its row only in the commit after its upload.
 */
import { carriedBytes, carrying, type Op } from '../catalog/ops.js';
import { UPLOAD_MAX_AGE_MS } from './gc-reclaim.js';

/** When a pack was sealed: a symbol-keyed property of its `pack` operation, which the log never sees. */
const SEALED_AT = Symbol('sealed at');

export class SealedPacks {
  readonly #ops: Op[] = [];

  /** A pack sealed at `at`, `size` bytes; `carried`: its bytes, which ride in the next commit's object. */
  add(name: string, writer: string, size: number, at: number, carried?: Uint8Array): void {
    const op: Op = carried ? carrying({ op: 'pack', name, writer, inline: true }, carried) : { op: 'pack', name, writer };
    (op as { [SEALED_AT]?: number })[SEALED_AT] = at;
    this.#ops.push(op, { op: 'pack-size', name, size, sealed: true });
  }

  /** Whether a pack waiting for the next commit rides in it (a commit carries one at most). */
  get carrying(): boolean {
    return this.#ops.some((op) => carriedBytes(op) !== undefined);
  }

  /** Operations `take` answered that did not reach the log: the next commit carries them. */
  giveBack(ops: readonly Op[]): void {
    this.#ops.unshift(...ops);
  }

  /**
   * The operations for the next commit, but for packs sealed more than UPLOAD_MAX_AGE_MS ago
   * (their commits kept failing): another server's GC may take such an object for an orphan
   * (decision 0041). The puts that placed chunks in them fail with MISSING_CHUNKS; put again,
   * they upload anew.
   */
  take(): Op[] {
    const ops = this.#ops.splice(0);
    const now = Date.now();
    const stale = new Set(ops.filter((op) => op.op === 'pack' && now - ((op as { [SEALED_AT]?: number })[SEALED_AT] ?? now) > UPLOAD_MAX_AGE_MS).map((op) => (op as { name: string }).name));
    return stale.size ? ops.filter((op) => !('name' in op && stale.has(op.name))) : ops;
  }
}
