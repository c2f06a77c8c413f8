/**
 * The local embedding model in the browser (decision 0036): all-MiniLM-L6-v2 (int8) on
 * onnxruntime-web's wasm backend, its files fetched from a folder URL (the Kura server serves
 * them at /models/all-MiniLM-L6-v2-int8/ when installed) and hashed before use, like Node's.
 * Everything but the runtime is semantic/minilm.ts, the same code as Node's: the vectors agree.
 */
import { Sha256 } from '@kura/core';
import { ModelUnavailableError } from '../errors.js';
import type { Embedder } from '../semantic/embedder.js';
import { MINILM, MiniLmEmbedder, MiniLmTokenizer, checkModelFile, ortRuntime, type MiniLmFile } from '../semantic/minilm.js';

/** `name` from the folder at `base`, refused unless it hashes to its pinned SHA-256. */
async function fetchChecked(base: string, name: MiniLmFile): Promise<Uint8Array> {
  const url = new URL(name, base.endsWith('/') ? base : `${base}/`).href; // (a folder, even without its slash)
  let res: Response;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new ModelUnavailableError(`the embedding model's ${name} could not be fetched from ${url}: ${(e as Error).message}`, MINILM.model);
  }
  if (!res.ok) throw new ModelUnavailableError(`the embedding model's ${name} is not at ${url} (HTTP ${res.status}): the server has no model installed`, MINILM.model);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const hash = new Sha256();
  hash.update(bytes);
  return checkModelFile(name, bytes, hash.digest().slice('sha256:'.length), url);
}

const json = (bytes: Uint8Array): unknown => JSON.parse(new TextDecoder().decode(bytes));

/** The model's tokenizer from the folder at `base` (the store's side cuts chunks with it). */
export async function fetchMiniLmTokenizer(base: string): Promise<MiniLmTokenizer> {
  const [tokenizer, config] = await Promise.all([fetchChecked(base, 'tokenizer.json'), fetchChecked(base, 'tokenizer_config.json')]);
  return new MiniLmTokenizer(json(tokenizer), json(config));
}

/** Loads the model from the folder at `base` (a URL); ModelUnavailableError when it cannot. */
export async function loadMiniLmWeb(base: string): Promise<Embedder> {
  const [model, tokenizer] = await Promise.all([fetchChecked(base, 'model.onnx'), fetchMiniLmTokenizer(base)]);
  try {
    const ort = await import('onnxruntime-web/wasm');
    // One thread, as in Node: threads need a cross-origin-isolated page, and the tab's other
    // core is the store's. No proxy worker: this already runs on a worker of its own.
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.proxy = false;
    const session = await ort.InferenceSession.create(model, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
    return new MiniLmEmbedder(ortRuntime(session, ort.Tensor), tokenizer);
  } catch (e) {
    throw new ModelUnavailableError(`the embedding model could not be loaded: ${(e as Error).message}`, MINILM.model);
  }
}
