/**
 * The embedder for commands that search (decision 0036): an OpenAI-compatible endpoint when
 * KURA_EMBED_URL names one, else the local model when installed (scripts/fetch-model.sh), so
 * search is hybrid by default; without either, keyword search — unless semantic or hybrid was
 * asked for by name, or an endpoint was configured, which then fail MODEL_UNAVAILABLE.
 */
import { configuredEmbedder, embedEndpointConfigured, ModelUnavailableError, type Embedder } from '@kura/store';
import { usage } from './exit.js';

export type Mode = 'keyword' | 'semantic' | 'hybrid';

export function parseMode(mode: string | undefined): Mode | undefined {
  if (mode === undefined) return undefined;
  if (mode === 'keyword' || mode === 'semantic' || mode === 'hybrid') return mode;
  throw usage(`--mode must be keyword, semantic or hybrid, not ${JSON.stringify(mode)}`);
}

/** The model for `mode` (undefined: keyword search needs none, or none is installed and none was asked for). */
export async function embedderFor(mode: Mode | undefined): Promise<Embedder | undefined> {
  if (mode === 'keyword') return undefined;
  try {
    return await configuredEmbedder();
  } catch (e) {
    if (mode === undefined && !embedEndpointConfigured() && e instanceof ModelUnavailableError) return undefined;
    throw e;
  }
}
