/**
 * The writer's checkpointer (see checkpointer.ts): copies WAL frames into the database file
 * on its own thread, so the fsyncs of a checkpoint never stall a commit on the main thread.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

const { path, intervalMs } = workerData as { path: string; intervalMs: number };
const db = new Database(path, { timeout: 0 });

function checkpoint(mode: 'PASSIVE' | 'TRUNCATE'): void {
  try {
    db.pragma(`wal_checkpoint(${mode})`);
  } catch {
    // Busy (a reader holds old frames): the next tick tries again.
  }
}

const timer = setInterval(() => checkpoint('PASSIVE'), intervalMs);
parentPort!.on('message', (m: string) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  checkpoint('PASSIVE');
  db.close();
  parentPort!.postMessage('stopped');
});
parentPort!.postMessage('ready');
