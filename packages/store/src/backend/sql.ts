/**
 * The SQL database contract the store logic runs on. better-sqlite3 (Node) and SQLite compiled
 * to wasm (browsers) both satisfy it; both are synchronous, which keeps every transaction
 * atomic with respect to the JavaScript event loop — the store relies on that.
 *
 * Contract:
 * - `prepare(sql)` compiles once; statements are reused many times.
 * - BLOB parameters are Uint8Array; BLOB results are Uint8Array (Node: Buffer).
 * - INTEGER results are numbers (the store keeps values below 2^53).
 * - `transaction(fn)` runs `fn` in a transaction and commits, or rolls back and rethrows; a
 *   nested call runs in a savepoint, so an inner failure can be caught without losing the
 *   outer transaction.
 * - `read(fn)` runs `fn`'s statements in one read transaction: one snapshot and one lock for
 *   all of them instead of one per statement (~4x cheaper per lookup in WAL mode). Inside a
 *   transaction it just runs `fn`. `fn` should only read.
 * - Errors for constraint violations and busy locks are thrown as they come; the store maps
 *   the few it expects.
 */
export type SqlValue = number | bigint | string | Uint8Array | null;

export interface RunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

export interface SqlStatement<Row = Record<string, unknown>> {
  run(...params: SqlValue[]): RunResult;
  get(...params: SqlValue[]): Row | undefined;
  all(...params: SqlValue[]): Row[];
  iterate(...params: SqlValue[]): IterableIterator<Row>;
}

/**
 * A write transaction left open across calls (catalog/commit-log.ts batches commits in one):
 * `begin` takes the write lock (BEGIN IMMEDIATE, waiting as `transaction` does), `transaction`
 * calls meanwhile run as savepoints inside it, `commit` / `rollback` end it.
 */
export interface SqlBatch {
  /**
   * `yieldLock` ends the batch (it commits): called when another connection in this process
   * wants the write lock, which it could otherwise wait for forever on this one thread.
   */
  begin(yieldLock: () => void): void;
  /** Whether no other process has the store open for writing, as far as this connection last looked. */
  alone?(): boolean;
  commit(): void;
  rollback(): void;
}

export interface SqlDatabase {
  exec(sql: string): void;
  /** Present where a write transaction may stay open across calls (better-sqlite3). */
  readonly batch?: SqlBatch;
  prepare<Row = Record<string, unknown>>(sql: string): SqlStatement<Row>;
  transaction<T>(fn: () => T): T;
  read<T>(fn: () => T): T;
  /**
   * Whether a transaction is open on this connection. A method, not a getter: an accessor in
   * the Node adapter's object literal gave every adapter after a process's first dictionary
   * properties, and each call on it a slow lookup (test/hidden-classes.test.ts).
   */
  inTransaction(): boolean;
  /**
   * Runs `fn` with writes to virtual tables' shadow tables allowed (SQLITE_DBCONFIG_DEFENSIVE
   * off for its length, where the driver turns it on): only FTS5's averages record is written
   * so (search/fts-totals.ts). Statements that write them are run, and prepared, inside `fn`.
   */
  writingShadowTables<T>(fn: () => T): T;
  close(): void;
}
