/**
 * all-MiniLM-L6-v2 (int8 ONNX) without its runtime (decision 0036): the files and their
 * pinned hashes, tokenizing to the model's inputs, and mean pooling its output into one
 * L2-normalised vector per text. Node (node/minilm-node.ts) and the browser run it with their
 * own onnxruntime; everything here is the same code on both, so they agree.
 */
import { Tokenizer } from '@huggingface/tokenizers';
import { normalize } from './embedder.js';

export const MINILM = {
  /** The id recorded with its vectors: the model, and the first digits of its file's hash. */
  model: 'all-MiniLM-L6-v2-int8@8199be6f',
  dims: 384,
  /** sentence-transformers' max_seq_length for this model (tokens, [CLS] and [SEP] included). */
  maxTokens: 256,
  /** SHA-256 of each file (scripts/fetch-model.sh pins the same). */
  files: {
    'model.onnx': '8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6',
    'tokenizer.json': 'be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037',
    'tokenizer_config.json': 'acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b',
  },
} as const;

export type MiniLmFile = keyof typeof MINILM.files;

/** The model's three int64 inputs for a batch of texts, padded to the longest. */
export interface MiniLmBatch {
  ids: BigInt64Array;
  mask: BigInt64Array;
  types: BigInt64Array;
  /** Texts, and tokens per text (padded). */
  size: number;
  length: number;
  /** Tokens of each text (the rest of its row is padding). */
  lengths: number[];
}

export class MiniLmTokenizer {
  readonly #tokenizer: Tokenizer;

  constructor(tokenizerJson: unknown, tokenizerConfig: unknown) {
    this.#tokenizer = new Tokenizer(tokenizerJson as object, tokenizerConfig as object);
  }

  /** Token ids with [CLS] and [SEP], cut to the model's maximum. */
  ids(text: string): number[] {
    const ids = this.#tokenizer.encode(text).ids;
    if (ids.length <= MINILM.maxTokens) return ids;
    return [...ids.slice(0, MINILM.maxTokens - 1), ids.at(-1)!]; // keep [SEP] last
  }

  countTokens(text: string): number {
    return Math.max(0, this.#tokenizer.encode(text).ids.length - 2);
  }

  batch(texts: readonly string[]): MiniLmBatch {
    const all = texts.map((t) => this.ids(t));
    const length = Math.max(1, ...all.map((ids) => ids.length));
    const size = texts.length;
    const ids = new BigInt64Array(size * length);
    const mask = new BigInt64Array(size * length);
    all.forEach((row, b) =>
      row.forEach((id, i) => {
        ids[b * length + i] = BigInt(id);
        mask[b * length + i] = 1n;
      }),
    );
    return { ids, mask, types: new BigInt64Array(size * length), size, length, lengths: all.map((r) => r.length) };
  }
}

/** Mean of each text's token vectors over its real tokens (the attention mask), normalised. */
export function meanPool(hidden: Float32Array, batch: MiniLmBatch, dims: number = MINILM.dims): Float32Array[] {
  const out: Float32Array[] = [];
  for (let b = 0; b < batch.size; b++) {
    const v = new Float32Array(dims);
    const n = batch.lengths[b]!;
    for (let t = 0; t < n; t++) {
      const at = (b * batch.length + t) * dims;
      for (let d = 0; d < dims; d++) v[d]! += hidden[at + d]!;
    }
    for (let d = 0; d < dims; d++) v[d]! /= n;
    out.push(normalize(v));
  }
  return out;
}
