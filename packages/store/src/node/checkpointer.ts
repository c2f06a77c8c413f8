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
  /** Resolves once the worker checkpoints; rejects (typed) if it could not start. */
  readonly ready: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the worker and returns at once: a store opens without waiting ~50-80 ms for a thread
 * to boot (a store's whole open was ~70 ms, ~60 of them this wait). `onReady` is told when the
 * worker checkpoints (the writer then turns SQLite's own checkpoints off); `onUnavailable`
 * once, should it fail to start or end unasked (the writer turns them back on: slower commits,
 * a bounded WAL, nothing less durable). `walLimit` (bytes past which a TRUNCATE runs;
 * checkpoint-worker.ts WAL_LIMIT by default) and `intervalMs` are there for tests, which make
 * the TRUNCATE race every commit.
 */
export function startCheckpointer(
  path: string,
  {
    intervalMs = 200,
    walLimit,
    onReady,
    onUnavailable,
  }: { intervalMs?: number; walLimit?: number; onReady?: () => void; onUnavailable?: (error: Error) => void } = {},
): Checkpointer {
  const worker = new Worker(workerUrl(), { workerData: { path, intervalMs, walLimit } });
  worker.unref(); // a store left open must not keep the process alive
  let state: 'starting' | 'running' | 'stopping' | 'down' = 'starting';
  const ready = new Promise<void>((resolve, reject) => {
    const down = (error: Error) => {
      reject(error); // (no effect once it resolved)
      if (state === 'stopping' || state === 'down') return; // asked to end: not an outage
      state = 'down';
      onUnavailable?.(error);
    };
    worker.once('message', (m: 'ready' | { failed: { code?: string; message: string } }) => {
      if (m === 'ready') {
        if (state === 'starting') {
          state = 'running';
          onReady?.();
        }
        return resolve();
      }
      // The worker could not open the database (a disk error): the same typed error as the writer's.
      down(storageError(Object.assign(new Error(m.failed.message), { code: m.failed.code })) as Error);
    });
    worker.once('error', (e: unknown) => down(e instanceof Error ? e : new Error(String(e))));
    worker.once('exit', (code) => down(new Error(`the checkpoint worker ended (exit code ${code})`)));
  });
  ready.catch(() => undefined); // told through onUnavailable; `ready` is for whoever asks
  return {
    ready,
    async stop() {
      if (state === 'stopping') return;
      const wasRunning = state === 'running';
      state = 'stopping';
      if (wasRunning) {
        // A last PASSIVE checkpoint, then the worker closes its connection.
        const stopped = new Promise<void>((resolve) => {
          worker.once('message', () => resolve());
          worker.once('exit', () => resolve());
        });
        worker.postMessage('stop');
        await stopped;
      }
      // Still starting (a short command): nothing to checkpoint for; the writer's connection,
      // closing last, checkpoints the WAL itself.
      await worker.terminate();
    },
  };
}
