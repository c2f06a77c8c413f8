/**
 * WAL checkpoints off the main thread. SQLite checkpoints automatically inside the commit that
 * crosses wal_autocheckpoint pages, and a checkpoint fsyncs the WAL and the database: that
 * commit pays milliseconds. The writer turns auto-checkpoints off and a worker thread runs a
 * PASSIVE checkpoint every `intervalMs` instead (measured: 1 KB puts ~+45% here). Durability
 * is unchanged: commits are as durable as before; only where the WAL's frames are copied
 * into the database file, and on which thread, changes.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { storageError } from '../errors.js';

function workerUrl(): URL {
  const beside = new URL('./checkpoint-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL('../../dist/node/checkpoint-worker.js', import.meta.url); // from the TS sources (tests)
}

export interface Checkpointer {
  stop(): Promise<void>;
}

/**
 * `walLimit` (bytes past which a TRUNCATE runs; checkpoint-worker.ts WAL_LIMIT by default) and
 * `intervalMs` are there for tests, which make the TRUNCATE race every commit.
 */
export async function startCheckpointer(path: string, { intervalMs = 200, walLimit }: { intervalMs?: number; walLimit?: number } = {}): Promise<Checkpointer> {
  const worker = new Worker(workerUrl(), { workerData: { path, intervalMs, walLimit } });
  worker.unref(); // a store left open must not keep the process alive
  await new Promise<void>((resolve, reject) => {
    worker.once('message', (m: 'ready' | { failed: { code?: string; message: string } }) => {
      if (m === 'ready') return resolve();
      // The worker could not open the database (a disk error): the same typed error as the writer's.
      reject(storageError(Object.assign(new Error(m.failed.message), { code: m.failed.code })));
    });
    worker.once('error', reject);
  });
  return {
    async stop() {
      const stopped = new Promise<void>((resolve) => {
        worker.once('message', () => resolve());
        worker.once('exit', () => resolve());
      });
      worker.postMessage('stop');
      await stopped;
      await worker.terminate();
    },
  };
}
