/**
 * The writer lock (FORMAT.md §5): an exclusive SQLite transaction held open on
 * <store>/writer.lock. The operating system releases it when the process ends, however it
 * ends, so there is never a stale lock to clean up after kill -9.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { StoreLockedError, storageError } from '../errors.js';

export interface WriterLock {
  release(): void;
}

export function acquireWriterLock(dir: string): WriterLock {
  const db = new Database(join(dir, 'writer.lock'), { timeout: 0 });
  try {
    db.pragma('journal_mode = DELETE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code?.startsWith('SQLITE_BUSY')) {
      throw new StoreLockedError(`${dir} is open for writing by another process or Store; open it with readonly: true to read`);
    }
    throw storageError(e);
  }
  return {
    release() {
      if (!db.open) return;
      db.exec('ROLLBACK');
      db.close();
    },
  };
}
