/**
 * Checkpoints (FORMAT.md §15.5): the catalog's tables as they are after commit `seq`, so a
 * rebuild starts there instead of at the first commit. A store made before the log gets one at
 * seq 0 when it is first opened (its catalog has no commits to replay).
 *
 * Format: UTF-8 JSON lines. The first is the header {format, version, seq, hash, schema}; then,
 * per table, a line {table, columns} followed by one JSON array per row (BLOB columns as
 * lowercase hex); the last line is {rows, sha256} with the SHA-256 of every byte before it.
 * Derived tables (search index and queue, damaged marks, snapshot stamps) are not included.
 */
import { CorruptDataError, sha256 } from '@kura/core';
import type { SqlDatabase, SqlValue } from '../backend/sql.js';
import { bytesToHex, hexToBytes } from '../hex.js';
import { readHead, type LogHead } from './commits.js';
import type { LogStore } from './log-store.js';
import { SCHEMA_VERSION } from './schema.js';
import type { Statements } from './statements.js';

export const CHECKPOINT_FORMAT = 'kura-checkpoint';
export const CHECKPOINT_VERSION = 1;

/** The tables a checkpoint holds, in load order, with their BLOB columns and row order. */
export const CHECKPOINT_TABLES: readonly { name: string; blobs: readonly string[]; order: string }[] = [
  { name: 'packs', blobs: [], order: 'id' },
  { name: 'chunks', blobs: ['key'], order: 'key' },
  { name: 'chunk_holds', blobs: ['key'], order: 'key' },
  // When GC first found a chunk unreferenced (FORMAT.md §9): a condemnation with a margin
  // replays to the same rows only from the same marks.
  { name: 'condemned', blobs: ['key'], order: 'key' },
  // Packs dropped and not yet deleted, and the GC lease (decision 0041): from schema 13.
  { name: 'dropped_packs', blobs: [], order: 'name' },
  { name: 'gc_lease', blobs: [], order: 'id' },
  { name: 'documents', blobs: ['digest', 'manifest'], order: 'id' },
  { name: 'entries', blobs: [], order: 'id' },
  { name: 'tags', blobs: [], order: 'entry_id, tag' },
  { name: 'meta', blobs: [], order: 'entry_id, key' },
  { name: 'version_counters', blobs: [], order: 'path' },
  { name: 'versions', blobs: [], order: 'path, version' },
  // Paths deleted with their versions kept (decision 0059): from schema 16.
  { name: 'deleted_paths', blobs: [], order: 'path' },
  // Retention policies kept in the store (decision 0058): from schema 16.
  { name: 'retention_policies', blobs: [], order: 'target' },
  // Access tokens kept in the store (decision 0060): from schema 17.
  { name: 'tokens', blobs: [], order: 'name' },
  { name: 'trees', blobs: ['digest', 'body'], order: 'digest' },
  { name: 'snapshots', blobs: ['tree'], order: 'id' },
  // AUTOINCREMENT's high-water marks: ids are never reused, after a replay either.
  { name: 'sqlite_sequence', blobs: [], order: 'name' },
];

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function columnsOf(db: SqlDatabase, table: string): string[] {
  if (table === 'sqlite_sequence') return ['name', 'seq'];
  return db.prepare<{ name: string }>(`SELECT name FROM pragma_table_info('${table}') ORDER BY cid`).all().map((r) => r.name);
}

/** The catalog as a checkpoint at `head` (run inside a read transaction for one snapshot). */
export function encodeCheckpoint(db: SqlDatabase, head: Pick<LogHead, 'seq' | 'hash'>, schema: number): Uint8Array {
  const lines: string[] = [JSON.stringify({ format: CHECKPOINT_FORMAT, version: CHECKPOINT_VERSION, seq: head.seq, hash: bytesToHex(head.hash), schema })];
  let rows = 0;
  db.read(() => {
    for (const t of CHECKPOINT_TABLES) {
      const columns = columnsOf(db, t.name);
      lines.push(JSON.stringify({ table: t.name, columns }));
      const blob = columns.map((c) => t.blobs.includes(c));
      for (const row of db.prepare<Record<string, SqlValue>>(`SELECT ${columns.join(', ')} FROM ${t.name} ORDER BY ${t.order}`).iterate()) {
        lines.push(JSON.stringify(columns.map((c, i) => (blob[i] ? bytesToHex(row[c] as Uint8Array) : row[c]))));
        rows++;
      }
    }
  });
  const body = encoder.encode(lines.join('\n') + '\n');
  const trailer = encoder.encode(JSON.stringify({ rows, sha256: sha256(body).slice(7) }) + '\n');
  const out = new Uint8Array(body.length + trailer.length);
  out.set(body);
  out.set(trailer, body.length);
  return out;
}

/** Tables derived from the catalog (none in a checkpoint): emptied with it by clearCatalog, made again from it. */
const DERIVED_TABLES = ['search_queue', 'damaged', 'dir_stamps', 'doc_text', 'doc_embedded', 'doc_vectors', 'historic_docs', 'history_paths', 'history_spans', 'history_shown'];

/**
 * Empties the catalog and what is derived from it (inside the caller's transaction), for a
 * checkpoint to be loaded in its place: a server whose head the log no longer holds (decision
 * 0045). The configuration and the log position stay (the caller writes the new one).
 */
export function clearCatalog(db: SqlDatabase): void {
  for (const t of [...CHECKPOINT_TABLES].reverse()) db.exec(`DELETE FROM ${t.name}`);
  for (const t of DERIVED_TABLES) db.exec(`DELETE FROM ${t}`);
  for (const fts of ['history', 'history_span_text']) db.exec(`INSERT INTO ${fts}(${fts}) VALUES('delete-all')`);
  // The keyword index, where it is the catalog's own table (search/index-writer.ts inlineIndex);
  // a file of its own is emptied by the store that rebased (store-context.ts).
  if (db.prepare<{ n: number }>("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'search'").get()!.n) db.exec(`INSERT INTO search(search) VALUES('delete-all')`);
}

/**
 * A checkpoint's lines, header and trailer, its hash and shape checked (CORRUPT_DATA
 * `checkpoint` when wrong): what loading it checks first, and `verify` checks of every one.
 */
export function checkedCheckpoint(bytes: Uint8Array, name: string): { lines: string[]; header: { seq: number; hash: string }; trailer: { rows?: number; sha256?: string } } {
  const bad = (why: string) => new CorruptDataError(`checkpoint ${name} is damaged: ${why}`, 'checkpoint');
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw bad('not UTF-8');
  }
  const cut = text.lastIndexOf('\n', text.length - 2);
  if (cut < 0 || !text.endsWith('\n')) throw bad('no trailer');
  let trailer: { rows?: number; sha256?: string };
  try {
    trailer = JSON.parse(text.slice(cut + 1)) as { rows?: number; sha256?: string };
  } catch {
    throw bad('its trailer is not JSON');
  }
  const bodyBytes = encoder.encode(text.slice(0, cut + 1));
  if (sha256(bodyBytes).slice(7) !== trailer.sha256) throw bad('its hash does not match its bytes');
  const lines = text.slice(0, cut).split('\n');
  const header = JSON.parse(lines[0]!) as { format?: string; version?: number; seq?: number; hash?: string };
  if (header.format !== CHECKPOINT_FORMAT || header.version !== CHECKPOINT_VERSION || !Number.isSafeInteger(header.seq) || typeof header.hash !== 'string') {
    throw bad('not a Kura checkpoint of a version this Kura reads');
  }
  return { lines, header: header as { seq: number; hash: string }, trailer };
}

/**
 * Loads a checkpoint into an empty catalog (inside the caller's transaction) and returns the
 * log position it stands for. A checkpoint whose hash or shape is wrong is CORRUPT_DATA.
 */
export function loadCheckpoint(db: SqlDatabase, bytes: Uint8Array, name: string): Pick<LogHead, 'seq' | 'hash'> {
  const bad = (why: string) => new CorruptDataError(`checkpoint ${name} is damaged: ${why}`, 'checkpoint');
  const { lines, header, trailer } = checkedCheckpoint(bytes, name);
  let insert: ((row: SqlValue[]) => void) | undefined;
  let rows = 0;
  for (const line of lines.slice(1)) {
    const value = JSON.parse(line) as unknown;
    if (!Array.isArray(value)) {
      const { table, columns } = value as { table: string; columns: string[] };
      const spec = CHECKPOINT_TABLES.find((t) => t.name === table);
      if (!spec) throw bad(`unknown table ${table}`);
      const blob = columns.map((c) => spec.blobs.includes(c));
      const stmt = db.prepare(`INSERT INTO ${table}(${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
      insert = (row) => void stmt.run(...row.map((v, i) => (blob[i] ? hexToBytes(v as string) : v)));
      if (table === 'sqlite_sequence') db.exec('DELETE FROM sqlite_sequence');
      continue;
    }
    if (!insert) throw bad('a row before its table');
    insert(value as SqlValue[]);
    rows++;
  }
  if (rows !== trailer.rows) throw bad(`${rows} rows, the trailer says ${trailer.rows}`);
  return { seq: header.seq!, hash: hexToBytes(header.hash) };
}

/**
 * A writer checkpoints the catalog (FORMAT.md §15.5) after this many commits since the newest
 * checkpoint, so a rebuild replays at most about this many.
 */
export const CHECKPOINT_EVERY = 50_000;

/**
 * On object storage, after this many: a new server reads every commit object after the newest
 * checkpoint, one GET each (16 at a time), so the log between checkpoints must stay short —
 * ~0.5 s of a new server's start on loopback, seconds on a distant bucket. (None were written by
 * themselves before: a new server replayed the whole log.)
 */
export const CHECKPOINT_EVERY_OBJECTS = 5_000;

/** A checkpoint's object name: its seq, 20 digits. */
export function checkpointName(seq: number): string {
  return String(seq).padStart(20, '0');
}

/**
 * Writes a checkpoint of the committed catalog (§15.5) and answers its seq: on another thread
 * where the platform can (LogStore.checkpointAway), else here, from one read transaction (the
 * rows and the head it records are one state). Nothing is written when the head is at `after`
 * or before it (a checkpoint of it exists); a name another writer took is left as it is.
 */
export async function writeCheckpoint(db: SqlDatabase, st: Statements, log: LogStore, after: number): Promise<number> {
  if (log.checkpointAway) return log.checkpointAway(SCHEMA_VERSION);
  const { seq, bytes } = db.read(() => {
    const head = readHead(st)!;
    return { seq: head.seq, bytes: encodeCheckpoint(db, head, SCHEMA_VERSION) };
  });
  if (seq > after) await log.createCheckpoint(checkpointName(seq), bytes);
  return seq;
}
