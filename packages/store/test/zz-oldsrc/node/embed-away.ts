/**
 * The local model on a worker thread of its own (decision 0036; semantic/remote-embedder.ts):
 * the store's thread only tokenizes (to cut chunks) and posts texts.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ModelUnavailableError } from '../errors.js';
import type { Embedder } from '../semantic/embedder.js';
import { MINILM, MiniLmTokenizer } from '../semantic/minilm.js';
import { RemoteEmbedder, type EmbedPort, type EmbedPortEvents, type EmbedReply } from '../semantic/remote-embedder.js';
import { defaultModelDir } from './minilm-node.js';

function workerUrl(): URL {
  const beside = new URL('./embed-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL('../../dist/node/embed-worker.js', import.meta.url); // from the TS sources (tests)
}

/** A worker thread running the model from `dir`; idle, it never keeps the process alive. */
function threadPort(dir: string, threads: number, events: EmbedPortEvents): EmbedPort {
  const worker = new Worker(workerUrl(), { workerData: { dir, threads } });
  worker.on('message', (m: EmbedReply) => events.reply(m));
  worker.once('error', (e) => events.ended(e));
  worker.once('exit', (code) => events.ended(new Error(`exit code ${code}`)));
  return {
    post: (request) => worker.postMessage(request),
    hold: (waiting) => (waiting ? worker.ref() : worker.unref()),
    terminate: async () => void (await worker.terminate()),
  };
}

/**
 * The local model, run on a worker thread; its tokenizer here. The files are checked (hashes)
 * by the worker when it loads them.
 */
export async function loadMiniLmOnWorker(dir: string = defaultModelDir(), options: { threads?: number } = {}): Promise<Embedder> {
  const read = async (name: 'tokenizer.json' | 'tokenizer_config.json') => {
    try {
      return JSON.parse(await readFile(join(dir, name), 'utf8')) as unknown;
    } catch {
      throw new ModelUnavailableError(`the embedding model's ${name} is not in ${dir}: run scripts/fetch-model.sh (or set KURA_MODEL_DIR)`, MINILM.model);
    }
  };
  const tokenizer = new MiniLmTokenizer(await read('tokenizer.json'), await read('tokenizer_config.json'));
  const e = new RemoteEmbedder(tokenizer, (events) => threadPort(dir, options.threads ?? 1, events));
  await e.embed(['warm up']); // loads and checks the model now: a missing or wrong file fails here
  return e;
}
