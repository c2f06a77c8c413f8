/** better-sqlite3 behind the SqlDatabase contract (backend/sql.ts). */
import Database from 'better-sqlite3';
import type { RunResult, SqlDatabase, SqlStatement, SqlValue } from '../backend/sql.js';
import { storageError } from '../errors.js';
import type { Durability } from '../options.js';
import type { LockTurns } from './lock-turns.js';

export interface SqliteOptions {
  readonly?: boolean;
  /** Turn automatic checkpoints off (a checkpointer thread runs them: checkpointer.ts). */
  manualCheckpoints?: boolean;
  /** Milliseconds to wait for a lock before SQLITE_BUSY (readers racing a checkpoint). */
  timeout?: number;
  /** Told after each write transaction commits. */
  onCommit?: () => void;
  /** Where several processes write: they take turns at the write lock (lock-turns.ts). */
  turns?: LockTurns;
}

/** A private database in an anonymous temporary file SQLite deletes on close (verify's replay of the log, decision 0073). */
export function scratchSqlite(): SqlDatabase {
  return openSqlite('');
}

export function openSqlite(path: string, options: SqliteOptions = {}): SqlDatabase & { setDurability(d: Durability): void } {
  // Opening names the file (a CLI user sees which store and disk); later errors do not, since
  // the server answers clients with their messages.
  const db = guard(() => {
    const db = new Database(path, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false, timeout: options.timeout ?? 5000 });
    try {
      if (!options.readonly) {
        // A new (empty) database takes incremental auto-vacuum only before WAL mode writes its
        // first page (catalog/schema.ts, decision 0038). Said to an existing one, the pragma
        // would change nothing and may wait for its write lock: it is not said.
        if (db.pragma('page_count', { simple: true }) === 0) db.pragma('auto_vacuum = INCREMENTAL');
        db.pragma('journal_mode = WAL');
      }
      if (options.manualCheckpoints) db.pragma('wal_autocheckpoint = 0');
      db.pragma('cache_size = -16384'); // 16 MiB page cache: most lookups are by key, memory stays bounded
      db.pragma('temp_store = MEMORY');
    } catch (e) {
      db.close();
      throw e;
    }
    return db;
  }, path);
  // One transaction function for every call (it runs the callback it is given): making one per
  // call cost ~7% of a single metadata update's main-thread time. `entered` tells a BEGIN that
  // failed (nothing ran, nothing changed: safe to try again) from a failure inside or after fn.
  let entered = false;
  const timeout = options.timeout ?? 5000;
  // Taking turns (lock-turns.ts): while other writers have the store open, a BEGIN is tried
  // without SQLite's busy handler (busy_timeout 0, set back as soon as the lock is held or given
  // up: `quick`), and the loop below tries again every RETRY_MS.
  // The PRAGMAs are said with `exec` each time, never prepared: SQLite carries out PRAGMA
  // busy_timeout when it compiles the statement, and a prepared one run again only reports the
  // value (it left the busy handler on: decision 0051, amended 2026-11-27).
  const turns = options.readonly ? undefined : options.turns;
  const untimed = 'PRAGMA busy_timeout = 0';
  const timed = `PRAGMA busy_timeout = ${timeout}`;
  let quick = false;
  const locked = () => {
    if (!quick) return;
    quick = false;
    db.exec(timed);
    turns!.got();
  };
  const runInTransaction = db.transaction((fn: () => unknown) => {
    entered = true;
    locked();
    return fn();
  });
  // A batch's BEGIN and COMMIT, prepared once (exec compiles its text every time).
  let beginImmediate: Database.Statement | undefined;
  let commitStatement: Database.Statement | undefined;
  const beginWrite = <T>(fn: () => T, mode: 'run' | 'open' = 'run'): T => {
    // Another connection of this process holding a batch open would wait for this thread,
    // which waits for it: it commits first.
    if (!db.inTransaction) {
      yieldOthers(db);
      if (turns?.giveWay()) {
        db.exec(untimed);
        quick = true;
      }
    }
    const deadline = performance.now() + timeout;
    try {
      for (;;) {
        entered = false;
        try {
          if (mode === 'open') {
            (beginImmediate ??= db.prepare('BEGIN IMMEDIATE')).run(); // left open: SqlBatch
            try {
              locked();
            } catch (e) {
              db.exec('ROLLBACK'); // (never a batch nobody ends)
              throw e;
            }
            return undefined as T;
          }
          return runInTransaction.immediate(fn) as T;
        } catch (e) {
          // SQLite's busy timeout adds up the sleeps it planned, not the time that passed: when
          // signals cut those sleeps short (the V8 profiler's SIGPROF, every millisecond), BEGIN
          // IMMEDIATE gave up after ~80 ms behind the checkpointer's TRUNCATE (checkpoint-worker.ts)
          // and a put failed with "database is locked". The deadline here is real time.
          if (entered || !isBusy(e) || performance.now() > deadline) throw e;
          if (quick) turns!.retryLater();
          else Atomics.wait(pause, 0, 0, 1);
        }
      }
    } finally {
      if (quick) {
        // (the lock was never held: the busy timeout back for every other statement, the mark gone)
        quick = false;
        db.exec(timed);
        turns!.got();
      }
    }
  };
  return {
    exec: (sql) => guard(() => void db.exec(sql)),
    prepare: <Row>(sql: string) => new TypedStatement(db, db.prepare(sql) as unknown as SqlStatement<Row>),
    // Writers take the write lock when they begin (BEGIN IMMEDIATE), waiting for it through the
    // busy timeout. A deferred transaction that read first and then wrote could fail at once
    // with SQLITE_BUSY_SNAPSHOT when the checkpointer reset the WAL in between (no wait is
    // possible then): seen as "database is locked" under sustained metadata updates.
    transaction: options.readonly
      ? <T>(fn: () => T): T => guard(() => runInTransaction(fn) as T)
      : <T>(fn: () => T): T => {
          const result = guard(() => beginWrite(fn));
          options.onCommit?.();
          return result;
        },
    // (Every property in every adapter, `batch` undefined when read-only: a spread or an
    // accessor here made V8 give each adapter after a process's first its own dictionary of
    // properties, and the code that had run against the first was thrown away.)
    batch: options.readonly
      ? undefined
      : {
          begin: (yieldLock: () => void) => {
            guard(() => beginWrite(() => undefined, 'open'));
            openBatches.set(db, yieldLock);
          },
          alone: () => !turns?.othersOpen,
          commit: () => {
            openBatches.delete(db);
            guard(() => (commitStatement ??= db.prepare('COMMIT')).run());
            options.onCommit?.();
          },
          rollback: () => {
            openBatches.delete(db);
            guard(() => void (db.inTransaction && db.exec('ROLLBACK')));
          },
        },
    // Deferred: a read takes no write lock (and never waits for the checkpointer's).
    read: <T>(fn: () => T): T => {
      if (db.inTransaction) return fn();
      yieldOthers(db);
      return guard(() => runInTransaction.deferred(fn) as T);
    },
    inTransaction: () => db.inTransaction,
    // better-sqlite3 opens every connection defensive; its unsafe mode is the switch.
    writingShadowTables: <T>(fn: () => T): T => {
      db.unsafeMode(true);
      try {
        return fn();
      } finally {
        db.unsafeMode(false);
      }
    },
    close: () => guard(() => db.close()),
    setDurability(d: Durability) {
      if (!options.readonly) guard(() => db.pragma(`synchronous = ${d === 'full' ? 'FULL' : 'NORMAL'}`));
    },
  };
}

/** The connections of this process holding a batch open (SqlBatch), and how to end each. */
const openBatches = new Map<Database.Database, () => void>();

/**
 * Ends the batches other connections of this process hold open: one that wants the write lock
 * would wait for this thread forever, and one that reads must see what they acknowledged.
 */
function yieldOthers(db: Database.Database): void {
  if (openBatches.size === 0) return;
  for (const [other, yieldLock] of openBatches) if (other !== db) yieldLock();
}

/** A one-element buffer to sleep on: Atomics.wait blocks this thread for a millisecond. */
const pause = new Int32Array(new SharedArrayBuffer(4));

/** SQLITE_BUSY and its extended codes (_SNAPSHOT, _RECOVERY, _TIMEOUT): tried again until the deadline. */
function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** Runs `fn`, turning SQLite's I/O and disk-full results into IO_ERROR / STORAGE_FULL. */
function guard<T>(fn: () => T, file?: string): T {
  try {
    return fn();
  } catch (e) {
    throw storageError(e, file);
  }
}

/**
 * A statement whose failures are typed (errors.ts `storageError`): a read of a page or a WAL
 * frame can fail with SQLITE_IOERR_READ as well as a write. Other errors (constraints, busy)
 * pass unchanged; the store maps the few it expects.
 *
 * A class, not an object of closures: every statement of every store in the process then calls
 * the same four functions. With closures made per statement, code optimized while one store ran
 * met other functions at the same call sites in the next store opened, and was thrown away
 * ("wrong call target") and compiled again while that store ran.
 */
class TypedStatement<Row> implements SqlStatement<Row> {
  constructor(
    private readonly db: Database.Database,
    private readonly s: SqlStatement<Row>,
  ) {}

  // try/catch in each method rather than guard(() => ...): no closure per call on the hot path.
  // A statement outside a transaction is a read or write of its own: other connections of this
  // process end their batches first (yieldOthers), as for `read` and `transaction`.
  run(...p: SqlValue[]): RunResult {
    if (openBatches.size && !this.db.inTransaction) yieldOthers(this.db);
    try {
      return this.s.run(...p);
    } catch (e) {
      throw storageError(e);
    }
  }

  get(...p: SqlValue[]): Row | undefined {
    if (openBatches.size && !this.db.inTransaction) yieldOthers(this.db);
    try {
      return this.s.get(...p);
    } catch (e) {
      throw storageError(e);
    }
  }

  all(...p: SqlValue[]): Row[] {
    if (openBatches.size && !this.db.inTransaction) yieldOthers(this.db);
    try {
      return this.s.all(...p);
    } catch (e) {
      throw storageError(e);
    }
  }

  *iterate(...p: SqlValue[]): IterableIterator<Row> {
    if (openBatches.size && !this.db.inTransaction) yieldOthers(this.db);
    try {
      yield* this.s.iterate(...p);
    } catch (e) {
      throw storageError(e);
    }
  }
}
