/**
 * all-MiniLM-L6-v2 (int8 ONNX) without its runtime (decision 0036): the files and their
 * pinned hashes, tokenizing to the model's inputs, and mean pooling its output into one
 * L2-normalised vector per text. Node (node/minilm-node.ts) and the browser run it with their
 * own onnxruntime; everything here is the same code on both, so they agree.
 */
import { Tokenizer } from '@huggingface/tokenizers';
import { ModelUnavailableError } from '../errors.js';
import { normalize, type Embedder } from './embedder.js';

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

/** Where a Kura server serves the model's files to browsers (its demo embeds there too). */
export const MODEL_PATH = '/models/all-MiniLM-L6-v2-int8/';

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

/**
 * `bytes` of the model's file `name` if their SHA-256 (`sha256`, hex) is the pinned one;
 * otherwise refused (ModelUnavailableError), never loaded. `where` names the file in the error.
 */
export function checkModelFile(name: MiniLmFile, bytes: Uint8Array, sha256: string, where: string): Uint8Array {
  if (sha256 !== MINILM.files[name]) {
    throw new ModelUnavailableError(`${where} has sha256 ${sha256}, not the pinned ${MINILM.files[name]}: refused (fetch the model again: scripts/fetch-model.sh)`, MINILM.model);
  }
  return bytes;
}

/**
 * Texts per model call: one. The int8 model quantizes its activations per call (dynamic
 * quantization: one scale over the whole batch, padding included), so a text's vector would
 * depend on what it was batched with — 0.02 apart, measured — and Node and the browser would
 * disagree whenever they batch differently. Alone, it is also faster here (no padding): 43
 * texts of 156 tokens a second against 37-39 in batches of 16, one thread.
 */
const BATCH = 1;

/** The model's runtime, as MiniLmEmbedder needs it: one batch in, `last_hidden_state` out. */
export interface MiniLmRuntime {
  run(batch: MiniLmBatch): Promise<Float32Array>;
  release(): Promise<void>;
}

/** What a runtime needs of onnxruntime: the API onnxruntime-node and onnxruntime-web share. */
export interface OrtSession {
  run(feeds: Record<string, unknown>): Promise<Record<string, { data: unknown }>>;
  release(): Promise<void>;
}
export type OrtTensor = new (type: 'int64', data: BigInt64Array, dims: number[]) => unknown;

/** The runtime over an onnxruntime session of the model (its three int64 inputs, one output). */
export function ortRuntime(session: OrtSession, Tensor: OrtTensor): MiniLmRuntime {
  return {
    async run(batch) {
      const shape = [batch.size, batch.length];
      const result = await session.run({
        input_ids: new Tensor('int64', batch.ids, shape),
        attention_mask: new Tensor('int64', batch.mask, shape),
        token_type_ids: new Tensor('int64', batch.types, shape),
      });
      return result.last_hidden_state!.data as Float32Array;
    },
    release: () => session.release(),
  };
}

/** The model as an Embedder on a runtime (onnxruntime-node, onnxruntime-web): the same code on both. */
export class MiniLmEmbedder implements Embedder {
  readonly model = MINILM.model;
  readonly latinOnly = true;
  readonly dims = MINILM.dims;
  readonly maxTokens = MINILM.maxTokens - 2;

  constructor(
    readonly runtime: MiniLmRuntime,
    readonly tokenizer: MiniLmTokenizer,
  ) {}

  countTokens(text: string): number {
    return this.tokenizer.countTokens(text);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      const batch = this.tokenizer.batch(texts.slice(i, i + BATCH));
      out.push(...meanPool(await this.runtime.run(batch), batch));
    }
    return out;
  }

  close(): Promise<void> {
    return this.runtime.release();
  }
}
