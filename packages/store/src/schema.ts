/** The SQLite schema (docs/FORMAT.md §7) and its migrations. */
import { FormatMismatchError } from './errors.js';
import type { SqlDatabase } from './backend/sql.js';

export const SCHEMA_VERSION = 5;

/** MIGRATIONS[n] takes a database from user_version n to n + 1. */
const MIGRATIONS: string[] = [
  `
  CREATE TABLE config (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
  CREATE TABLE packs (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    sealed INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT;
  CREATE TABLE chunks (
    key BLOB PRIMARY KEY,
    pack_id INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    raw_len INTEGER NOT NULL,
    stored_len INTEGER NOT NULL,
    codec INTEGER NOT NULL,
    refs INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX chunks_garbage ON chunks(refs) WHERE refs = 0;
  CREATE TABLE documents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    digest BLOB NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    chunk_count INTEGER NOT NULL,
    manifest BLOB NOT NULL,
    path TEXT,
    media_type TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX documents_created ON documents(created_at, id);
  CREATE INDEX documents_path ON documents(path) WHERE path IS NOT NULL;
  CREATE INDEX documents_media ON documents(media_type) WHERE media_type IS NOT NULL;
  CREATE TABLE tags (doc_id INTEGER NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (tag, doc_id)) STRICT, WITHOUT ROWID;
  CREATE INDEX tags_doc ON tags(doc_id);
  CREATE TABLE damaged (key BLOB PRIMARY KEY, reason TEXT NOT NULL, found_at INTEGER NOT NULL) STRICT, WITHOUT ROWID;
  CREATE TABLE meta (
    doc_id INTEGER NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (doc_id, key)
  ) STRICT, WITHOUT ROWID;
  CREATE VIRTUAL TABLE search USING fts5(path, tags, meta, body, tokenize = 'unicode61 remove_diacritics 2');
  CREATE TABLE search_queue (doc_id INTEGER PRIMARY KEY, seq INTEGER NOT NULL DEFAULT 0) STRICT;
  CREATE TABLE version_counters (path TEXT PRIMARY KEY, last INTEGER NOT NULL) STRICT, WITHOUT ROWID;
  CREATE TABLE versions (
    path TEXT NOT NULL,
    version INTEGER NOT NULL,
    doc_id INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (path, version)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX versions_doc ON versions(doc_id);
  `,
  // 2: chunks uploaded for a later commit (chunk-level sync) are kept by GC until `until`.
  `
  CREATE TABLE chunk_holds (key BLOB PRIMARY KEY, until INTEGER NOT NULL) STRICT, WITHOUT ROWID;
  `,
  // 3: directory snapshots (FORMAT.md §13): tree objects, snapshot records, and on documents
  // the number of tree entries naming them and whether they are listed (put by a user) or
  // kept only for snapshots.
  `
  ALTER TABLE documents ADD COLUMN holds INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE documents ADD COLUMN listed INTEGER NOT NULL DEFAULT 1;
  CREATE TABLE trees (digest BLOB PRIMARY KEY, body BLOB NOT NULL, holds INTEGER NOT NULL) STRICT, WITHOUT ROWID;
  CREATE TABLE snapshots (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tree BLOB NOT NULL,
    label TEXT,
    created_at INTEGER NOT NULL,
    files INTEGER NOT NULL,
    bytes INTEGER NOT NULL
  ) STRICT;
  `,
  // 4: what each file of a snapshotted directory looked like when it was read (FORMAT.md
  // §13.4): a later snapshot reuses the document of a file whose stamp is unchanged.
  `
  CREATE TABLE file_cache (path TEXT PRIMARY KEY, stamp TEXT NOT NULL, digest BLOB NOT NULL) STRICT, WITHOUT ROWID;
  `,
  // 5: those stamps one row per directory (decision 0021). The rows per file are dropped, not
  // converted: a hint, whose loss costs one snapshot reading its files again.
  `
  DROP TABLE file_cache;
  CREATE TABLE dir_stamps (dir TEXT PRIMARY KEY, files TEXT NOT NULL) STRICT, WITHOUT ROWID;
  `,
];

export function schemaVersion(db: SqlDatabase): number {
  return (db.prepare<{ user_version: number }>('PRAGMA user_version').get()?.user_version ?? 0) as number;
}

/** Brings the schema to SCHEMA_VERSION; refuses a database from a newer Kura. */
export function migrate(db: SqlDatabase): void {
  const current = schemaVersion(db);
  if (current > SCHEMA_VERSION) {
    throw new FormatMismatchError(
      `this store's schema is version ${current}; this Kura understands up to ${SCHEMA_VERSION}: upgrade Kura`,
      String(SCHEMA_VERSION),
      String(current),
    );
  }
  for (let v = current; v < SCHEMA_VERSION; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.exec(`PRAGMA user_version = ${v + 1}`);
    });
  }
}
