/**
 * Rebuilding a store's database from its log (FORMAT.md §15.4), as `kura rebuild` does.
 */
import { existsSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readConfigObject, rebuildCatalog } from '../catalog/open.js';
import { CorruptDataError, InvalidInputError, NotFoundError, StoreLockedError } from '../errors.js';
import { encryptedStoreId } from '../encryption/config.js';
import { migrate } from '../catalog/schema.js';
import { prepareStatements } from '../catalog/statements.js';
import { DB_FILE } from './backends.js';
import { CONFIG_FILE, FsLogStore } from './fs-log.js';
import { liveWriters } from './lock.js';
import { openSqlite } from './sqlite.js';
import { defaultCacheDir } from './object-backends.js';

/** Cuts log segment `segment` at `offset`, its bytes from there kept beside the log; answers that file's name. */
function cutLog(root: string, segment: string, offset: number): string {
  const file = join(root, 'log', segment);
  const kept = `log-cut-${segment}-${offset}`;
  const bytes = readFileSync(file);
  writeFileSync(join(root, kept), bytes.subarray(offset));
  truncateSync(file, offset);
  return kept;
}

export interface RebuildReport {
  /** The head the new database has applied. */
  seq: number;
  /** Commits replayed after the checkpoint it started from. */
  commits: number;
  /** That checkpoint's seq (undefined: none, the whole log replayed). */
  checkpoint: number | undefined;
  /** With `force`: the files beside the log holding what was cut out of it at damage inside it. */
  cut?: string[];
}

/**
 * Rebuilds `kura.db` from the store's log: the configuration, the newest whole checkpoint and
 * every commit after it, into a new database that then replaces the old one. Of the old one
 * only its log position is read, where it can be (it may be damaged): one that has applied
 * more than the log holds is kept, unless `force`. Refused (STORE_LOCKED) while a writer is
 * open. With `force`, damage inside the log is cut out (see the loop below).
 */
export async function rebuildDatabase(dir: string, options: { force?: boolean } = {}): Promise<RebuildReport> {
  const root = resolve(dir);
  if (!existsSync(join(root, CONFIG_FILE))) {
    throw new NotFoundError(
      existsSync(join(root, DB_FILE))
        ? `${root} has no log yet (a store from before the log): open it for writing once, which starts its log`
        : `no Kura store at ${root} (run kura init)`,
    );
  }
  // An encrypted store's database is in its cache, outside the store (FORMAT.md §17): a cache
  // that is gone is rebuilt by the next open, from the sealed objects.
  if (encryptedStoreId(readFileSync(join(root, CONFIG_FILE))) !== undefined) {
    throw new InvalidInputError(`${root} is an encrypted store: its database is a cache (${defaultCacheDir(root)} unless opened with another cacheDir); delete the kura.db there (kura rebuild does) and the next open makes it again from the store`, 'dir');
  }
  const live = liveWriters(root);
  // (Writers, not processes: two Stores of one process are two writers.)
  if (live.length) throw new StoreLockedError(`${root} is open for writing by ${live.length === 1 ? 'another writer' : `${live.length} other writers`} (a process, or a Store of this one); close them before rebuilding its database`);
  const next = join(root, `${DB_FILE}.rebuild`);
  const log = new FsLogStore(root);
  const config = await readConfigObject(log);
  if (!config) throw new NotFoundError(`${root}/${CONFIG_FILE} is empty`);
  let result: RebuildReport | undefined;
  const cut: string[] = [];
  while (!result) {
    for (const f of [next, `${next}-wal`, `${next}-shm`]) rmSync(f, { force: true });
    const db = openSqlite(next);
    try {
      migrate(db);
      const head = await rebuildCatalog(db, prepareStatements(db), log, config);
      result = { seq: head.seq, commits: head.seq - (head.checkpoint ?? 0), checkpoint: head.checkpoint, ...(cut.length ? { cut } : {}) };
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch (e) {
      // Damage inside the log (whole commits after it): with `force`, the segment is cut there
      // — what follows is kept beside the log, `log-cut-<segment>-<offset>`, for whoever can
      // mend it — and the rebuild goes on from what the log holds before it.
      const at = e as { segment?: unknown; offset?: unknown };
      if (!options.force || !(e instanceof CorruptDataError) || typeof at.segment !== 'string' || typeof at.offset !== 'number') throw e;
      cut.push(cutLog(root, at.segment, at.offset));
    } finally {
      db.close();
    }
  }
  // The database being replaced has applied commits the log no longer holds (its segments
  // deleted or cut): the log is what lost them, and replacing the database loses them too —
  // then GC took every pack for an orphan (a trial followed verify's advice into that). Kept,
  // unless the caller insists.
  const had = appliedSeq(join(root, DB_FILE));
  if (had !== undefined && had > result.seq && !options.force) {
    for (const f of [next, `${next}-wal`, `${next}-shm`]) rmSync(f, { force: true });
    throw new CorruptDataError(
      `the database has applied commit ${had}, and the log holds commits up to ${result.seq} only: the log lost commits (deleted or damaged) that the database still has; kura.db was kept. Rebuilding from this log would lose them: copy the store's files somewhere safe, then kura rebuild --force if that is what you want`,
      'log-behind',
    );
  }
  // The old database's WAL must not be applied to the new file: removed first.
  for (const f of [`${DB_FILE}-wal`, `${DB_FILE}-shm`]) rmSync(join(root, f), { force: true });
  renameSync(next, join(root, DB_FILE));
  for (const f of [`${next}-wal`, `${next}-shm`]) rmSync(f, { force: true });
  return result;
}

/** The seq the database at `file` has applied, when it can be read (a damaged one cannot: undefined). */
function appliedSeq(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  let db: ReturnType<typeof openSqlite> | undefined;
  try {
    db = openSqlite(file, { readonly: true });
    return db.prepare<{ seq: number }>('SELECT seq FROM log_state WHERE id = 1').get()?.seq;
  } catch {
    return undefined;
  } finally {
    db?.close();
  }
}

