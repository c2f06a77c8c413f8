/**
 * Writer liveness (FORMAT.md §5): each process that opens a store for writing holds an
 * exclusive SQLite transaction on its own file, `writers/<id>.lock`, for as long as it has the
 * store open. The operating system releases the lock whenever the process ends, `kill -9`
 * included, so "is writer X alive?" is "can its lock be taken?": packs a dead writer left open
 * are sealed, and `kura rebuild` waits for no one. Any number of writers may hold their own.
 */
import Database from 'better-sqlite3';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
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

/** Takes writer `id`'s lock file (a new id each open: 16 hex digits). */
export function registerWriter(dir: string, id: string): WriterLock {
  let db: Database.Database | undefined;
  try {
    mkdirSync(join(dir, 'writers'), { recursive: true });
    db = new Database(lockPath(dir, id), { timeout: 0 });
    db.pragma('journal_mode = DELETE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (e) {
    db?.close();
    throw storageError(e);
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
