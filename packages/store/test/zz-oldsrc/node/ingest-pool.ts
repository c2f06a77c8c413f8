/**
 * The ingest pool on Node worker threads (ingest/pool.ts), over files named by path, and the
 * one pool a process shares between its stores and operations (`leasePool`).
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { IngestOptions } from '@kura/core';
import { IngestPoolCore, POOL_IDLE_MS, PoolShare, type ReadyChunks } from '../ingest/pool.js';

export { POOL_IDLE_MS };
import type { KnownChunks } from '../ingest/known-chunks.js';
import type { FromWorker } from '../ingest/protocol.js';
import type { ChunkStream } from '../put.js';
import type { IngestWorkers } from '../store-types.js';

/** The compiled worker; from the TypeScript sources (tests), the built copy in dist. */
function workerUrl(): URL {
  const beside = new URL('./ingest-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL('../../dist/node/ingest-worker.js', import.meta.url);
}

export class IngestPool extends IngestPoolCore<string> {
  #closing = false;

  constructor(size = availableParallelism()) {
    super(size, (onMessage, onError) => {
      const w = new Worker(workerUrl());
      w.on('message', (m: FromWorker) => onMessage(m));
      w.on('error', onError);
      // A worker that ends by itself (out of memory, process.exit in a dependency) fails its work.
      w.on('exit', (code) => {
        if (!this.#closing) onError(new Error(`an ingest worker exited (code ${code})`));
      });
      return {
        post: (m, transfer) => w.postMessage(m, transfer ?? []),
        terminate: () => w.terminate(),
        hold: (busy) => (busy ? w.ref() : w.unref()),
      };
    });
  }

  /** `regularOnly`: refuse a link or a non-regular file at `path` (snapshots read what they scanned). */
  ingestFile(path: string, options: IngestOptions, regularOnly = false, known?: KnownChunks): ChunkStream {
    return this.ingestSource(path, options, regularOnly, known);
  }

  /** Small files in one round trip each way (snapshots of source trees). */
  ingestSmallFiles(paths: string[], options: IngestOptions, known?: KnownChunks): Promise<(ReadyChunks | Error)[]> {
    return this.ingestSmall(paths, options, known);
  }

  override async close(): Promise<void> {
    this.#closing = true;
    await super.close();
  }
}

const share = new PoolShare(() => new IngestPool());

/** A use of the process's shared pool; `release` once done (then another may reuse it warm). */
export interface PoolLease {
  pool: IngestPool;
  release(): void;
}

/**
 * The process's ingest pool (one worker per core), shared by every store: workers hold no
 * store state (each request carries the store's parameters and known-chunks table). Idle
 * workers never keep the process alive; the pool ends POOL_IDLE_MS after its last release
 * (PoolShare).
 */
export function leasePool(): PoolLease {
  return share.lease();
}

/** A pool of `size` workers for one use: the shared one when that is its size, else a new one. */
export function leasePoolOfSize(size: number | undefined): PoolLease {
  if (size === undefined || size === availableParallelism()) return leasePool();
  const pool = new IngestPool(size);
  return { pool, release: () => void pool.close() };
}

/**
 * The store's puts of large buffers on the shared pool (IngestWorkers): below WORKER_PUT_MIN,
 * and with `workers` 0, this thread ingests them (messaging costs more than it saves).
 */
export function bytesOnWorkers(workers: number, min: number): IngestWorkers {
  let lease: PoolLease | undefined;
  return {
    stream(input, options, known) {
      if (workers <= 0 || !(input instanceof Uint8Array) || input.length < min) return undefined;
      lease ??= leasePool();
      return lease.pool.ingestBytes(input, options, known());
    },
    close() {
      lease?.release();
      lease = undefined;
    },
  };
}
