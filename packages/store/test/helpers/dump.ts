/**
 * A canonical dump of a store's catalog: every row of every table the log determines, in
 * primary-key order, BLOBs as hex. Two databases with equal dumps hold the same catalog, ids
 * and counts included. Read with a separate connection (better-sqlite3, read-only), not through
 * the store: an independent reader of the tables FORMAT.md §7 defines.
 */
import Database from 'better-sqlite3';

/** The tables the log and checkpoints carry (FORMAT.md §15.5), plus config and log_state. */
const TABLES: Record<string, string> = {
  config: 'key',
  packs: 'id',
  chunks: 'key',
  chunk_holds: 'key',
  condemned: 'key',
  dropped_packs: 'name',
  gc_lease: 'id',
  documents: 'id',
  entries: 'id',
  tags: 'entry_id, tag',
  meta: 'entry_id, key',
  version_counters: 'path',
  versions: 'path, version',
  trees: 'digest',
  snapshots: 'id',
  sqlite_sequence: 'name',
  log_state: 'id',
};

function show(v: unknown): string {
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
  return JSON.stringify(v);
}

export function canonicalDump(dbPath: string): string {
  const db = new Database(dbPath, { readonly: true });
  try {
    const out: string[] = [];
    for (const [table, order] of Object.entries(TABLES)) {
      out.push(`# ${table}`);
      for (const row of db.prepare(`SELECT * FROM ${table} ORDER BY ${order}`).all() as Record<string, unknown>[]) {
        out.push(Object.entries(row).map(([k, v]) => `${k}=${show(v)}`).join(' '));
      }
    }
    return out.join('\n');
  } finally {
    db.close();
  }
}
