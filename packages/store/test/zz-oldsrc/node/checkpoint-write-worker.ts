/**
 * Writes a checkpoint of the catalog (FORMAT.md §15.5) on its own thread (checkpoint-write.ts):
 * reads the database through a read-only connection of its own, in one read transaction (the
 * rows and the head it records are one state), and creates the checkpoint object whole.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { readHead } from '../catalog/commits.js';
import { checkpointName, encodeCheckpoint } from '../catalog/checkpoint.js';
import { prepareStatements } from '../catalog/statements.js';
import { FsLogStore } from './fs-log.js';
import { openSqlite } from './sqlite.js';

/** `dir`: the local store whose log gets the checkpoint; without it, the bytes go back to the parent (a store on object storage uploads them). */
const { dir, dbPath, schema } = workerData as { dir?: string; dbPath: string; schema: number };

async function run(): Promise<{ seq: number; created?: boolean; bytes?: Uint8Array }> {
  const db = openSqlite(dbPath, { readonly: true });
  try {
    const st = prepareStatements(db);
    const { seq, bytes } = db.read(() => {
      const head = readHead(st)!;
      return { seq: head.seq, bytes: encodeCheckpoint(db, head, schema) };
    });
    if (dir === undefined) return { seq, bytes };
    const created = await new FsLogStore(dir).createCheckpoint(checkpointName(seq), bytes); // false: another writer made it
    return { seq, created };
  } finally {
    db.close();
  }
}

run().then(
  (done) => parentPort!.postMessage({ done }, done.bytes ? [done.bytes.buffer as ArrayBuffer] : []),
  (e: unknown) => {
    const err = e as { code?: unknown; message?: unknown };
    parentPort!.postMessage({ failed: { code: typeof err?.code === 'string' ? err.code : undefined, message: String(err?.message ?? e) } });
  },
);
