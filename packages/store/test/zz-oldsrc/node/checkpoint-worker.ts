/**
 * The writer's checkpointer (see checkpointer.ts): copies WAL frames into the database file
 * on its own thread, so the fsyncs of a checkpoint never stall a commit on the main thread.
 */
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

const { path, intervalMs, walLimit } = workerData as { path: string; intervalMs: number; walLimit?: number };
// A short wait for the writer's lock: this thread may wait, the writer's commits are short.
let db: Database.Database;
try {
  db = new Database(path, { timeout: 100 });
} catch (e) {
  // A disk error opening the database: say so plainly (an error thrown here reaches the
  // parent as a mangled clone, without its SQLite code) and end.
  const err = e as { code?: unknown; message?: unknown };
  parentPort!.postMessage({ failed: { code: typeof err.code === 'string' ? err.code : undefined, message: String(err.message ?? e) } });
  process.exit(1);
}

/**
 * A PASSIVE checkpoint never resets the WAL while commits keep coming (it rarely finds every
 * frame copied), so under sustained writes the WAL grew without bound (~1 GB after 3 s of
 * 1 KB puts, measured by the durability bench). Past this size a TRUNCATE checkpoint holds
 * new commits for the few milliseconds it takes to copy the rest and empty the file; 256 MiB
 * keeps that rare enough not to show in throughput (64 MiB cost metadata updates ~20%).
 */
export const WAL_LIMIT = 256 << 20;

function walSize(): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

function checkpoint(mode: 'PASSIVE' | 'TRUNCATE'): void {
  try {
    db.pragma(`wal_checkpoint(${mode})`);
  } catch {
    // Busy (a reader holds old frames): the next tick tries again.
  }
}

const timer = setInterval(() => {
  checkpoint('PASSIVE');
  // Right after a PASSIVE pass few frames are left to copy: the TRUNCATE holds commits (and
  // the writer's thread, which waits in SQLite's busy handler) for as short a time as it can.
  if (walSize() > (walLimit ?? WAL_LIMIT)) checkpoint('TRUNCATE');
}, intervalMs);
parentPort!.on('message', (m: string) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  checkpoint('PASSIVE');
  db.close();
  parentPort!.postMessage('stopped');
});
parentPort!.postMessage('ready');
