/** The SQLite schema (docs/FORMAT.md §7) and its migrations. */
import { sha256 } from '@kura/core';
import { FormatMismatchError } from '../errors.js';
import type { SqlDatabase } from '../backend/sql.js';
import { bytesToHex } from '../hex.js';
import { ENQUEUE_ALL, QUEUE_ROW_MAX } from './search-queue.js';

export const SCHEMA_VERSION = 24;

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
  // 6: paths are entries, a document is content (decision 0025). One entry per versioned path
  // (its latest version; the tags, metadata and media type of that document) in order of first
  // version, then a pathless entry per listed document no version names. Documents keep their
  // ids and count the versions and pathless entries naming them (refs). The search index is
  // rebuilt per entry.
  `
  CREATE TABLE entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT,
    doc_id INTEGER NOT NULL,
    media_type TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;
  INSERT INTO entries(path, doc_id, media_type, created_at, updated_at)
    SELECT p.path, l.doc_id, d.media_type, p.first, MAX(d.updated_at, l.created_at)
    FROM (SELECT path, MIN(created_at) AS first, MAX(version) AS last FROM versions GROUP BY path) p
    JOIN versions l ON l.path = p.path AND l.version = p.last
    JOIN documents d ON d.id = l.doc_id
    ORDER BY p.first, p.path;
  INSERT INTO entries(path, doc_id, media_type, created_at, updated_at)
    SELECT NULL, d.id, d.media_type, d.created_at, d.updated_at FROM documents d
    WHERE d.listed = 1 AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.doc_id = d.id)
    ORDER BY d.id;
  CREATE UNIQUE INDEX entries_path ON entries(path) WHERE path IS NOT NULL;
  -- By document, the pathless entry first (path NULL sorts first): one index serves both
  -- lookups; one pathless entry per document is kept by entries.ts recordPut, the only writer.
  CREATE INDEX entries_doc ON entries(doc_id, path);
  CREATE INDEX entries_media ON entries(media_type) WHERE media_type IS NOT NULL;

  CREATE TABLE entry_tags (entry_id INTEGER NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (tag, entry_id)) STRICT, WITHOUT ROWID;
  INSERT INTO entry_tags(entry_id, tag) SELECT e.id, t.tag FROM entries e JOIN tags t ON t.doc_id = e.doc_id;
  DROP TABLE tags;
  ALTER TABLE entry_tags RENAME TO tags;
  CREATE INDEX tags_entry ON tags(entry_id);
  CREATE TABLE entry_meta (entry_id INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (entry_id, key)) STRICT, WITHOUT ROWID;
  INSERT INTO entry_meta(entry_id, key, value) SELECT e.id, m.key, m.value FROM entries e JOIN meta m ON m.doc_id = e.doc_id;
  DROP TABLE meta;
  ALTER TABLE entry_meta RENAME TO meta;

  CREATE TABLE documents6 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    digest BLOB NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    chunk_count INTEGER NOT NULL,
    manifest BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    refs INTEGER NOT NULL,
    holds INTEGER NOT NULL
  ) STRICT;
  INSERT INTO documents6(id, digest, size, chunk_count, manifest, created_at, refs, holds)
    SELECT d.id, d.digest, d.size, d.chunk_count, d.manifest, d.created_at,
      (SELECT COUNT(*) FROM versions v WHERE v.doc_id = d.id) + (SELECT COUNT(*) FROM entries e WHERE e.doc_id = d.id AND e.path IS NULL),
      d.holds
    FROM documents d ORDER BY d.id;
  DELETE FROM sqlite_sequence WHERE name = 'documents6';
  INSERT INTO sqlite_sequence(name, seq) SELECT 'documents6', seq FROM sqlite_sequence WHERE name = 'documents';
  DROP TABLE documents;
  ALTER TABLE documents6 RENAME TO documents;

  DELETE FROM search;
  DROP TABLE search_queue;
  CREATE TABLE search_queue (entry_id INTEGER PRIMARY KEY, seq INTEGER NOT NULL DEFAULT 0) STRICT;
  INSERT INTO search_queue(entry_id) SELECT id FROM entries;
  `,
  // 7: the index keeps no copy of the text it indexes (contentless; decision 0027): the text is
  // in the packs already, compressed, and snippets are made from it at query time. Rebuilt.
  `
  DROP TABLE search;
  CREATE VIRTUAL TABLE search USING fts5(path, tags, meta, body, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
  DELETE FROM search_queue;
  INSERT INTO search_queue(entry_id) SELECT id FROM entries;
  `,
  // 8: the catalog is a replay of the commit log (decision 0026, FORMAT.md §15): the position
  // this database has applied. No row yet: a store from before the log, whose first open
  // writes a checkpoint of its catalog at seq 0 (catalog/open.ts). Packs record the writer
  // that opened them (several writers: only a dead writer's open pack is sealed by another);
  // while other writers are alive, GC reclaims a chunk only once it was found unreferenced a
  // margin ago (condemned.since; FORMAT.md §9).
  `
  CREATE TABLE log_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL,
    hash BLOB NOT NULL,
    segment TEXT NOT NULL,
    seg_end INTEGER NOT NULL
  ) STRICT;
  ALTER TABLE packs ADD COLUMN writer TEXT;
  CREATE TABLE condemned (key BLOB PRIMARY KEY, since INTEGER NOT NULL) STRICT, WITHOUT ROWID;
  `,
  // 9: snapshots are named by ids that come from the log (FORMAT.md §13, snapshot ids): 32 hex digits a
  // writer draws at random and records in the snapshot's operation, so every replay — and
  // every server reading the same log — gives the same id, and a few leading digits name one.
  // Snapshots made before get an id derived from their row (fillSnapshotIds).
  `
  ALTER TABLE snapshots ADD COLUMN uid TEXT;
  CREATE UNIQUE INDEX snapshots_uid ON snapshots(uid);
  `,
  // 10: the search queue holds lists of entry ids (decision 0033): a commit of 500 metadata
  // changes queues them in two rows instead of 500. What was queued stays queued. (And
  // packs.sealed, 0 or 1 before, records when a pack was sealed: 1 reads as long ago.)
  `
  CREATE TABLE search_queue10 (id INTEGER PRIMARY KEY, entries TEXT NOT NULL) STRICT;
  INSERT INTO search_queue10(entries)
    SELECT json_group_array(entry_id) FROM (SELECT entry_id, (row_number() OVER (ORDER BY entry_id) - 1) / ${QUEUE_ROW_MAX} AS g FROM search_queue)
    GROUP BY g ORDER BY g;
  DROP TABLE search_queue;
  ALTER TABLE search_queue10 RENAME TO search_queue;
  `,
  // 11: text extracted from PDF, DOCX and HTML documents, per document (decision 0035):
  // derived (not in the log or checkpoints), zstd-compressed UTF-8 of \`bytes\` bytes. Every
  // entry is indexed again, so documents stored before are extracted (and HTML loses its markup).
  `
  CREATE TABLE doc_text (
    doc_id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    text BLOB NOT NULL,
    bytes INTEGER NOT NULL,
    pages INTEGER,
    note TEXT,
    extracted_at INTEGER NOT NULL
  ) STRICT;
  DELETE FROM search_queue;
  ${ENQUEUE_ALL};
  `,
  // 12: vectors of documents' text for semantic search (decision 0036), per document and
  // model: derived, like doc_text. \`doc_embedded\` marks a document done for a model (0 chunks:
  // nothing of it is embedded); \`doc_vectors\` rows are int8 with a per-row scale.
  `
  CREATE TABLE doc_embedded (doc_id INTEGER NOT NULL, model TEXT NOT NULL, chunks INTEGER NOT NULL, PRIMARY KEY (doc_id, model)) STRICT, WITHOUT ROWID;
  CREATE TABLE doc_vectors (
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL,
    model TEXT NOT NULL,
    n INTEGER NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    scale REAL NOT NULL,
    vec BLOB NOT NULL
  ) STRICT;
  CREATE INDEX doc_vectors_doc ON doc_vectors(doc_id);
  `,
  // 13: GC on object storage (decision 0041): the lease that lets one collector run at a time,
  // and the packs whose rows were dropped, with when — their files or objects are deleted a
  // margin later (none on a local disk), then forgotten.
  `
  CREATE TABLE gc_lease (id INTEGER PRIMARY KEY CHECK (id = 1), holder TEXT NOT NULL, until INTEGER NOT NULL) STRICT;
  CREATE TABLE dropped_packs (name TEXT PRIMARY KEY, at INTEGER NOT NULL) STRICT, WITHOUT ROWID;
  `,
  // 14: small packs carried by their commit's log object on an object store (decision 0044):
  // which commit, and where in its object the pack begins; null for a pack of its own.
  `
  ALTER TABLE packs ADD COLUMN log_seq INTEGER;
  ALTER TABLE packs ADD COLUMN log_offset INTEGER;
  `,
  // 15: the keyword index stems English words (porter) and indexes the words of scripts written
  // without spaces, cut apart by Intl.Segmenter (decision 0054): rebuilt, every entry queued.
  // The history index (decision 0056): the text of every document no entry shows, once each
  // (filled by the first search through history).
  `
  DROP TABLE search;
  CREATE VIRTUAL TABLE search USING fts5(path, tags, meta, body, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2');
  DELETE FROM search_queue;
  ${ENQUEUE_ALL};
  CREATE VIRTUAL TABLE history USING fts5(body, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2');
  CREATE TABLE historic_docs (doc_id INTEGER PRIMARY KEY) STRICT;
  `,
  // 16: retention (decision 0058): a snapshot's tags (a JSON array; NULL: none) and pins that
  // keep a snapshot or a version whatever a policy says, and the policies kept in the store.
  // Paths deleted with their versions kept (a watched file deleted on disk; decision 0059), and when.
  `
  CREATE TABLE deleted_paths (path TEXT PRIMARY KEY, at INTEGER NOT NULL) STRICT, WITHOUT ROWID;
  CREATE TABLE retention_policies (target TEXT PRIMARY KEY, rules TEXT NOT NULL) STRICT, WITHOUT ROWID;
  ALTER TABLE snapshots ADD COLUMN tags TEXT;
  ALTER TABLE snapshots ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE versions ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
  `,
  // 17: access tokens kept in the store (decision 0060): by name, the SHA-256 of the secret
  // (hex; the secret itself is never kept), the scopes and path prefixes it grants (JSON arrays;
  // prefixes NULL: every path), and when it was made.
  `
  CREATE TABLE tokens (name TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, scopes TEXT NOT NULL, prefixes TEXT, created_at INTEGER NOT NULL) STRICT;
  `,
  // 18: grouped compression (decision 0063, FORMAT.md §6.2): a chunk stored as a member of a
  // group record (codec 2) has its place in the group's raw bytes; NULL for a record of its own.
  `
  ALTER TABLE chunks ADD COLUMN group_at INTEGER;
  `,
  // 19: history spans (decision 0056, amended): each path's versions in runs of at most 32,
  // each run's distinct lines indexed once (history_span_text, rowid = history_spans.id) to
  // rank paths' histories, and what each entry showed when they were made (history_shown); the
  // history index gains \`names\` (a token per path a document is a version of) so that a run's
  // versions are checked one query at a time. Derived: emptied, filled again by the next search
  // through history.
  `
  DROP TABLE history;
  DELETE FROM historic_docs;
  CREATE VIRTUAL TABLE history USING fts5(body, names, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2');
  ALTER TABLE historic_docs ADD COLUMN names TEXT NOT NULL DEFAULT '';
  CREATE TABLE history_paths (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, versions INTEGER NOT NULL, newest INTEGER NOT NULL, docsum INTEGER NOT NULL) STRICT;
  CREATE TABLE history_spans (id INTEGER PRIMARY KEY, path_id INTEGER NOT NULL, first INTEGER NOT NULL, last INTEGER NOT NULL) STRICT;
  CREATE INDEX history_spans_path ON history_spans(path_id, first);
  CREATE VIRTUAL TABLE history_span_text USING fts5(body, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2');
  CREATE TABLE history_shown (entry_id INTEGER PRIMARY KEY, doc_id INTEGER NOT NULL, media_type TEXT) STRICT;
  `,
  // 20: letters fold before the index sees text (words.ts foldLetters: compatibility forms by
  // NFKC, \`ＰＤＦ\` is PDF, \`ﬁle\` file; ß ss, œ oe, ё е, Greek accents, Hebrew points; decision
  // 0054's amendment), and HTML's headings are extracted as written (extract/html.ts, with the
  // page's title): the keyword index rebuilt, every entry queued, HTML text extracted again; the
  // history indexes, derived, emptied (filled again by the next search through history).
  `
  DELETE FROM doc_text WHERE kind = 'html';
  DROP TABLE search;
  CREATE VIRTUAL TABLE search USING fts5(path, tags, meta, body, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2');
  DELETE FROM search_queue;
  ${ENQUEUE_ALL};
  DROP TABLE history;
  CREATE VIRTUAL TABLE history USING fts5(body, names, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2');
  DELETE FROM historic_docs;
  DROP TABLE history_span_text;
  CREATE VIRTUAL TABLE history_span_text USING fts5(body, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2');
  DELETE FROM history_spans;
  DELETE FROM history_paths;
  DELETE FROM history_shown;
  `,
  // 21: a page's blocks html-to-text read inline are blocks (definition lists, figures, details:
  // extract/html.ts), and text in a single-byte encoding with no media type is text (a
  // `CHANGELOG` in Latin-1 was taken for binary: search/text.ts looksLikeText): HTML text
  // extracted again, every entry indexed again — into a new index (re-queued into the old one,
  // every row became a deletion and an insertion, whose leftovers moved BM25's figures: CISI's
  // keyword nDCG@10 0.396 -> 0.393 until the index merged).
  `
  DELETE FROM doc_text WHERE kind = 'html';
  DROP TABLE search;
  CREATE VIRTUAL TABLE search USING fts5(path, tags, meta, body, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2');
  DELETE FROM search_queue;
  ${ENQUEUE_ALL};
  `,
  // 22: the UTC offset where a snapshot was made (minutes east; null: not recorded), by which
  // retention groups it into hours, days, weeks, months and years, as restic does (a store's
  // policies applied in another time zone kept other snapshots: a trial).
  `
  ALTER TABLE snapshots ADD COLUMN utc_offset INTEGER;
  `,
  // 23: the keyword index leaves the catalog's file (decision 0081): a store of files keeps it
  // in search.db, written on a thread of its own (node/search-file.ts), whose index_of row
  // must be search_file's; a store in memory or a browser makes the table again in its own
  // database (search/index-writer.ts). Either way every entry is indexed again.
  `
  DROP TABLE search;
  DELETE FROM search_queue;
  ${ENQUEUE_ALL};
  CREATE TABLE search_file (id TEXT NOT NULL) STRICT;
  `,
  // 24: the newest batch of search.db's writes whose queue rows the catalog deleted (decision
  // 0084): an index with fewer (restored alone from an older copy, under the same id) is made
  // again at a writer's open, and verify finds it.
  `
  ALTER TABLE search_file ADD COLUMN batch INTEGER NOT NULL DEFAULT 0;
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
  if (current === 0) {
    // Before any table: free pages can then go back to the file system a step at a time
    // (PRAGMA incremental_vacuum: the search index's compaction, decision 0038). Only a file
    // with no page yet takes it; both backends say it before WAL mode writes the first page
    // (node/sqlite.ts, browser/index.ts), so this is for databases without WAL (in memory).
    if (db.prepare<{ page_count: number }>('PRAGMA page_count').get()?.page_count === 0) db.exec('PRAGMA auto_vacuum = INCREMENTAL');
    // A new database: every step in one transaction, so each page reaches the WAL once (one
    // transaction per step wrote ~290 KiB of WAL for an empty store, which started the
    // checkpoint worker of a store that had written nothing yet).
    db.transaction(() => {
      for (const step of MIGRATIONS) db.exec(step);
      db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    });
    return;
  }
  for (let v = current; v < SCHEMA_VERSION; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      if (v + 1 === 9) fillSnapshotIds(db);
      db.exec(`PRAGMA user_version = ${v + 1}`);
    });
  }
}

/**
 * The id of a snapshot made before ids came from the log (a row without one): derived from
 * its row alone — the same in a migrated database, after a checkpoint from before schema 9 is
 * loaded, and when a snapshot operation without an id is replayed (its row id is the log's
 * order, so every replay gives it).
 */
export function derivedSnapshotId(row: { id: number; created_at: number; tree: Uint8Array }): string {
  return sha256(new TextEncoder().encode(`kura-snapshot ${row.id} ${row.created_at} ${bytesToHex(row.tree)}`)).slice(7, 7 + 32);
}

/** Gives every snapshot row without an id its derived id. */
export function fillSnapshotIds(db: SqlDatabase): void {
  const rows = db.prepare<{ id: number; created_at: number; tree: Uint8Array }>('SELECT id, created_at, tree FROM snapshots WHERE uid IS NULL').all();
  const set = db.prepare('UPDATE snapshots SET uid = ? WHERE id = ?');
  for (const r of rows) set.run(derivedSnapshotId(r), r.id);
}
