/**
 * SQLite compiled to WebAssembly (`@sqlite.org/sqlite-wasm`, its oo1 API) behind the
 * SqlDatabase contract (sql.ts). The browser store runs on it (with the opfs-sahpool VFS,
 * browser/index.ts); Node runs it in memory, which lets the same conformance and store tests
 * exercise this adapter without a browser.
 */
import type { Database, PreparedStatement, Sqlite3Static } from '@sqlite.org/sqlite-wasm';
import type { RunResult, SqlDatabase, SqlStatement, SqlValue } from './sql.js';
import { storageError } from '../errors.js';

/** BigInts that fit are numbers (the contract: INTEGER results are numbers below 2^53). */
function narrow(v: bigint): number | bigint {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v;
}

/**
 * The C functions a statement calls, straight from the wasm instance's exports. The oo1 and
 * capi layers wrap each call in argument conversion and a scoped allocation; on the store's
 * hot statements that cost ~140 µs per put over better-sqlite3 (decision 0014). i64 values
 * are BigInts (the build has WASM_BIGINT).
 */
interface RawExports {
  sqlite3_step(stmt: number): number;
  sqlite3_reset(stmt: number): number;
  sqlite3_bind_null(stmt: number, i: number): number;
  sqlite3_bind_int64(stmt: number, i: number, v: bigint): number;
  sqlite3_bind_double(stmt: number, i: number, v: number): number;
  sqlite3_bind_text(stmt: number, i: number, ptr: number, n: number, destructor: number): number;
  sqlite3_bind_blob(stmt: number, i: number, ptr: number, n: number, destructor: number): number;
  sqlite3_column_count(stmt: number): number;
  sqlite3_column_type(stmt: number, i: number): number;
  sqlite3_column_int64(stmt: number, i: number): bigint;
  sqlite3_column_double(stmt: number, i: number): number;
  sqlite3_column_text(stmt: number, i: number): number;
  sqlite3_column_blob(stmt: number, i: number): number;
  sqlite3_column_bytes(stmt: number, i: number): number;
  sqlite3_changes64(db: number): bigint;
  sqlite3_last_insert_rowid(db: number): bigint;
  sqlite3_extended_errcode(db: number): number;
  sqlite3_errmsg(db: number): number;
}

const SQLITE_ROW = 100;
const SQLITE_DONE = 101;
/** SQLITE_TRANSIENT: SQLite copies a bound text or blob before the bind call returns. */
const TRANSIENT = -1;
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);
const INTEGER = 1;
const FLOAT = 2;
const TEXT = 3;
const BLOB = 4;

/** An SQLite error with better-sqlite3's shape: `code` names the extended result code. */
export class SqliteWasmError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly resultCode: number,
  ) {
    super(message);
    this.name = 'SqliteError';
  }
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

class WasmStatement<Row> implements SqlStatement<Row> {
  readonly #db: WasmDatabase;
  readonly #x: RawExports;
  /** sqlite3_stmt*; oo1 owns it and finalizes it when the database closes. */
  readonly #p: number;
  readonly #params: number;
  /** Column names, read once: asking per row costs a call into wasm per column. */
  #columns: string[] | undefined;
  /** True while an `iterate` holds the statement mid-result. */
  #busy = false;

  constructor(db: WasmDatabase, stmt: PreparedStatement) {
    this.#db = db;
    this.#x = db.exports;
    this.#p = stmt.pointer!;
    this.#params = stmt.parameterCount;
    this.#columns = stmt.columnCount > 0 ? stmt.getColumnNames() : [];
  }

  #bind(params: SqlValue[]): void {
    // better-sqlite3 refuses a statement re-entered while iterating; so does this (a silent
    // reset would truncate the outer loop's results).
    if (this.#busy) throw new TypeError('This statement is busy executing a query');
    if (params.length !== this.#params) throw new RangeError(`Too ${params.length < this.#params ? 'few' : 'many'} parameter values were provided`);
    // Every use ends with reset() (finally blocks below), and every parameter is bound anew:
    // no clearing of bindings needed.
    const x = this.#x;
    const p = this.#p;
    for (let i = 0; i < params.length; i++) {
      const v = params[i];
      const at = i + 1;
      let rc: number;
      if (v === null || v === undefined) rc = x.sqlite3_bind_null(p, at);
      else if (typeof v === 'number') rc = Number.isSafeInteger(v) ? x.sqlite3_bind_int64(p, at, BigInt(v)) : x.sqlite3_bind_double(p, at, v);
      else if (typeof v === 'bigint') {
        // The wasm boundary would wrap a wider BigInt modulo 2^64 without a word.
        if (v > INT64_MAX || v < INT64_MIN) throw new RangeError(`parameter ${at} does not fit in 64 bits`);
        rc = x.sqlite3_bind_int64(p, at, v);
      }
      else if (typeof v === 'string') {
        // UTF-8 takes at most 3 bytes per UTF-16 unit.
        const ptr = this.#db.scratch(v.length * 3);
        const { written } = utf8.encodeInto(v, this.#db.heap(ptr, v.length * 3));
        rc = x.sqlite3_bind_text(p, at, ptr, written, TRANSIENT);
      } else if (v instanceof Uint8Array) {
        const ptr = this.#db.scratch(v.length);
        this.#db.heap(ptr, v.length).set(v);
        rc = x.sqlite3_bind_blob(p, at, ptr, v.length, TRANSIENT);
      } else throw new TypeError(`cannot bind a ${typeof v} (parameter ${at})`);
      if (rc !== 0) this.#db.fail(rc);
    }
  }

  #step(): boolean {
    const rc = this.#x.sqlite3_step(this.#p);
    if (rc === SQLITE_ROW) return true;
    if (rc === SQLITE_DONE) return false;
    return this.#db.fail(rc);
  }

  #row(): Row {
    const x = this.#x;
    const p = this.#p;
    const names = this.#columns!;
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) {
      let v: unknown;
      switch (x.sqlite3_column_type(p, i)) {
        case INTEGER:
          v = narrow(x.sqlite3_column_int64(p, i));
          break;
        case FLOAT:
          v = x.sqlite3_column_double(p, i);
          break;
        case TEXT: {
          const ptr = x.sqlite3_column_text(p, i); // before _bytes: the order SQLite documents
          v = fromUtf8.decode(this.#db.heap(ptr, x.sqlite3_column_bytes(p, i)));
          break;
        }
        case BLOB: {
          const ptr = x.sqlite3_column_blob(p, i);
          v = this.#db.heap(ptr, x.sqlite3_column_bytes(p, i)).slice(); // a copy: the row outlives the step
          break;
        }
        default:
          v = null;
      }
      row[names[i]!] = v;
    }
    return row as Row;
  }

  run(...params: SqlValue[]): RunResult {
    this.#bind(params);
    try {
      this.#step();
      return { changes: Number(this.#x.sqlite3_changes64(this.#db.pointer)), lastInsertRowid: narrow(this.#x.sqlite3_last_insert_rowid(this.#db.pointer)) };
    } finally {
      this.#x.sqlite3_reset(this.#p);
    }
  }

  get(...params: SqlValue[]): Row | undefined {
    this.#bind(params);
    try {
      return this.#step() ? this.#row() : undefined;
    } finally {
      this.#x.sqlite3_reset(this.#p);
    }
  }

  all(...params: SqlValue[]): Row[] {
    this.#bind(params);
    try {
      const rows: Row[] = [];
      while (this.#step()) rows.push(this.#row());
      return rows;
    } finally {
      this.#x.sqlite3_reset(this.#p);
    }
  }

  *iterate(...params: SqlValue[]): IterableIterator<Row> {
    this.#bind(params);
    this.#busy = true;
    try {
      while (this.#step()) yield this.#row();
    } finally {
      this.#busy = false;
      this.#x.sqlite3_reset(this.#p);
    }
  }
}

export class WasmDatabase implements SqlDatabase {
  readonly raw: Database;
  readonly #sqlite3: Sqlite3Static;
  readonly exports: RawExports;
  /** Wasm memory for bound values, grown as needed, freed on close. */
  #scratch = 0;
  #scratchSize = 0;
  #depth = 0;

  constructor(sqlite3: Sqlite3Static, db: Database) {
    this.#sqlite3 = sqlite3;
    this.raw = db;
    this.exports = sqlite3.wasm.exports as unknown as RawExports;
  }

  get pointer(): number {
    return this.raw.pointer!;
  }

  /** A wasm buffer of at least `size` bytes, reused by every bind (SQLite copies bound values). */
  scratch(size: number): number {
    // Never the null pointer, even for 0 bytes: SQLite binds a null pointer as NULL, not ''.
    if (size > this.#scratchSize || this.#scratch === 0) {
      const want = Math.max(size, 4096, this.#scratchSize * 2);
      const ptr = this.#sqlite3.wasm.alloc(want) as number;
      if (this.#scratch) this.#sqlite3.wasm.dealloc(this.#scratch);
      this.#scratch = ptr;
      this.#scratchSize = want;
    }
    return this.#scratch;
  }

  /** A view of wasm memory (taken anew each time: memory growth detaches old views). */
  heap(ptr: number, length: number): Uint8Array {
    return new Uint8Array(this.#sqlite3.wasm.heap8u().buffer, ptr, length);
  }

  /** Throws the database's error for result code `rc`, as better-sqlite3 would (a `code` string). */
  fail(rc: number): never {
    const x = this.exports;
    const extended = x.sqlite3_extended_errcode(this.pointer) || rc;
    const ptr = x.sqlite3_errmsg(this.pointer);
    const bytes = this.#sqlite3.wasm.heap8u();
    let end = ptr;
    while (bytes[end] !== 0) end++;
    const message = fromUtf8.decode(bytes.subarray(ptr, end));
    // Typed as Node's driver errors are (node/sqlite.ts): a malformed database is CORRUPT_DATA
    // (reason `database`: a rebuild from the log), a full one STORAGE_FULL, I/O IO_ERROR.
    throw storageError(new SqliteWasmError(message, this.#sqlite3.capi.sqlite3_js_rc_str(extended) ?? `SQLITE_ERROR_${extended}`, extended));
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
      if (this.inTransaction()) this.raw.exec(outer ? 'ROLLBACK' : `ROLLBACK TO ${sp}; RELEASE ${sp}`);
      throw e;
    } finally {
      this.#depth--;
    }
  }

  read<T>(fn: () => T): T {
    if (this.#depth > 0) return fn();
    this.raw.exec('BEGIN');
    this.#depth++;
    try {
      const result = fn();
      this.raw.exec('COMMIT');
      return result;
    } catch (e) {
      if (this.inTransaction()) this.raw.exec('ROLLBACK');
      throw e;
    } finally {
      this.#depth--;
    }
  }

  inTransaction(): boolean {
    return this.raw.pointer !== undefined && this.#sqlite3.capi.sqlite3_get_autocommit(this.raw.pointer) === 0;
  }

  writingShadowTables<T>(fn: () => T): T {
    // (SQLite opens a connection with SQLITE_DBCONFIG_DEFENSIVE off, and this adapter leaves it off.)
    return fn();
  }

  close(): void {
    this.raw.close();
    if (this.#scratch) this.#sqlite3.wasm.dealloc(this.#scratch);
    this.#scratch = 0;
    this.#scratchSize = 0;
  }
}

/** A database in memory (Node, tests) on an initialised sqlite3 module. */
export function openMemoryDatabase(sqlite3: Sqlite3Static): WasmDatabase {
  return new WasmDatabase(sqlite3, new sqlite3.oo1.DB(':memory:', 'c'));
}
