/**
 * The local model on a worker of its own in the browser (semantic/remote-embedder.ts says
 * why): the store's worker tokenizes and posts texts; `makeWorker` starts one whose module
 * calls serveEmbedding() (browser/embed-worker.ts), as the app bundles it.
 */
import type { Embedder } from '../semantic/embedder.js';
import { RemoteEmbedder, type EmbedReply } from '../semantic/remote-embedder.js';
import { fetchMiniLmTokenizer } from './minilm-web.js';

/**
 * The model from the folder at `base` (a URL), run on a worker from `makeWorker`;
 * ModelUnavailableError when a file is missing or not the pinned one, or the runtime fails.
 */
export async function loadMiniLmOnWebWorker(base: string, makeWorker: () => Worker): Promise<Embedder> {
  const tokenizer = await fetchMiniLmTokenizer(base);
  const e = new RemoteEmbedder(tokenizer, (events) => {
    const worker = makeWorker();
    // Held until the worker says it listens (browser/embed-worker.ts).
    let held: unknown[] | undefined = [{ model: base }];
    const post = (m: unknown) => (held ? held.push(m) : worker.postMessage(m));
    worker.onmessage = (ev: MessageEvent<EmbedReply | { ready: true }>) => {
      if (!('ready' in ev.data)) return events.reply(ev.data);
      held?.forEach((m) => worker.postMessage(m));
      held = undefined;
    };
    worker.onerror = (ev) => {
      ev.preventDefault();
      events.ended(new Error(ev.message || 'the embedding worker could not start'));
    };
    return {
      post,
      hold: () => undefined, // a worker never keeps a page alive
      terminate: async () => {
        worker.terminate(); // fires no event: say so ourselves
        events.ended(new Error('closed'));
      },
    };
  });
  await e.embed(['warm up']); // loads and checks the model now: a missing or wrong file fails here
  return e;
}
