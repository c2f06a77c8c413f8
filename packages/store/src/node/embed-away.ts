/**
 * The local model on a worker thread of its own (decision 0036): the store's thread only
 * tokenizes (to cut chunks) and posts texts. Started on first use, let go after IDLE_MS idle.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { KuraError } from '@kura/core';
import { ModelUnavailableError } from '../errors.js';
import type { Embedder } from '../semantic/embedder.js';
import { MINILM, MiniLmTokenizer } from '../semantic/minilm.js';
import { defaultModelDir } from './minilm-node.js';

const IDLE_MS = 30_000;

function workerUrl(): URL {
  const beside = new URL('./embed-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL('../../dist/node/embed-worker.js', import.meta.url); // from the TS sources (tests)
}

class MiniLmOnWorker implements Embedder {
  readonly model = MINILM.model;
  readonly dims = MINILM.dims;
  readonly maxTokens = MINILM.maxTokens - 2;
  #worker: Worker | undefined;
  #idle: ReturnType<typeof setTimeout> | undefined;
  #next = 1;
  readonly #waiting = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: unknown) => void }>();

  constructor(
    readonly dir: string,
    readonly tokenizer: MiniLmTokenizer,
    readonly threads: number,
  ) {}

  countTokens(text: string): number {
    return this.tokenizer.countTokens(text);
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(workerUrl(), { workerData: { dir: this.dir, threads: this.threads } });
    worker.on('message', (m: { id: number; vectors?: Float32Array[]; failed?: { code?: string; message: string } }) => {
      const w = this.#waiting.get(m.id);
      if (!w) return;
      this.#waiting.delete(m.id);
      if (m.vectors) w.resolve(m.vectors);
      else w.reject(m.failed!.code === 'MODEL_UNAVAILABLE' ? new ModelUnavailableError(m.failed!.message, MINILM.model) : new KuraError('INTERNAL', m.failed!.message));
      this.#settle();
    });
    const fail = (e: unknown) => {
      this.#worker = undefined;
      for (const w of this.#waiting.values()) w.reject(new ModelUnavailableError(`the embedding worker ended: ${(e as Error)?.message ?? e}`, MINILM.model));
      this.#waiting.clear();
    };
    worker.once('error', fail);
    worker.once('exit', (code) => fail(new Error(`exit code ${code}`)));
    return (this.#worker = worker);
  }

  /** An idle worker never keeps the process alive, and goes after IDLE_MS. */
  #settle(): void {
    if (this.#waiting.size > 0 || !this.#worker) return;
    this.#worker.unref();
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => void this.close(), IDLE_MS);
    this.#idle.unref();
  }

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    clearTimeout(this.#idle);
    const worker = this.#start();
    worker.ref();
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      worker.postMessage({ id, texts });
    });
  }

  async close(): Promise<void> {
    clearTimeout(this.#idle);
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }
}

/**
 * The local model, run on a worker thread; its tokenizer here. The files are checked (hashes)
 * by the worker when it loads them; the tokenizer's files here too.
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
  const e = new MiniLmOnWorker(dir, tokenizer, options.threads ?? 1);
  await e.embed(['warm up']); // loads and checks the model now: a missing or wrong file fails here
  return e;
}
