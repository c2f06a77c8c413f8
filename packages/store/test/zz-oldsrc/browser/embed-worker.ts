/**
 * The body of the browser's embedding worker (browser/embed-away.ts): runs the model off the
 * store's worker. It says `ready` once it listens (messages posted while a module worker's
 * imports load — the wasm core's top-level await — reach no handler); its first message
 * names the model's folder; each later one is a request.
 */
import { answerEmbedRequests, type EmbedRequest } from '../semantic/remote-embedder.js';
import { loadMiniLmWeb } from './minilm-web.js';

export function serveEmbedding(): void {
  const scope = self as unknown as Worker;
  let answer: ((request: EmbedRequest) => void) | undefined;
  scope.onmessage = (ev: MessageEvent<{ model: string } | EmbedRequest>) => {
    if ('model' in ev.data) answer = answerEmbedRequests(loadMiniLmWeb(ev.data.model), (reply, transfer) => scope.postMessage(reply, transfer));
    else answer?.(ev.data);
  };
  scope.postMessage({ ready: true });
}
