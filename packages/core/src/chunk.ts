/**
 * FastCDC 2020 chunking: one-shot over a buffer (all lengths in one typed array) and a
 * streaming chunker whose boundaries do not depend on how the input is split.
 */
import { assertBytes } from './bytes.js';
import { InvalidStateError } from './errors.js';
import { resolveChunkParams, seedWords, type ChunkParams, type ResolvedChunkParams } from './params.js';
import { pieces, type ByteSource } from './source.js';
import { BLOCK, check, copyIn, copyU32, forEachBlock, wasm } from './wasm/instance.js';

export interface ChunkSpan {
  offset: number;
  length: number;
}

/** The lengths of all chunks of `data`, taken as a whole document. */
export function chunkLengths(data: Uint8Array, params?: ChunkParams): Uint32Array {
  assertBytes(data, 'data');
  const p = resolveChunkParams(params);
  if (data.length <= BLOCK) {
    const w = wasm();
    const count = check(w.kura_cdc_oneshot(p.min, p.avg, p.max, ...seedWords(p), copyIn(data)), 'chunk');
    return copyU32(w.kura_lengths_ptr(), count);
  }
  const c = new Chunker(p);
  const parts = [c.update(data), c.finish()];
  const out = new Uint32Array(parts[0]!.length + parts[1]!.length);
  out.set(parts[0]!);
  out.set(parts[1]!, parts[0]!.length);
  return out;
}

/** The chunks of `data` as offset/length spans. */
export function chunk(data: Uint8Array, params?: ChunkParams): ChunkSpan[] {
  const spans: ChunkSpan[] = [];
  let offset = 0;
  for (const length of chunkLengths(data, params)) {
    spans.push({ offset, length });
    offset += length;
  }
  return spans;
}

const registry = new FinalizationRegistry<number>((h) => wasm().kura_cdc_free(h));

/**
 * A streaming chunker. `update` returns the lengths of the chunks the new bytes completed,
 * `finish` those of the rest; at most one pending chunk (< max bytes) is held in between.
 */
export class Chunker {
  readonly params: ResolvedChunkParams;
  #handle: number;

  constructor(params?: ChunkParams | ResolvedChunkParams) {
    const p = resolveChunkParams(params as ChunkParams);
    this.params = p;
    const h = wasm().kura_cdc_new(p.min, p.avg, p.max, ...seedWords(p));
    if (h === 0) check(-wasm().kura_last_error(), 'Chunker');
    this.#handle = h;
    registry.register(this, h, this);
  }

  update(data: Uint8Array): Uint32Array {
    assertBytes(data, 'data');
    const h = this.live();
    const parts: Uint32Array[] = [];
    forEachBlock(data, (len) => {
      const n = check(wasm().kura_cdc_update(h, len), 'Chunker.update');
      if (n > 0) parts.push(copyU32(wasm().kura_cdc_lengths(h), n));
    });
    return concat(parts);
  }

  /** Lengths of the final chunk(s); frees the chunker. */
  finish(): Uint32Array {
    const h = this.live();
    try {
      const n = check(wasm().kura_cdc_finish(h), 'Chunker.finish');
      return copyU32(wasm().kura_cdc_lengths(h), n);
    } finally {
      this.dispose();
    }
  }

  dispose(): void {
    if (this.#handle === 0) return;
    registry.unregister(this);
    wasm().kura_cdc_free(this.#handle);
    this.#handle = 0;
  }

  private live(): number {
    if (this.#handle === 0) throw new InvalidStateError('Chunker already finished');
    return this.#handle;
  }
}

function concat(parts: Uint32Array[]): Uint32Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Chunk spans of a streamed document, yielded as soon as each boundary is final. */
export async function* chunkStream(source: ByteSource, params?: ChunkParams): AsyncGenerator<ChunkSpan, void, undefined> {
  const chunker = new Chunker(params);
  let offset = 0;
  try {
    for await (const piece of pieces(source)) {
      for (const length of chunker.update(piece)) {
        yield { offset, length };
        offset += length;
      }
    }
    for (const length of chunker.finish()) {
      yield { offset, length };
      offset += length;
    }
  } finally {
    chunker.dispose();
  }
}
