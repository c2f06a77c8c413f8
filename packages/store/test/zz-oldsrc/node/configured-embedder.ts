/**
 * The embedder a process's environment configures (decision 0036): an OpenAI-compatible
 * endpoint when KURA_EMBED_URL is set (KURA_EMBED_MODEL names its model, KURA_EMBED_API_KEY
 * is sent as a bearer token), else the local model on a worker thread.
 */
import { ModelUnavailableError } from '../errors.js';
import type { Embedder } from '../semantic/embedder.js';
import { loadHttpEmbedder } from '../semantic/http-embedder.js';
import { loadMiniLmOnWorker } from './embed-away.js';

/** Whether the environment names an embedding endpoint (its failures then are not to be passed over). */
export function embedEndpointConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.KURA_EMBED_URL);
}

export async function configuredEmbedder(env: NodeJS.ProcessEnv = process.env): Promise<Embedder> {
  const url = env.KURA_EMBED_URL;
  if (!url) return loadMiniLmOnWorker();
  if (!env.KURA_EMBED_MODEL) throw new ModelUnavailableError('KURA_EMBED_URL is set but KURA_EMBED_MODEL (the endpoint\'s model name) is not', 'openai-compatible:');
  return loadHttpEmbedder({ url, model: env.KURA_EMBED_MODEL, apiKey: env.KURA_EMBED_API_KEY });
}
