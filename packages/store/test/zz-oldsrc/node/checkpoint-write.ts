/**
 * Checkpoints of the catalog written off the writer's thread (LogStore.checkpointAway). Encoding
 * one reads every catalog row: measured, 377 ms for 40,000 documents (12.8 MB) on the thread
 * that commits, once per 50,000 commits — a server with millions of entries would stall for
 * seconds. A worker thread of its own (rare: its start-up, ~50 ms, does not matter) reads the
 * committed database through its own connection and writes the object.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { storageError } from '../errors.js';

function workerUrl(): URL {
  const beside = new URL('./checkpoint-write-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL('../../dist/node/checkpoint-write-worker.js', import.meta.url); // from the TS sources (tests)
}

/** Writes a checkpoint of the committed catalog of the store in `dir`; answers its seq. */
export async function writeCheckpointAway(dir: string, dbPath: string, schema: number): Promise<number> {
  return (await away({ dir, dbPath, schema })).seq;
}

/**
 * Encodes a checkpoint of the committed catalog in the database at `dbPath` on a worker and
 * answers it (a store on object storage uploads it from its own thread: object-backends.ts).
 */
export async function encodeCheckpointAway(dbPath: string, schema: number): Promise<{ seq: number; bytes: Uint8Array }> {
  const { seq, bytes } = await away({ dbPath, schema });
  return { seq, bytes: bytes! };
}

function away(workerData: { dir?: string; dbPath: string; schema: number }): Promise<{ seq: number; bytes?: Uint8Array }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerUrl(), { workerData });
    worker.once('message', (m: { done?: { seq: number; bytes?: Uint8Array }; failed?: { code?: string; message: string } }) => {
      if (m.done) resolve(m.done);
      else reject(storageError(Object.assign(new Error(m.failed!.message), { code: m.failed!.code })) as Error);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the checkpoint writer ended (exit code ${code}) without an answer`)));
  });
}
