/**
 * FTS5's totals for BM25, kept true for contentless_delete tables (decision 0082).
 *
 * bm25() reads two figures from a table's averages record (the row of `<table>_data` with id
 * 1: a varint count of rows, then a varint count of tokens per column): N, in every term's IDF,
 * and each column's average length. FTS5 adds a row's figures when it is inserted; a DELETE
 * from a contentless_delete table takes them out again in SQLite 3.54 (the browser's build),
 * but left the record as it was in 3.53 (better-sqlite3's). There, every re-index of an entry
 * (a tag, new bytes) counted it once more: after ten, a term in half the documents had IDF
 * log(21) instead of ~0, and common words outranked rare ones.
 *
 * Where FTS5 does not (`deletesKeepTotals`, asked of the build once), the store takes a deleted
 * row's figures out itself: `forget` reads the rows' sizes from `_docsize` (the varints FTS5
 * added to the totals when it inserted them) and writes the record less them, in the
 * transaction that deletes them, before the table's first write in it — FTS5 reads the record
 * at its first write and writes what it holds back at the commit. `mend` makes the record again
 * from every `_docsize` row where its count of rows is not theirs (an index written before
 * this, or by a build without it).
 */
import type { SqlDatabase, SqlStatement } from '../backend/sql.js';

/** The averages record's id in `<table>_data` (FTS5_AVERAGES_ROWID). */
const AVERAGES = 1;

/** What each SQLite build answered (by sqlite_version()): FTS5 takes a deleted row out of its totals. */
const builds = new Map<string, boolean>();

/**
 * Whether this connection's FTS5 takes a row deleted from a contentless_delete table out of
 * the averages record: asked of a table in `temp` once per SQLite build. Call it outside a
 * transaction (the record is written at each commit).
 */
export function deletesKeepTotals(db: SqlDatabase): boolean {
  const version = db.prepare<{ v: string }>('SELECT sqlite_version() AS v').get()!.v;
  let keeps = builds.get(version);
  if (keeps === undefined) {
    if (db.inTransaction()) throw new Error('deletesKeepTotals asks FTS5 outside a transaction');
    db.exec(`CREATE VIRTUAL TABLE temp.kura_totals_probe USING fts5(a, content = '', contentless_delete = 1)`);
    try {
      db.exec(`INSERT INTO temp.kura_totals_probe(rowid, a) VALUES (1, 'word')`);
      db.exec('DELETE FROM temp.kura_totals_probe WHERE rowid = 1');
      const block = db.prepare<{ block: Uint8Array }>(`SELECT block FROM temp.kura_totals_probe_data WHERE id = ${AVERAGES}`).get()?.block;
      keeps = (block ? decodeVarints(block)[0] : 0) === 0;
    } finally {
      db.exec('DROP TABLE temp.kura_totals_probe');
    }
    builds.set(version, keeps);
  }
  return keeps;
}

export class FtsTotals {
  readonly #db: SqlDatabase;
  readonly #table: string;
  readonly #columns: number;
  readonly #size: SqlStatement<{ sz: Uint8Array }>;
  readonly #record: SqlStatement<{ block: Uint8Array }>;
  readonly #rows: SqlStatement<{ n: number }>;

  /** `table`'s shadow tables on `db`; `columns`: its indexed columns. */
  constructor(db: SqlDatabase, table: string, columns: number) {
    this.#db = db;
    this.#table = table;
    this.#columns = columns;
    this.#size = db.prepare(`SELECT sz FROM ${table}_docsize WHERE id = ?`);
    this.#record = db.prepare(`SELECT block FROM ${table}_data WHERE id = ${AVERAGES}`);
    this.#rows = db.prepare(`SELECT COUNT(*) AS n FROM ${table}_docsize`);
  }

  /**
   * Takes the rows `ids` (those present) out of the totals, where FTS5 does not
   * (`deletesKeepTotals` false). Call it inside the transaction that deletes them, before that
   * transaction's first write to the table, with each id once.
   */
  forget(ids: Iterable<number>): void {
    const less = new Array<number>(this.#columns + 1).fill(0);
    for (const id of ids) {
      const row = this.#size.get(id);
      if (row) this.#add(less, row.sz);
    }
    if (less[0] === 0) return;
    const next = this.#read().map((v, i) => v - less[i]!);
    // Less than nothing (or unreadable): the record was already wrong. Made again from every
    // row, less these.
    if (next.some((v) => !(v >= 0))) this.#write(this.#sums(new Set(ids)));
    else this.#write(next);
  }

  /** The tokens the record counts, every column's. */
  tokens(): number {
    return this.#read()
      .slice(1)
      .reduce((a, b) => a + b, 0);
  }

  /** Whether the record is the sums of `_docsize` (a check: verify's, a damaged index's). */
  agrees(): boolean {
    const sums = this.#sums(new Set());
    return this.#read().every((v, i) => v === sums[i]);
  }

  /** Makes the record again from `_docsize` where its count of rows is not theirs; true if it did. */
  mend(): boolean {
    const count = this.#rows.get()!.n;
    const record = this.#read();
    if (record[0] === count) return false;
    this.#db.transaction(() => this.#write(this.#sums(new Set())));
    return true;
  }

  /**
   * The record as numbers: rows, then tokens per column (zeros where it is empty or absent;
   * NaN where it cannot be read, which no count equals: it is made again).
   */
  #read(): number[] {
    const block = this.#record.get()?.block;
    let values: number[];
    try {
      values = block ? decodeVarints(block) : [];
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      values = [NaN];
    }
    return Array.from({ length: this.#columns + 1 }, (_, i) => values[i] ?? (Number.isNaN(values[0]) ? NaN : 0));
  }

  /** Every `_docsize` row's figures added up, leaving out `except`. */
  #sums(except: Set<number>): number[] {
    const sums = new Array<number>(this.#columns + 1).fill(0);
    const all = this.#db.prepare<{ id: number; sz: Uint8Array }>(`SELECT id, sz FROM ${this.#table}_docsize`);
    for (const { id, sz } of all.iterate()) if (!except.has(id)) this.#add(sums, sz);
    return sums;
  }

  /** Adds a `_docsize` row (its varints: tokens per column) to `figures`: one row, its tokens. */
  #add(figures: number[], sz: Uint8Array): void {
    const sizes = decodeVarints(sz);
    figures[0]! += 1;
    for (let c = 0; c < this.#columns; c++) figures[c + 1]! += sizes[c] ?? 0;
  }

  #write(values: number[]): void {
    const block = encodeVarints(values);
    // (Prepared each time, inside: SQLite refuses to compile the statement while defensive.)
    this.#db.writingShadowTables(() => this.#db.prepare(`UPDATE ${this.#table}_data SET block = ? WHERE id = ${AVERAGES}`).run(block));
  }
}

/**
 * SQLite's varints, as FTS5 writes its records (sqlite3Fts5GetVarint): big-endian groups of 7
 * bits, the high bit set on every byte but the last, a ninth byte's 8 bits whole.
 */
export function decodeVarints(bytes: Uint8Array): number[] {
  const values: number[] = [];
  let i = 0;
  while (i < bytes.length) {
    let v = 0;
    for (let n = 0; ; n++) {
      if (i >= bytes.length) throw new RangeError('a varint runs past the end of its record');
      const b = bytes[i++]!;
      if (n === 8) {
        v = v * 256 + b;
        break;
      }
      v = v * 128 + (b & 0x7f);
      if ((b & 0x80) === 0) break;
    }
    values.push(v);
  }
  return values;
}

/** The varints of `values` (each below 2^53; below 2^56 needs no ninth byte). */
export function encodeVarints(values: readonly number[]): Uint8Array {
  const out: number[] = [];
  for (const value of values) {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a count: ${value}`);
    const groups: number[] = [];
    let v = value;
    do {
      groups.push(v % 128);
      v = Math.floor(v / 128);
    } while (v > 0);
    for (let g = groups.length - 1; g >= 0; g--) out.push(g > 0 ? groups[g]! | 0x80 : groups[g]!);
  }
  return Uint8Array.from(out);
}
