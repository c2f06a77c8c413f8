/**
 * The local embedding model in Node (decision 0036): all-MiniLM-L6-v2 (int8) on
 * onnxruntime-node, from the files scripts/fetch-model.sh puts in place. Every file is hashed
 * before use: a file without its pinned SHA-256 is refused, never loaded.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import { ModelUnavailableError } from '../errors.js';
import type { Embedder } from '../semantic/embedder.js';
import { MINILM, MiniLmTokenizer, meanPool, type MiniLmFile } from '../semantic/minilm.js';

/**
 * Texts per model call: one. The int8 model quantizes its activations per call (dynamic
 * quantization: one scale over the whole batch, padding included), so a text's vector would
 * depend on what it was batched with — 0.02 apart, measured — and Node and the browser would
 * disagree whenever they batch differently. Alone, it is also faster here (no padding): 43
 * texts of 156 tokens a second against 37-39 in batches of 16, one thread.
 */
const BATCH = 1;

/** Where fetch-model.sh puts the model: $KURA_MODEL_DIR, else ~/.cache/kura/models/all-MiniLM-L6-v2-int8. */
export function defaultModelDir(): string {
  return process.env.KURA_MODEL_DIR ?? join(process.env.KURA_CACHE ?? join(homedir(), '.cache', 'kura'), 'models', 'all-MiniLM-L6-v2-int8');
}

async function checkedFile(dir: string, name: MiniLmFile): Promise<Buffer> {
  let bytes: Buffer;
  try {
    bytes = await readFile(join(dir, name));
  } catch {
    throw new ModelUnavailableError(`the embedding model's ${name} is not in ${dir}: run scripts/fetch-model.sh (or set KURA_MODEL_DIR)`, MINILM.model);
  }
  const sha = createHash('sha256').update(bytes).digest('hex');
  if (sha !== MINILM.files[name]) {
    throw new ModelUnavailableError(`${join(dir, name)} has sha256 ${sha}, not the pinned ${MINILM.files[name]}: refused (run scripts/fetch-model.sh)`, MINILM.model);
  }
  return bytes;
}

class MiniLmNode implements Embedder {
  readonly model = MINILM.model;
  readonly dims = MINILM.dims;
  readonly maxTokens = MINILM.maxTokens - 2;

  constructor(
    readonly session: InferenceSession,
    readonly tensor: typeof Tensor,
    readonly tokenizer: MiniLmTokenizer,
  ) {}

  countTokens(text: string): number {
    return this.tokenizer.countTokens(text);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      const batch = this.tokenizer.batch(texts.slice(i, i + BATCH));
      const shape = [batch.size, batch.length];
      const result = await this.session.run({
        input_ids: new this.tensor('int64', batch.ids, shape),
        attention_mask: new this.tensor('int64', batch.mask, shape),
        token_type_ids: new this.tensor('int64', batch.types, shape),
      });
      out.push(...meanPool(result.last_hidden_state!.data as Float32Array, batch));
    }
    return out;
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

/**
 * Loads the model from `dir`; ModelUnavailableError when a file is missing or not the pinned
 * one, or the runtime fails. `threads`: onnxruntime's intra-op threads (1 by default, so
 * background embedding leaves the other core to puts and requests).
 */
export async function loadMiniLm(dir: string = defaultModelDir(), options: { threads?: number } = {}): Promise<Embedder> {
  const [model, tokenizerJson, tokenizerConfig] = await Promise.all([
    checkedFile(dir, 'model.onnx'),
    checkedFile(dir, 'tokenizer.json'),
    checkedFile(dir, 'tokenizer_config.json'),
  ]);
  try {
    const ort = await import('onnxruntime-node');
    const session = await ort.InferenceSession.create(model, { intraOpNumThreads: options.threads ?? 1, interOpNumThreads: 1, graphOptimizationLevel: 'all' });
    const tokenizer = new MiniLmTokenizer(JSON.parse(tokenizerJson.toString('utf8')), JSON.parse(tokenizerConfig.toString('utf8')));
    return new MiniLmNode(session, ort.Tensor, tokenizer);
  } catch (e) {
    throw new ModelUnavailableError(`the embedding model could not be loaded: ${(e as Error).message}`, MINILM.model);
  }
}
