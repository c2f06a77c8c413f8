/**
 * Writer liveness (FORMAT.md §5): each process that opens a store for writing holds an
 * exclusive SQLite transaction on its own file, `writers/<id>.lock`, for as long as it has the
 * store open. The operating system releases the lock whenever the process ends, `kill -9`
 * included, so "is writer X alive?" is "can its lock be taken?": packs a dead writer left open
 * are sealed, and `kura rebuild` waits for no one. Any number of writers may hold their own.
 */
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { storageError } from '../errors.js';

export interface WriterLock {
  readonly id: string;
  release(): void;
}

const LOCK = /^([0-9a-f]{16})\.lock$/;

function lockPath(dir: string, id: string): string {
  return join(dir, 'writers', `${id}.lock`);
}

/** How long taking a new lock file waits for others' looks at it (writerAlive holds it for microseconds). */
const TAKE_MS = 2000;
/** A one-element buffer to sleep on: Atomics.wait blocks this thread for a millisecond. */
const pause = new Int32Array(new SharedArrayBuffer(4));

/** Takes writer `id`'s lock file (a new id each open: 16 hex digits). */
export function registerWriter(dir: string, id: string): WriterLock {
  let db: Database.Database | undefined;
  // Another process's liveness look (writerAlive) may hold the new file's lock for a moment,
  // between its creation here and the lock taken: tried again for up to TAKE_MS (the first
  // try failed `kura add` with a raw SQLITE_BUSY beside a GC looking at writers — a trial).
  const deadline = performance.now() + TAKE_MS;
  for (;;) {
    try {
      mkdirSync(join(dir, 'writers'), { recursive: true });
      db = new Database(lockPath(dir, id), { timeout: 0 });
      db.pragma('journal_mode = DELETE');
      db.exec('BEGIN EXCLUSIVE');
      break;
    } catch (e) {
      db?.close();
      db = undefined;
      if ((e as { code?: string }).code?.startsWith('SQLITE_BUSY') && performance.now() < deadline) {
        Atomics.wait(pause, 0, 0, 1);
        continue;
      }
      throw storageError(e);
    }
  }
  const held = db;
  return {
    id,
    release() {
      if (!held.open) return;
      held.exec('ROLLBACK');
      held.close();
      rmSync(lockPath(dir, id), { force: true });
    },
  };
}

/** Whether writer `id` still holds its lock (a missing file: it closed, or never was). */
export function writerAlive(dir: string, id: string): boolean {
  let db: Database.Database;
  try {
    db = new Database(lockPath(dir, id), { timeout: 0, fileMustExist: true });
  } catch {
    return false;
  }
  try {
    db.exec('BEGIN EXCLUSIVE');
    db.exec('ROLLBACK');
    return false;
  } catch (e) {
    if ((e as { code?: string }).code?.startsWith('SQLITE_BUSY')) return true;
    // The writer closed and removed its file while this looked (SQLite then fails to stat the
    // file it opened: SQLITE_IOERR_FSTAT, seen as a GC's IO_ERROR beside writers coming and
    // going — a trial): gone, so not alive. Any other failure is the disk's.
    if (!existsSync(lockPath(dir, id))) return false;
    throw storageError(e);
  } finally {
    db.close();
  }
}

/** A dead writer's file is removed once this old (a new writer's is unlocked for a moment). */
const STALE_MS = 60_000;

/** The ids of the writers that hold their lock now; the stale files of dead ones are removed. */
export function liveWriters(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(join(dir, 'writers'));
  } catch {
    return [];
  }
  const live: string[] = [];
  for (const name of names) {
    const id = LOCK.exec(name)?.[1];
    if (!id) continue;
    if (writerAlive(dir, id)) live.push(id);
    else {
      try {
        if (Date.now() - statSync(lockPath(dir, id)).mtimeMs > STALE_MS) rmSync(lockPath(dir, id), { force: true });
      } catch {
        // gone meanwhile
      }
    }
  }
  return live;
}
