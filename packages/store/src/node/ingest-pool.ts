/**
 * Ingest on all cores: worker threads run the fused ingest kernel per file (the CPU-heavy
 * part: chunking, BLAKE3, zstd, SHA-256) while the main thread only deduplicates, appends to
 * packs and commits. Each file is one document; files are spread over the workers.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { IngestChunk, IngestOptions, IngestResult } from '@kura/core';
import { KuraError } from '@kura/core';
import type { ChunkStream } from '../put.js';
import type { FromWorker, SmallResult, ToWorker } from './ingest-worker.js';

/** The compiled worker; from the TypeScript sources (tests), the built copy in dist. */
function workerUrl(): URL {
  const beside = new URL('./ingest-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL('../../dist/node/ingest-worker.js', import.meta.url);
}

interface Job {
  queue: (IngestChunk[] | { end: IngestResult } | { error: Error })[];
  wake: (() => void) | undefined;
  worker: Worker;
}

export class IngestPool {
  readonly size: number;
  readonly #workers: Worker[] = [];
  readonly #load = new Map<Worker, number>();
  readonly #jobs = new Map<number, Job>();
  readonly #batches = new Map<number, { worker: Worker; resolve: (r: SmallResult[]) => void; reject: (e: Error) => void }>();
  #nextId = 1;

  constructor(size = Math.max(1, availableParallelism())) {
    this.size = size;
    for (let i = 0; i < size; i++) {
      const w = new Worker(workerUrl());
      w.on('message', (m: FromWorker) => this.#receive(m));
      w.on('error', (e) => this.#failWorker(w, e));
      this.#workers.push(w);
      this.#load.set(w, 0);
    }
  }

  /** The chunk stream of one file, computed on the least busy worker. */
  /** `regularOnly`: refuse a link or a non-regular file at `path` (snapshots read what they scanned). */
  ingestFile(path: string, options: IngestOptions, regularOnly = false): ChunkStream {
    return this.#start((id) => ({ type: 'file', id, path, options, ...(regularOnly ? { regularOnly } : {}) }));
  }

  /** The chunk stream of a buffer (copied to the worker; the caller keeps its bytes). */
  ingestBytes(bytes: Uint8Array, options: IngestOptions): ChunkStream {
    // Cloning a view would clone its whole ArrayBuffer; one exact copy is transferred instead.
    const copy = new Uint8Array(bytes); // a copy (Buffer#slice would be a view of the caller's memory)
    return this.#start((id) => ({ type: 'bytes', id, bytes: copy, options }), [copy.buffer]);
  }

  /**
   * Small files in one round trip: each read whole and ingested on the least busy worker.
   * Per file, a chunk stream (or the error reading or ingesting it threw).
   */
  async ingestSmallFiles(paths: string[], options: IngestOptions): Promise<(ChunkStream | Error)[]> {
    const worker = [...this.#load].sort((a, b) => a[1] - b[1])[0]![0];
    const id = this.#nextId++;
    this.#load.set(worker, this.#load.get(worker)! + paths.length);
    try {
      const results = await new Promise<SmallResult[]>((resolve, reject) => {
        this.#batches.set(id, { worker, resolve, reject });
        worker.postMessage({ type: 'small', id, paths, options } satisfies ToWorker);
      });
      return results.map((r) => {
        if ('error' in r) return r.error.kura && r.error.code ? new KuraError(r.error.code, r.error.message) : Object.assign(new Error(r.error.message), r.error.code ? { code: r.error.code } : {});
        return (async function* () {
          yield* r.chunks;
          return { digest: r.digest, size: r.size, chunks: r.count };
        })();
      });
    } finally {
      this.#batches.delete(id);
      this.#load.set(worker, this.#load.get(worker)! - paths.length);
    }
  }

  #start(message: (id: number) => ToWorker, transfer: ArrayBuffer[] = []): ChunkStream {
    const worker = [...this.#load].sort((a, b) => a[1] - b[1])[0]![0];
    const id = this.#nextId++;
    const job: Job = { queue: [], wake: undefined, worker };
    this.#jobs.set(id, job);
    this.#load.set(worker, this.#load.get(worker)! + 1);
    worker.postMessage(message(id), transfer);
    return this.#stream(id, job);
  }

  async *#stream(id: number, job: Job): ChunkStream {
    let finished = false;
    try {
      for (;;) {
        while (job.queue.length === 0) await new Promise<void>((r) => (job.wake = r));
        const item = job.queue.shift()!;
        if (Array.isArray(item)) {
          job.worker.postMessage({ type: 'ack', id } satisfies ToWorker);
          yield* item;
        } else if ('end' in item) {
          finished = true;
          return item.end;
        } else {
          finished = true;
          throw item.error;
        }
      }
    } finally {
      // Abandoned (the put failed or was refused): the worker stops and frees its input.
      if (!finished) job.worker.postMessage({ type: 'cancel', id } satisfies ToWorker);
      this.#jobs.delete(id);
      this.#load.set(job.worker, this.#load.get(job.worker)! - 1);
    }
  }

  #receive(m: FromWorker): void {
    if (m.type === 'small') return this.#batches.get(m.id)?.resolve(m.results);
    const job = this.#jobs.get(m.id);
    if (!job) return;
    if (m.type === 'chunks') job.queue.push(m.chunks);
    else if (m.type === 'end') job.queue.push({ end: { digest: m.digest, size: m.size, chunks: m.chunks } });
    else {
      // Rebuild the error on this side: Kura's typed errors keep their code, fs errors theirs.
      const err = m.kura && m.code ? new KuraError(m.code, m.message) : Object.assign(new Error(m.message), m.code ? { code: m.code } : {});
      job.queue.push({ error: err });
    }
    job.wake?.();
  }

  #failWorker(w: Worker, e: Error): void {
    for (const b of this.#batches.values()) if (b.worker === w) b.reject(e);
    for (const job of this.#jobs.values()) {
      if (job.worker === w) {
        job.queue.push({ error: e });
        job.wake?.();
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
