/**
 * An embedder for tests only, and named so: each word hashed into one of `dims` buckets. It
 * matches words, never meaning (0.187 nDCG@10 on the collection SEMANTIC.md measures, half of
 * BM25): a test of semantic search that this embedder passes does not test meaning.
 */
import type { Embedder } from './embedder.js';
import { normalize } from './embedder.js';

const WORD = /[\p{L}\p{N}]+/gu;

/** FNV-1a over the UTF-16 code units of a word. */
function fnv1a(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) {
    h ^= word.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class HashingEmbedderForTests implements Embedder {
  readonly model: string;
  readonly maxTokens = 512;

  constructor(readonly dims = 384) {
    this.model = `hashing-for-tests-${dims}`;
  }

  countTokens(text: string): number {
    return text.match(WORD)?.length ?? 0;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => {
      const v = new Float32Array(this.dims);
      for (const w of t.toLowerCase().match(WORD) ?? []) {
        const h = fnv1a(w);
        v[h % this.dims]! += h & 0x80000000 ? -1 : 1;
      }
      return normalize(v);
    });
  }

  async close(): Promise<void> {}
}
