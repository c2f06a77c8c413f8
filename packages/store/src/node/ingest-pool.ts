/** The ingest pool on Node worker threads (ingest/pool.ts), over files named by path. */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { IngestOptions } from '@kura/core';
import { IngestPoolCore } from '../ingest/pool.js';
import type { KnownChunks } from '../ingest/known-chunks.js';
import type { FromWorker } from '../ingest/protocol.js';
import type { ChunkStream } from '../put.js';

/** The compiled worker; from the TypeScript sources (tests), the built copy in dist. */
function workerUrl(): URL {
  const beside = new URL('./ingest-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL('../../dist/node/ingest-worker.js', import.meta.url);
}

export class IngestPool extends IngestPoolCore<string> {
  constructor(size = availableParallelism(), known?: KnownChunks) {
    super(
      size,
      (onMessage, onError) => {
        const w = new Worker(workerUrl());
        w.on('message', (m: FromWorker) => onMessage(m));
        w.on('error', onError);
        return { post: (m, transfer) => w.postMessage(m, transfer ?? []), terminate: () => w.terminate() };
      },
      known,
    );
  }

  /** `regularOnly`: refuse a link or a non-regular file at `path` (snapshots read what they scanned). */
  ingestFile(path: string, options: IngestOptions, regularOnly = false): ChunkStream {
    return this.ingestSource(path, options, regularOnly);
  }

  /** Small files in one round trip each way (snapshots of source trees). */
  ingestSmallFiles(paths: string[], options: IngestOptions): Promise<(ChunkStream | Error)[]> {
    return this.ingestSmall(paths, options);
  }
}
