/**
 * The database checked against its log (decision 0073): SQLite's own check of every page, then
 * every table a checkpoint holds compared row for row with a replay of the log — the newest
 * whole checkpoint at or below the database's head and the commits after it — in a scratch
 * database. SQLite pages carry no checksum: a flipped byte or a lost page of kura.db changed a
 * path or dropped an entry, and verify said ok.
 */
import { CorruptDataError } from '@kura/core';
import type { SqlDatabase, SqlValue } from '../backend/sql.js';
import { breather } from '../breather.js';
import { bytesToHex } from '../hex.js';
import { CHECKPOINT_TABLES, columnsOf } from './checkpoint.js';
import { readHead, type LogHead } from './commits.js';
import type { LogStore } from './log-store.js';
import { readConfigObject, replayCatalog, replayCommits } from './open.js';
import { migrate } from './schema.js';
import { prepareStatements, type Statements } from './statements.js';

export interface DamagedCatalog {
  /** `database`: SQLite finds the file damaged (PRAGMA integrity_check); `catalog`: a table is not what the log makes it. */
  reason: 'database' | 'catalog';
  table?: string;
  /** Rows the log gives that the database lacks. */
  missing?: number;
  /** Rows the database holds that the log does not give. */
  extra?: number;
  /** Rows the database holds otherwise than the log gives them. */
  differing?: number;
  message: string;
}

export interface CatalogCheck {
  /** Whether the tables were compared with the log's replay (false: see decision 0073). */
  checked: boolean;
  /** Rows compared (the replay's). */
  rowsChecked: number;
  damaged: DamagedCatalog[];
}

/** Rows named per table and kind in a report. */
const EXAMPLES = 3;
/** Rows of each side a page of the comparison reads (one read transaction of the database each). */
const PAGE = 2_000;
/** Problems integrity_check lists at most. */
const PROBLEMS = 10;

const REBUILD = 'a rebuild makes the database again from the log (kura rebuild; in a browser, BrowserStore.rebuild)';

export async function verifyCatalog(db: SqlDatabase, st: Statements, log: LogStore, scratch?: () => SqlDatabase): Promise<CatalogCheck> {
  const damaged: DamagedCatalog[] = [];
  const sound = integrityDamage(db);
  if (sound) damaged.push(sound);
  const unchecked = { checked: false, rowsChecked: 0, damaged };
  const config = await readConfigObject(log);
  const start = db.read(() => readHead(st));
  if (!scratch || !config || !start) return unchecked;
  const other = scratch();
  try {
    migrate(other);
    const ost = prepareStatements(other);
    const head: LogHead = await replayCatalog(other, ost, log, config, start.seq);
    const rows = await compareCatalog({ db, st, replay: other, rst: ost, log, head }, damaged);
    return rows === undefined ? unchecked : { checked: true, rowsChecked: rows, damaged };
  } catch (e) {
    // Damage of the log (or a checkpoint) ends the replay: log-verify, beside this, reports it.
    // Damage of the database that the integrity check missed ends the comparison: reported.
    if (!(e instanceof CorruptDataError)) throw e;
    if (e.reason === 'database' && !damaged.some((d) => d.reason === 'database')) damaged.push({ reason: 'database', message: e.message });
    return unchecked;
  } finally {
    other.close();
  }
}

/**
 * What PRAGMA integrity_check finds (undefined: the file is sound as SQLite sees it). A page it
 * cannot read at all fails the check itself (CORRUPT_DATA, reason `database`, from the adapter).
 */
function integrityDamage(db: SqlDatabase): DamagedCatalog | undefined {
  try {
    const rows = db.read(() => {
      // Each full-text index read first, in the same transaction: FTS5 keeps a table's segment
      // list per connection, and its integrity check uses the one it has without looking for a
      // newer one — after another process's writes merged segments away, it reported
      // "corruption found reading blob …" of an index a fresh connection found sound (beside a
      // writing process, in CI). A query brings the list up to date.
      // (The keyword index, where it is a table of this database — a store in memory or in a
      // browser — is derived and checked on its own: store-index.ts, decision 0083.)
      const fts = db.prepare<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE % USING fts5%' AND name <> 'search'").all();
      for (const { name } of fts) db.prepare(`SELECT rowid FROM "${name}" WHERE "${name}" MATCH 'kura' LIMIT 1`).all();
      return db.prepare<Record<string, string>>(`PRAGMA integrity_check(${PROBLEMS})`).all();
    });
    const found = rows.map((r) => String(Object.values(r)[0])).filter((line) => !line.includes('table "search"'));
    if (found.length === 0 || (found.length === 1 && found[0] === 'ok')) return undefined;
    return { reason: 'database', message: `SQLite finds kura.db damaged: ${found.join('; ')}${found.length === PROBLEMS ? '; …' : ''}: ${REBUILD}` };
  } catch (e) {
    if (!(e instanceof CorruptDataError && e.reason === 'database')) throw e;
    return { reason: 'database', message: e.message };
  }
}

/** The database and its replay, which follows the database's head as writers move it. */
interface Sides {
  db: SqlDatabase;
  st: Statements;
  replay: SqlDatabase;
  rst: Statements;
  log: LogStore;
  /** The commit the replay has applied. */
  head: LogHead;
}

/** What a table's comparison found so far: counts, and the first few rows of each kind by key. */
interface Tally {
  counts: { missing: number; extra: number; differing: number };
  found: { missing: string[]; extra: string[]; differing: string[] };
}

/**
 * Every checkpoint table of the database against the replay's, a page of keys at a time: each
 * page of the database is read in one read transaction with the head it is at, the replay is
 * brought to that head (it applies what writers committed since the page before), and then
 * read and compared. The event loop turns between pages (a server answers requests meanwhile).
 * Each table that differs is reported once. Answers the rows compared, or undefined when the
 * head went where the replay cannot follow (back, or past what the log holds: the log's to
 * report).
 */
async function compareCatalog(sides: Sides, damaged: DamagedCatalog[]): Promise<number | undefined> {
  let rows = 0;
  const breathe = breather();
  for (const t of CHECKPOINT_TABLES) {
    // The database's columns: one not migrated (opened read-only) is compared on those it has.
    const columns = sides.db.read(() => columnsOf(sides.db, t.name));
    if (columns.length === 0) continue; // (a table its schema does not have yet)
    const keys = t.order.split(',').map((k) => k.trim());
    const page = pageQuery(t.name, columns, keys);
    const tally: Tally = { counts: { missing: 0, extra: 0, differing: 0 }, found: { missing: [], extra: [], differing: [] } };
    let after: Row | undefined;
    for (;;) {
      const params = after ? keys.map((k) => after![k]!) : [];
      const mine = sides.db.read(() => ({ head: readHead(sides.st), rows: sides.db.prepare<Row>(page(after !== undefined)).all(...params) }));
      if (!mine.head || !(await caughtUp(sides, mine.head.seq))) return undefined;
      const theirs = sides.replay.prepare<Row>(page(after !== undefined)).all(...params);
      const compared = comparePage(mine.rows, theirs, columns, keys, tally);
      rows += compared.rows;
      if (!compared.last) break;
      after = compared.last;
      await breathe();
    }
    const { counts, found } = tally;
    if (counts.missing + counts.extra + counts.differing === 0) continue;
    const parts: string[] = [];
    const say = (kind: keyof Tally['counts'], what: (n: number) => string) => {
      if (counts[kind]) parts.push(`${what(counts[kind])} (${found[kind].join('; ')}${counts[kind] > EXAMPLES ? '; …' : ''})`);
    };
    say('missing', (n) => `${n} row${n === 1 ? '' : 's'} the log gives ${n === 1 ? 'is' : 'are'} missing`);
    say('extra', (n) => `${n} row${n === 1 ? '' : 's'} the log does not give`);
    say('differing', (n) => `${n} row${n === 1 ? ' differs' : 's differ'} from the log`);
    damaged.push({ reason: 'catalog', table: t.name, ...counts, message: `table ${t.name}: ${parts.join(', ')}: ${REBUILD}` });
  }
  return rows;
}

/** A table's page: PAGE rows in key order, from the start or after a key (the caller binds its values). */
function pageQuery(table: string, columns: readonly string[], keys: readonly string[]): (after: boolean) => string {
  const select = `SELECT ${columns.join(', ')} FROM ${table}`;
  const order = ` ORDER BY ${keys.join(', ')} LIMIT ${PAGE}`;
  const where = ` WHERE (${keys.join(', ')}) > (${keys.map(() => '?').join(', ')})`;
  return (after) => select + (after ? where : '') + order;
}

/** Brings the replay to commit `seq`, the database's head; false when it cannot (the head went back, or past the log). */
async function caughtUp(sides: Sides, seq: number): Promise<boolean> {
  if (seq < sides.head.seq) return false;
  if (seq > sides.head.seq) sides.head = await replayCommits(sides.replay, sides.rst, sides.log, sides.head, seq);
  return sides.head.seq === seq;
}

/**
 * One page of a table, each side's rows after the same key (up to PAGE each), compared up to
 * the smaller of the two pages' last keys (past it, a side's page may not reach). Answers the
 * rows compared and the key the page ended at (undefined: both sides are done).
 */
function comparePage(mine: readonly Row[], theirs: readonly Row[], columns: readonly string[], keys: readonly string[], tally: Tally): { rows: number; last: Row | undefined } {
  // The page ends where the shorter-reaching full side ends; a side with fewer than PAGE rows has no more.
  const ends = [mine, theirs].filter((side) => side.length === PAGE).map((side) => side[PAGE - 1]!);
  const last = ends.length === 0 ? undefined : ends.length === 1 ? ends[0] : compareKeys(ends[0]!, ends[1]!, keys) <= 0 ? ends[0] : ends[1];
  const within = (r: Row | undefined) => r !== undefined && (last === undefined || compareKeys(r, last, keys) <= 0);
  const note = (kind: keyof Tally['counts'], row: Row) => {
    if (tally.counts[kind]++ < EXAMPLES) tally.found[kind].push(keys.map((k) => `${k} ${shown(row[k]!)}`).join(', '));
  };
  let rows = 0;
  let i = 0;
  let j = 0;
  for (;;) {
    const a = within(mine[i]) ? mine[i] : undefined;
    const b = within(theirs[j]) ? theirs[j] : undefined;
    if (!a && !b) break;
    const order = !a ? 1 : !b ? -1 : compareKeys(a, b, keys);
    if (order < 0) {
      note('extra', a!);
      i++;
    } else if (order > 0) {
      note('missing', b!);
      rows++;
      j++;
    } else {
      if (!sameRow(a!, b!, columns)) note('differing', a!);
      rows++;
      i++;
      j++;
    }
  }
  return { rows, last };
}

type Row = Record<string, SqlValue>;

/** SQLite's order of values (NULL, numbers, text by its UTF-8 bytes, BLOBs by their bytes), key column by key column. */
function compareKeys(a: Row, b: Row, keys: readonly string[]): number {
  for (const k of keys) {
    const c = compareValues(a[k]!, b[k]!);
    if (c !== 0) return c;
  }
  return 0;
}

function sameRow(a: Row, b: Row, columns: readonly string[]): boolean {
  for (const c of columns) if (!sameValue(a[c]!, b[c]!)) return false;
  return true;
}

function rank(v: SqlValue): number {
  if (v === null) return 0;
  if (typeof v === 'number' || typeof v === 'bigint') return 1;
  if (typeof v === 'string') return 2;
  return 3;
}

function compareValues(a: SqlValue, b: SqlValue): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 1) return a! < b! ? -1 : a! > b! ? 1 : 0;
  if (ra === 2) return compareCodePoints(a as string, b as string);
  if (ra === 3) return compareBytes(a as Uint8Array, b as Uint8Array);
  return 0;
}

/** UTF-8 byte order is code point order; UTF-16's differs above U+FFFF (a surrogate sorts below U+E000). */
function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done || y.done) return x.done && y.done ? 0 : x.done ? -1 : 1;
    const d = x.value.codePointAt(0)! - y.value.codePointAt(0)!;
    if (d !== 0) return d;
  }
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

function sameValue(a: SqlValue, b: SqlValue): boolean {
  if (a instanceof Uint8Array && b instanceof Uint8Array) return compareBytes(a, b) === 0;
  return a === b;
}

function shown(v: SqlValue): string {
  return v instanceof Uint8Array ? bytesToHex(v) : JSON.stringify(typeof v === 'bigint' ? String(v) : v);
}
