/**
 * SQLite compiled to WebAssembly (`@sqlite.org/sqlite-wasm`, its oo1 API) behind the
 * SqlDatabase contract (sql.ts). The browser store runs on it (with the opfs-sahpool VFS,
 * browser/index.ts); Node runs it in memory, which lets the same conformance and store tests
 * exercise this adapter without a browser.
 */
import type { Database, PreparedStatement, Sqlite3Static } from '@sqlite.org/sqlite-wasm';
import type { RunResult, SqlDatabase, SqlStatement, SqlValue } from './sql.js';

/** BigInts that fit are numbers (the contract: INTEGER results are numbers below 2^53). */
function narrow(v: unknown): unknown {
  return typeof v === 'bigint' && v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v;
}

class WasmStatement<Row> implements SqlStatement<Row> {
  readonly #stmt: PreparedStatement;
  readonly #db: WasmDatabase;
  readonly #params: number;
  /** Column names, read once: asking per row costs a call into wasm per column. */
  #columns: string[] | undefined;
  /** True while an `iterate` holds the statement mid-result. */
  #busy = false;

  constructor(db: WasmDatabase, stmt: PreparedStatement) {
    this.#db = db;
    this.#stmt = stmt;
    this.#params = stmt.parameterCount;
  }

  #bind(params: SqlValue[]): void {
    // better-sqlite3 refuses a statement re-entered while iterating; so does this (a silent
    // reset would truncate the outer loop's results).
    if (this.#busy) throw new TypeError('This statement is busy executing a query');
    if (params.length !== this.#params) throw new RangeError(`Too ${params.length < this.#params ? 'few' : 'many'} parameter values were provided`);
    // Every use ends with reset() (finally blocks below), and every parameter is bound anew:
    // no clearing of bindings needed.
    if (params.length) this.#stmt.bind(params as never);
  }

  #row(): Row {
    const names = (this.#columns ??= this.#stmt.getColumnNames());
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) row[names[i]!] = narrow(this.#stmt.get(i));
    return row as Row;
  }

  run(...params: SqlValue[]): RunResult {
    this.#bind(params);
    try {
      this.#stmt.step();
      return { changes: this.#db.raw.changes(), lastInsertRowid: narrow(this.#db.lastInsertRowid()) as number };
    } finally {
      this.#stmt.reset();
    }
  }

  get(...params: SqlValue[]): Row | undefined {
    this.#bind(params);
    try {
      return this.#stmt.step() ? this.#row() : undefined;
    } finally {
      this.#stmt.reset();
    }
  }

  all(...params: SqlValue[]): Row[] {
    this.#bind(params);
    try {
      const rows: Row[] = [];
      while (this.#stmt.step()) rows.push(this.#row());
      return rows;
    } finally {
      this.#stmt.reset();
    }
  }

  *iterate(...params: SqlValue[]): IterableIterator<Row> {
    this.#bind(params);
    this.#busy = true;
    try {
      while (this.#stmt.step()) yield this.#row();
    } finally {
      this.#busy = false;
      this.#stmt.reset();
    }
  }
}

export class WasmDatabase implements SqlDatabase {
  readonly raw: Database;
  readonly #sqlite3: Sqlite3Static;
  #depth = 0;

  constructor(sqlite3: Sqlite3Static, db: Database) {
    this.#sqlite3 = sqlite3;
    this.raw = db;
  }

  lastInsertRowid(): number | bigint {
    return this.#sqlite3.capi.sqlite3_last_insert_rowid(this.raw.pointer!);
  }

  exec(sql: string): void {
    this.raw.exec(sql);
  }

  prepare<Row = Record<string, unknown>>(sql: string): SqlStatement<Row> {
    return new WasmStatement<Row>(this, this.raw.prepare(sql));
  }

  /**
   * BEGIN IMMEDIATE at the outside (one writer: the lock is taken at once), a savepoint when
   * nested — like better-sqlite3's `transaction`. `fn` must be synchronous: a transaction
   * must never span an await (other work would run inside it).
   */
  transaction<T>(fn: () => T): T {
    const outer = this.#depth === 0;
    const sp = `kura_sp${this.#depth}`;
    this.raw.exec(outer ? 'BEGIN IMMEDIATE' : `SAVEPOINT ${sp}`);
    this.#depth++;
    try {
      const result = fn();
      if (result instanceof Promise) throw new TypeError('Transaction function cannot return a promise');
      this.raw.exec(outer ? 'COMMIT' : `RELEASE ${sp}`);
      return result;
    } catch (e) {
      // A failed COMMIT (or an error SQLite already rolled back) leaves nothing to undo.
      if (this.inTransaction) this.raw.exec(outer ? 'ROLLBACK' : `ROLLBACK TO ${sp}; RELEASE ${sp}`);
      throw e;
    } finally {
      this.#depth--;
    }
  }

  get inTransaction(): boolean {
    return this.raw.pointer !== undefined && this.#sqlite3.capi.sqlite3_get_autocommit(this.raw.pointer) === 0;
  }

  close(): void {
    this.raw.close();
  }
}

/** A database in memory (Node, tests) on an initialised sqlite3 module. */
export function openMemoryDatabase(sqlite3: Sqlite3Static): WasmDatabase {
  return new WasmDatabase(sqlite3, new sqlite3.oo1.DB(':memory:', 'c'));
}
