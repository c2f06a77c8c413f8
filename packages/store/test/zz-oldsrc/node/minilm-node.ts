/**
 * The local embedding model in Node (decision 0036): all-MiniLM-L6-v2 (int8) on
 * onnxruntime-node, from the files scripts/fetch-model.sh puts in place. Every file is hashed
 * before use: a file without its pinned SHA-256 is refused, never loaded.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ModelUnavailableError } from '../errors.js';
import type { Embedder } from '../semantic/embedder.js';
import { MINILM, MiniLmEmbedder, MiniLmTokenizer, checkModelFile, ortRuntime, type MiniLmFile } from '../semantic/minilm.js';

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
  checkModelFile(name, bytes, createHash('sha256').update(bytes).digest('hex'), join(dir, name));
  return bytes;
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
    return new MiniLmEmbedder(ortRuntime(session, ort.Tensor), tokenizer);
  } catch (e) {
    throw new ModelUnavailableError(`the embedding model could not be loaded: ${(e as Error).message}`, MINILM.model);
  }
}
