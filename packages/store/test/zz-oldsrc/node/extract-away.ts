/**
 * Text extraction on a worker thread of its own (decision 0035): pdf.js takes ~0.7 s for an
 * 87-page PDF, which on the store's thread would stall every request a server has in flight,
 * and a document that runs over its time can only be stopped by ending the thread it runs on.
 * One worker, started on first use, documents one at a time (the indexer asks for one at a
 * time), let go after IDLE_MS without work so an idle store holds no thread.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ExtractCaps, Extracted } from '../extract/caps.js';
import type { ExtractKind } from '../extract/kind.js';
import type { TextExtractor } from '../store-types.js';

const IDLE_MS = 5_000;

function workerUrl(): URL {
  const beside = new URL('./extract-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL('../../dist/node/extract-worker.js', import.meta.url); // from the TS sources (tests)
}

export class WorkerExtractor implements TextExtractor {
  #worker: Worker | undefined;
  #idle: ReturnType<typeof setTimeout> | undefined;
  /** Extractions run one after another: the worker holds one document at a time. */
  #tail: Promise<unknown> = Promise.resolve();

  extract(kind: ExtractKind, bytes: Uint8Array, caps: ExtractCaps): Promise<Extracted> {
    const run = this.#tail.then(() => this.#one(kind, bytes, caps));
    this.#tail = run.catch(() => undefined);
    return run;
  }

  #one(kind: ExtractKind, bytes: Uint8Array, caps: ExtractCaps): Promise<Extracted> {
    clearTimeout(this.#idle);
    const worker = (this.#worker ??= new Worker(workerUrl()));
    worker.ref();
    return new Promise<Extracted>((resolve) => {
      const done = (r: Extracted) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        resolve(r);
      };
      const stop = (note: string) => {
        this.#worker = undefined; // a fresh one for the next document
        void worker.terminate();
        done({ status: 'failed', text: '', note: `${kind}: ${note}` });
      };
      const onMessage = (r: Extracted) => done(r);
      const onError = (e: Error) => stop(`the extractor failed: ${e.message}`);
      const onExit = (code: number) => stop(`the extractor ended (exit code ${code})`);
      const timer = setTimeout(() => stop(`stopped after ${caps.ms} ms`), caps.ms);
      worker.on('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
      worker.postMessage({ kind, bytes, caps });
    }).finally(() => {
      if (this.#worker !== worker) return;
      worker.unref(); // never keeps a process alive
      this.#idle = setTimeout(() => void this.close(), IDLE_MS);
      this.#idle.unref();
    });
  }

  async close(): Promise<void> {
    clearTimeout(this.#idle);
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }
}
