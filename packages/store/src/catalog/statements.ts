/** Every SQL statement the store runs, prepared once per database (and the queue they feed). */
import type { SqlDatabase, SqlStatement } from '../backend/sql.js';
import { QueuedEntries } from './search-queue.js';

export interface ChunkRow {
  key: Uint8Array;
  pack_id: number;
  offset: number;
  raw_len: number;
  stored_len: number;
  codec: number;
  refs: number;
  /** A group's member (codec 2): its place in the group's raw bytes (FORMAT.md §6.2); null for a record of its own. */
  group_at: number | null;
}

export type ChunkLoc = Pick<ChunkRow, 'pack_id' | 'offset' | 'raw_len' | 'stored_len' | 'codec' | 'group_at'>;

/** An access token kept in the store (decision 0060): scopes and prefixes as JSON arrays. */
export interface TokenRow {
  name: string;
  scopes: string;
  prefixes: string | null;
  created_at: number;
}

export interface DocRow {
  id: number;
  digest: Uint8Array;
  size: number;
  chunk_count: number;
  manifest: Uint8Array;
  created_at: number;
  /** Versions and pathless entries naming this document (decision 0025). */
  refs: number;
  /** Tree entries (of all snapshots) naming this document. */
  holds: number;
}

/** A path (or, with path null, a put without one) and what it shows now (decision 0025). */
export interface EntryRow {
  id: number;
  path: string | null;
  /** The document of the latest version (a pathless entry: its document). */
  doc_id: number;
  media_type: string | null;
  created_at: number;
  updated_at: number;
}

/** An entry with the parts of its document and version that listing and `stat` show. */
export type EntryView = EntryRow & Pick<DocRow, 'digest' | 'size' | 'chunk_count'> & { version: number | null };

/** The columns of an EntryView, over `entries e JOIN documents d` (the version by its primary key). */
export const ENTRY_VIEW = 'e.*, d.digest, d.size, d.chunk_count, (SELECT MAX(v.version) FROM versions v WHERE v.path = e.path) AS version';

export interface SnapshotRow {
  id: number;
  /** The id users see (FORMAT.md §13, snapshot ids). */
  uid: string;
  tree: Uint8Array;
  label: string | null;
  created_at: number;
  files: number;
  bytes: number;
  /** A JSON array of strings (schema 16); null: none. */
  tags: string | null;
  pinned: number;
  /** Minutes east of UTC where it was made (schema 22); null: not recorded. */
  utc_offset: number | null;
}

export interface PackRow {
  id: number;
  name: string;
  size: number;
  /** 0 while open; once sealed, when (ms; 1 for packs sealed before schema 10). */
  sealed: number;
  created_at: number;
  /** The writer that opened it (FORMAT.md §5), null in stores from before the log. */
  writer: string | null;
  /** A pack carried by a commit (decision 0044): that commit's seq, and where in its log object the pack begins; null for a pack of its own. */
  log_seq: number | null;
  log_offset: number | null;
}

export interface DocTextRow {
  doc_id: number;
  kind: string;
  status: 'ok' | 'capped' | 'failed';
  /** zstd-compressed UTF-8 of `bytes` bytes. */
  text: Uint8Array;
  bytes: number;
  pages: number | null;
  note: string | null;
  extracted_at: number;
}

/**
 * The statements of one database, as one object. Made as a copy of the literal below: V8
 * gives an object literal of more than 128 properties (this one has ~130) a hidden class of
 * its own per object, so the code optimized against a process's first store's statements was
 * thrown away when a second store opened, and ran slower meanwhile. The spread copy takes
 * one shared class (test/hidden-classes.test.ts holds this).
 */
/**
 * The id of the entry a document's digest names (decision 0025): its upload without a path, else
 * its one path; NULL when several paths show it. `doc`: the document's id (a column or `?`).
 */
const SOLE_ENTRY_OF = (doc: string) =>
  `COALESCE((SELECT id FROM entries WHERE doc_id = ${doc} AND path IS NULL), (SELECT CASE WHEN COUNT(*) = 1 THEN MAX(x.id) END FROM (SELECT id FROM entries WHERE doc_id = ${doc} LIMIT 2) x))`;
/**
 * The media type of a document read by its digest: its sole entry's (above), else the one type
 * all its entries share — the same bytes at two `.md` paths were served as
 * application/octet-stream (a trial) — else none. (Looked at only without a sole entry.)
 */
const TYPE_OF = (doc: string, entry: string) =>
  `CASE WHEN ${entry}.id IS NULL THEN (SELECT CASE WHEN COUNT(DISTINCT IFNULL(t.media_type, '')) = 1 THEN MAX(t.media_type) END FROM entries t WHERE t.doc_id = ${doc}) ELSE ${entry}.media_type END`;

export function prepareStatements(db: SqlDatabase) {
  return { ...statementsOf(db) };
}

function statementsOf(db: SqlDatabase) {
  const p = <R>(sql: string): SqlStatement<R> => db.prepare<R>(sql);
  /**
   * Prepared at its first use: a statement naming a column a migration adds, which a store of
   * an older schema opened read-only (not migrated) lacks — prepared at once, the open failed.
   */
  const later = <R>(sql: string): SqlStatement<R> => {
    let s: SqlStatement<R> | undefined;
    const it = () => (s ??= db.prepare<R>(sql));
    return { run: (...a) => it().run(...a), get: (...a) => it().get(...a), all: (...a) => it().all(...a), iterate: (...a) => it().iterate(...a) };
  };
  return {
    configAll: p<{ key: string; value: string }>('SELECT key, value FROM config'),
    logHeadGet: p<{ seq: number; hash: Uint8Array; segment: string; seg_end: number }>('SELECT seq, hash, segment, seg_end FROM log_state WHERE id = 1'),
    logHeadSet: p(
      'INSERT INTO log_state(id, seq, hash, segment, seg_end) VALUES (1, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, segment = excluded.segment, seg_end = excluded.seg_end',
    ),
    configSet: p('INSERT INTO config(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),

    packById: p<PackRow>('SELECT * FROM packs WHERE id = ?'),
    packByName: p<PackRow>('SELECT * FROM packs WHERE name = ?'),
    /** (One column: a row object's every key is made again per call, ~3 µs of a small put's commit.) */
    packIdByName: p<{ id: number }>('SELECT id FROM packs WHERE name = ?'),
    // OR IGNORE: a writer on an object store whose commit's answer was lost sends its packs'
    // operations again in the next commit, and the lost one may have landed (decision 0040).
    packInsert: p('INSERT OR IGNORE INTO packs(name, size, sealed, created_at, writer) VALUES (?, ?, 0, ?, ?)'),
    packInsertInline: p('INSERT OR IGNORE INTO packs(name, size, sealed, created_at, writer, log_seq, log_offset) VALUES (?, ?, 0, ?, ?, ?, ?)'),
    packsCarried: p<{ name: string; log_seq: number; log_offset: number }>('SELECT name, log_seq, log_offset FROM packs WHERE log_seq IS NOT NULL'),
    packGrow: p('UPDATE packs SET size = MAX(size, ?) WHERE id = ?'),
    /** Sealed at the commit's time (schema 10; 1 in stores from before: long ago). */
    packSeal: p('UPDATE packs SET sealed = ? WHERE id = ? AND sealed = 0'),
    /** Packs not sealed: at a writer's open, those a crashed writer left (decision 0026). */
    packsOpen: p<PackRow>('SELECT * FROM packs WHERE sealed = 0 ORDER BY id'),
    packDelete: p('DELETE FROM packs WHERE id = ?'),
    /** A pack whose row went (FORMAT.md §9): its file or object goes a margin after `at`. */
    packDropped: p('INSERT INTO dropped_packs(name, at) VALUES (?, ?) ON CONFLICT(name) DO NOTHING'),
    droppedPacks: p<{ name: string; at: number }>('SELECT name, at FROM dropped_packs ORDER BY name'),
    droppedForget: p('DELETE FROM dropped_packs WHERE name = ?'),
    gcLease: p<{ holder: string; until: number }>('SELECT holder, until FROM gc_lease WHERE id = 1'),
    gcLeaseSet: p('INSERT INTO gc_lease(id, holder, until) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET holder = excluded.holder, until = excluded.until'),
    packsAll: p<PackRow>('SELECT * FROM packs ORDER BY id'),
    packsSealed: p<PackRow>('SELECT * FROM packs WHERE sealed > 0 ORDER BY id'),
    packLiveBytes: p<{ pack_id: number; live: number; n: number; records: number }>(
      // A group record (FORMAT.md §6.2) is live while any of its members is: counted once.
      'SELECT pack_id, SUM(stored_len + 48) AS live, SUM(n) AS n, COUNT(*) AS records FROM (SELECT pack_id, stored_len, COUNT(*) AS n FROM chunks GROUP BY pack_id, offset) GROUP BY pack_id',
    ),

    chunkGet: p<ChunkRow>('SELECT * FROM chunks WHERE key = ?'),
    /** Where a chunk's record is: what a read needs, without the key it was looked up by. */
    chunkLoc: p<ChunkLoc>('SELECT pack_id, offset, raw_len, stored_len, codec, group_at FROM chunks WHERE key = ?'),
    chunkExists: p<{ refs: number }>('SELECT refs FROM chunks WHERE key = ?'),
    /** Whether a put can share the stored chunk: it exists and verify has not found it damaged. */
    chunkShareable: p<{ damaged: number }>(
      'SELECT EXISTS (SELECT 1 FROM damaged d WHERE d.key = c.key) AS damaged FROM chunks c WHERE c.key = ?',
    ),
    /** Chunk keys in key order, a page after `key` (known-chunks preload). */
    chunkKeysAfter: p<{ key: Uint8Array }>('SELECT key FROM chunks WHERE key > ? ORDER BY key LIMIT ?'),
    /** A fresh copy of a damaged chunk, always a record of its own. */
    chunkRepair: p('UPDATE chunks SET pack_id = ?, offset = ?, raw_len = ?, stored_len = ?, codec = ?, group_at = NULL WHERE key = ?'),
    damagedMark: p('INSERT INTO damaged(key, reason, found_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET reason = excluded.reason'),
    damagedClear: p('DELETE FROM damaged WHERE key = ?'),
    damagedAll: p<{ key: Uint8Array }>('SELECT key FROM damaged'),
    /** Whether verify has found any chunk damaged (the table is empty in a sound store). */
    damagedAny: p<{ any: number }>('SELECT EXISTS (SELECT 1 FROM damaged) AS any'),
    damagedHas: p<{ found: number }>('SELECT 1 AS found FROM damaged WHERE key = ?'),
    /** A chunk a new document names n times: insert it with refs = n, or add n. */
    chunkUpsert: p(
      'INSERT INTO chunks(key, pack_id, offset, raw_len, stored_len, codec, refs) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET refs = refs + excluded.refs',
    ),
    /** The same for a group's member (FORMAT.md §6.2), with its place in the group. */
    chunkUpsertMember: p(
      'INSERT INTO chunks(key, pack_id, offset, raw_len, stored_len, codec, refs, group_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET refs = refs + excluded.refs',
    ),
    chunkAddRefs: p('UPDATE chunks SET refs = refs + ? WHERE key = ?'),
    chunkRelease: p<{ refs: number }>('UPDATE chunks SET refs = refs - ? WHERE key = ? RETURNING refs'),
    chunkMove: p('UPDATE chunks SET pack_id = ?, offset = ? WHERE key = ? AND pack_id = ?'),
    /** Unreferenced chunks, but for those an upload holds until after the given time. */
    chunkGarbageCount: p<{ n: number }>(
      'SELECT COUNT(*) AS n FROM chunks c WHERE refs = 0 AND NOT EXISTS (SELECT 1 FROM chunk_holds h WHERE h.key = c.key AND h.until > ?)',
    ),
    /** A page of them after `key`, in key order (the partial index on refs = 0 holds them so). */
    chunkGarbagePage: p<{ key: Uint8Array }>(
      'SELECT key FROM chunks c WHERE refs = 0 AND key > ? AND NOT EXISTS (SELECT 1 FROM chunk_holds h WHERE h.key = c.key AND h.until > ?) ORDER BY key LIMIT ?',
    ),
    /** GC with other writers alive (FORMAT.md §9): when a chunk was first found unreferenced. */
    condemnedSince: p<{ since: number }>('SELECT since FROM condemned WHERE key = ?'),
    condemnedMark: p('INSERT INTO condemned(key, since) VALUES (?, ?) ON CONFLICT(key) DO NOTHING'),
    condemnedClear: p('DELETE FROM condemned WHERE key = ?'),
    /** Unused chunks marked and waiting for the margin: how many, their stored bytes, the latest mark. */
    condemnedWaiting: p<{ n: number; bytes: number; last: number | null }>('SELECT COUNT(*) AS n, COALESCE(SUM(c.stored_len), 0) AS bytes, MAX(d.since) AS last FROM condemned d JOIN chunks c ON c.key = d.key WHERE c.refs = 0'),
    /** Marks of chunks a put has referenced again since. */
    condemnedRevived: p('DELETE FROM condemned WHERE key IN (SELECT c.key FROM condemned c JOIN chunks k ON k.key = c.key WHERE k.refs > 0)'),
    holdSet: p('INSERT INTO chunk_holds(key, until) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET until = max(until, excluded.until)'),
    holdsExpire: p('DELETE FROM chunk_holds WHERE until <= ?'),
    /** Deletes an unreferenced chunk row, unless an upload holds it until after `now`. */
    chunkDelete: p('DELETE FROM chunks WHERE key = ? AND refs = 0 AND NOT EXISTS (SELECT 1 FROM chunk_holds h WHERE h.key = chunks.key AND h.until > ?)'),
    /** Chunks of the given packs (a JSON array of ids), by pack and offset: one scan (GC). */
    chunksInPacks: p<ChunkRow>('SELECT * FROM chunks WHERE pack_id IN (SELECT value FROM json_each(?)) ORDER BY pack_id, offset'),
    /** Of the given packs (a JSON array of ids), those a chunk row points into: one scan (GC). */
    packsWithChunks: p<{ pack_id: number }>('SELECT DISTINCT pack_id FROM chunks WHERE pack_id IN (SELECT value FROM json_each(?))'),
    /** Any chunk still in the pack (a scan; GC only, after the count says none is). */
    chunkInPack: p<{ one: number }>('SELECT 1 AS one FROM chunks WHERE pack_id = ? LIMIT 1'),
    chunksAll: p<ChunkRow>('SELECT * FROM chunks ORDER BY pack_id, offset'),

    /** Documents some version or pathless entry names (not those only snapshots keep). */
    docByDigest: p<DocRow>('SELECT * FROM documents WHERE digest = ? AND refs > 0'),
    /** Documents nothing holds (no entry, version or snapshot) made before a time: a snapshot stopped before its commit left them. */
    docsUnheld: p<{ digest: Uint8Array }>('SELECT digest FROM documents WHERE refs <= 0 AND holds <= 0 AND created_at < ? LIMIT ?'),
    docIdByDigest: p<{ id: number }>('SELECT id FROM documents WHERE digest = ? AND refs > 0'),
    /** Any document row, named by entries or kept only for snapshots. */
    docAnyByDigest: p<DocRow>('SELECT * FROM documents WHERE digest = ?'),
    docRef: p('UPDATE documents SET refs = refs + ? WHERE id = ?'),
    docHold: p('UPDATE documents SET holds = holds + ? WHERE id = ?'),
    docHoldByDigest: p('UPDATE documents SET holds = holds + ? WHERE digest = ?'),
    treeGet: p<{ body: Uint8Array; holds: number }>('SELECT body, holds FROM trees WHERE digest = ?'),
    treesAll: p<{ digest: Uint8Array; body: Uint8Array }>('SELECT digest, body FROM trees'),
    treeInsert: p('INSERT INTO trees(digest, body, holds) VALUES (?, ?, 0) ON CONFLICT(digest) DO NOTHING'),
    treeHold: p('UPDATE trees SET holds = holds + ? WHERE digest = ?'),
    treeDelete: p('DELETE FROM trees WHERE digest = ? AND holds <= 0'),
    snapshotInsert: later('INSERT INTO snapshots(tree, label, created_at, files, bytes, uid, tags, utc_offset) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
    snapshotPin: p('UPDATE snapshots SET pinned = ? WHERE id = ?'),
    versionPin: p('UPDATE versions SET pinned = ? WHERE path = ? AND version = ?'),
    versionsRetained: p<{ path: string; version: number; created_at: number; pinned: number }>('SELECT path, version, created_at, pinned FROM versions WHERE path >= ? ORDER BY path, version'),
    snapshotGet: p<SnapshotRow>('SELECT * FROM snapshots WHERE id = ?'),
    snapshotSetUid: p('UPDATE snapshots SET uid = ? WHERE id = ?'),
    snapshotByUid: p<SnapshotRow>('SELECT * FROM snapshots WHERE uid = ?'),
    /** Snapshots whose id starts with the prefix ?1 (?2 is ?1 followed by 'g', after every hex digit); two tell it is ambiguous. */
    snapshotsByPrefix: p<SnapshotRow>('SELECT * FROM snapshots WHERE uid >= ? AND uid < ? ORDER BY uid LIMIT 2'),
    snapshotsAll: p<SnapshotRow>('SELECT * FROM snapshots ORDER BY created_at, id'),
    snapshotDelete: p('DELETE FROM snapshots WHERE id = ?'),
    /** A snapshotted directory's file stamps (§13.4): a JSON list of [name, stamp, digest hex]. */
    dirStampsGet: p<{ files: string }>('SELECT files FROM dir_stamps WHERE dir = ?'),
    dirStampsSet: p('INSERT INTO dir_stamps(dir, files) VALUES (?, ?) ON CONFLICT(dir) DO UPDATE SET files = excluded.files'),
    dirStampsDelete: p('DELETE FROM dir_stamps WHERE dir = ?'),
    /** Rows of a directory and of those below it (`dir`, then the range ["dir/", "dir0")). */
    dirStampsUnder: p<{ dir: string; files: string }>('SELECT dir, files FROM dir_stamps WHERE dir = ? OR (dir >= ? AND dir < ?)'),
    dirStampsAny: p<{ one: number }>('SELECT 1 AS one FROM dir_stamps WHERE dir = ? OR (dir >= ? AND dir < ?) LIMIT 1'),
    docSizeByDigest: p<{ size: number }>('SELECT size FROM documents WHERE digest = ?'),
    /** Inserts a new document with its first refs (§11); changes = 0 when the digest exists already. */
    docInsert: p(
      'INSERT INTO documents(digest, size, chunk_count, manifest, created_at, refs, holds) VALUES (?, ?, ?, ?, ?, ?, 0) ON CONFLICT(digest) DO NOTHING',
    ),
    docDelete: p('DELETE FROM documents WHERE id = ?'),
    docsAll: p<DocRow>('SELECT * FROM documents ORDER BY id'),
    docById: p<DocRow>('SELECT * FROM documents WHERE id = ?'),
    /** A document's head: no manifest (the BLOB is most of the row). */
    docHeadByDigest: p<Pick<DocRow, 'id' | 'digest' | 'size'>>('SELECT id, digest, size FROM documents WHERE digest = ? AND refs > 0'),

    entryById: p<EntryRow>('SELECT * FROM entries WHERE id = ?'),
    /**
     * The entries a digest could name, with what `stat` shows of them, in one statement: the
     * pathless one first, then by age; two rows are enough to tell one from several.
     */
    entriesOfDigest: p<EntryView>(`SELECT ${ENTRY_VIEW} FROM documents d JOIN entries e ON e.doc_id = d.id WHERE d.digest = ? ORDER BY e.path IS NOT NULL, e.id LIMIT 2`),
    /**
     * The same choice, its id only (what a metadata change needs), without a sort: the pathless
     * entry, else the only entry; null when there are none or several.
     */
    entryIdOfDigest: p<{ id: number | null }>(
      'SELECT COALESCE((SELECT e.id FROM entries e WHERE e.doc_id = d.id AND e.path IS NULL), (SELECT CASE WHEN COUNT(*) = 1 THEN MAX(x.id) END FROM (SELECT e.id FROM entries e WHERE e.doc_id = d.id LIMIT 2) x)) AS id FROM documents d WHERE d.digest = ?',
    ),
    entryIdByPath: p<{ id: number }>('SELECT id FROM entries WHERE path = ?'),
    /** That entry's path and media type by the document's id (what an HTTP GET by digest shows); both ? are the id. */
    /**
     * A document's head by digest (listed: `refs > 0`; any: also one only snapshots keep) and the
     * path and type of the entry its digest names (SOLE_ENTRY_OF), in one
     * statement: a read of its own, with no transaction around it (a hot GET's only query).
     */
    docHeadAndEntry: p<Pick<DocRow, 'id' | 'digest' | 'size'> & { path: string | null; media_type: string | null }>(
      `SELECT d.id AS id, d.digest AS digest, d.size AS size, e.path AS path, ${TYPE_OF('d.id', 'e')} AS media_type FROM documents d LEFT JOIN entries e ON e.id = ${SOLE_ENTRY_OF('d.id')} WHERE d.digest = ? AND d.refs > 0`,
    ),
    docAnyAndEntry: p<Pick<DocRow, 'id' | 'digest' | 'size'> & { path: string | null; media_type: string | null }>(
      `SELECT d.id AS id, d.digest AS digest, d.size AS size, e.path AS path, ${TYPE_OF('d.id', 'e')} AS media_type FROM documents d LEFT JOIN entries e ON e.id = ${SOLE_ENTRY_OF('d.id')} WHERE d.digest = ?`,
    ),
    entryViewById: p<EntryView>(`SELECT ${ENTRY_VIEW} FROM entries e JOIN documents d ON d.id = e.doc_id WHERE e.id = ?`),
    entryViewByPath: p<EntryView>(`SELECT ${ENTRY_VIEW} FROM entries e JOIN documents d ON d.id = e.doc_id WHERE e.path = ?`),
    entryByPath: p<EntryRow>('SELECT * FROM entries WHERE path = ?'),
    entryPathless: p<EntryRow>('SELECT * FROM entries WHERE doc_id = ? AND path IS NULL'),
    /** Entries showing a document, oldest first (digest-addressed calls, decision 0025). */
    entriesShowing: p<EntryRow>('SELECT * FROM entries WHERE doc_id = ? ORDER BY id LIMIT ?'),
    entryInsert: p('INSERT INTO entries(path, doc_id, media_type, created_at, updated_at) VALUES (?, ?, ?, ?, ?)'),
    entrySetDoc: p('UPDATE entries SET doc_id = ?, updated_at = ? WHERE id = ?'),
    entrySetMediaType: p('UPDATE entries SET media_type = ? WHERE id = ?'),
    entryDelete: p('DELETE FROM entries WHERE id = ?'),

    tagAdd: p('INSERT OR IGNORE INTO tags(entry_id, tag) VALUES (?, ?)'),
    tagRemove: p('DELETE FROM tags WHERE entry_id = ? AND tag = ?'),
    tagsOf: p<{ tag: string }>('SELECT tag FROM tags WHERE entry_id = ? ORDER BY tag'),
    tagsDeleteEntry: p('DELETE FROM tags WHERE entry_id = ?'),

    metaSet: p('INSERT INTO meta(entry_id, key, value) VALUES (?, ?, ?) ON CONFLICT(entry_id, key) DO UPDATE SET value = excluded.value'),
    metaDelete: p('DELETE FROM meta WHERE entry_id = ? AND key = ?'),
    metaOf: p<{ key: string; value: string }>('SELECT key, value FROM meta WHERE entry_id = ? ORDER BY key'),
    metaDeleteEntry: p('DELETE FROM meta WHERE entry_id = ?'),

    /** search-queue.ts: rows of entry ids to (re)index, oldest first. */
    /** What the open write transaction queues (search-queue.ts); rows are written at its end. */
    queued: new QueuedEntries(p('INSERT INTO search_queue(entries) VALUES (?)')),
    /** Rows in order but for those named (a JSON array: rows the indexer itself requeued this run). */
    queueRows: p<{ id: number; entries: string }>('SELECT id, entries FROM search_queue WHERE id NOT IN (SELECT value FROM json_each(?)) ORDER BY id LIMIT ?'),
    queueDelete: p('DELETE FROM search_queue WHERE id = ?'),
    queueNewest: p<{ id: number | null }>('SELECT MAX(id) AS id FROM search_queue'),
    queueLength: p<{ n: number }>('SELECT COALESCE(SUM(json_array_length(entries)), 0) AS n FROM search_queue'),

    /** doc-text.ts: text extracted from a document (decision 0035); written only while the document exists. */
    docTextGet: p<DocTextRow>('SELECT * FROM doc_text WHERE doc_id = ?'),
    docTextPut: p(
      'INSERT OR REPLACE INTO doc_text(doc_id, kind, status, text, bytes, pages, note, extracted_at) SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM documents WHERE id = ?)',
    ),
    docTextDelete: p('DELETE FROM doc_text WHERE doc_id = ?'),

    /** semantic/embed-job.ts: documents still to embed for a model, with a media type an entry gives them. */
    embedPending: p<{ id: number; media_type: string | null; path: string | null }>(
      `SELECT d.id, (SELECT e.media_type FROM entries e WHERE e.doc_id = d.id ORDER BY e.media_type IS NULL, e.id LIMIT 1) AS media_type,
              (SELECT e.path FROM entries e WHERE e.doc_id = d.id AND e.path IS NOT NULL ORDER BY e.id LIMIT 1) AS path
       FROM documents d WHERE d.refs > 0 AND d.id > ? AND NOT EXISTS (SELECT 1 FROM doc_embedded x WHERE x.doc_id = d.id AND x.model = ?) ORDER BY d.id LIMIT ?`,
    ),
    /** search/index-status.ts: documents embedded (and their chunks) and still to embed, for a model. */
    embedCounts: p<{ done: number; chunks: number | null; pending: number }>(
      `SELECT (SELECT COUNT(*) FROM doc_embedded WHERE model = ?) AS done, (SELECT SUM(chunks) FROM doc_embedded WHERE model = ?) AS chunks,
       (SELECT COUNT(*) FROM documents d WHERE d.refs > 0 AND NOT EXISTS (SELECT 1 FROM doc_embedded x WHERE x.doc_id = d.id AND x.model = ?)) AS pending`,
    ),
    embeddedMark: p('INSERT OR REPLACE INTO doc_embedded(doc_id, model, chunks) SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM documents WHERE id = ?)'),
    vectorAdd: p('INSERT INTO doc_vectors(doc_id, model, n, start, end, scale, vec) SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM documents WHERE id = ?)'),
    vectorsAfter: p<{ id: number; doc_id: number; n: number; start: number; end: number; scale: number; vec: Uint8Array }>(
      'SELECT id, doc_id, n, start, end, scale, vec FROM doc_vectors WHERE model = ? AND id > ? ORDER BY id',
    ),
    /** Rows of every model, and the newest: cheap (COUNT(*) reads the small doc_id index), asked before each semantic query. */
    vectorCount: p<{ n: number; last: number | null }>('SELECT COUNT(*) AS n, MAX(id) AS last FROM doc_vectors'),
    vectorCountAfter: p<{ n: number }>('SELECT COUNT(*) AS n FROM doc_vectors WHERE id > ?'),
    vectorsDeleteDoc: p('DELETE FROM doc_vectors WHERE doc_id = ?'),
    vectorsDeleteDocModel: p('DELETE FROM doc_vectors WHERE doc_id = ? AND model = ?'),
    embeddedDeleteDoc: p('DELETE FROM doc_embedded WHERE doc_id = ?'),
    docTextCounts: p<{ status: string; n: number }>('SELECT status, COUNT(*) AS n FROM doc_text GROUP BY status'),
    /** Entries of documents over a size whose text is their own bytes (no extracted text), by media type. */
    largeOwnTextByType: p<{ media_type: string | null; n: number }>(
      'SELECT e.media_type AS media_type, COUNT(*) AS n FROM entries e JOIN documents d ON d.id = e.doc_id WHERE d.size > ? AND NOT EXISTS (SELECT 1 FROM doc_text x WHERE x.doc_id = d.id) GROUP BY e.media_type',
    ),
    /** Capped and failed extractions, newest first, with a path that shows each (if any). */
    docTextProblems: p<{ digest: Uint8Array; kind: string; status: string; note: string | null; pages: number | null; path: string | null }>(
      `SELECT d.digest, t.kind, t.status, t.note, t.pages, (SELECT e.path FROM entries e WHERE e.doc_id = t.doc_id ORDER BY e.path IS NULL, e.id LIMIT 1) AS path
       FROM doc_text t JOIN documents d ON d.id = t.doc_id WHERE t.status <> 'ok' ORDER BY t.extracted_at DESC, t.doc_id DESC LIMIT ?`,
    ),

    versionLatest: p<{ version: number; doc_id: number; created_at: number; pinned: number }>('SELECT version, doc_id, created_at, pinned FROM versions WHERE path = ? ORDER BY version DESC LIMIT 1'),
    /** The next version number of a path (numbers are never reused). */
    versionNext: p<{ last: number }>(
      'INSERT INTO version_counters(path, last) VALUES (?, 1) ON CONFLICT(path) DO UPDATE SET last = last + 1 RETURNING last',
    ),
    /** The next version number of a path, or `wanted` when that is higher (a copy keeps its source's numbers). */
    versionNextAtLeast: p<{ last: number }>(
      'INSERT INTO version_counters(path, last) VALUES (?, ?) ON CONFLICT(path) DO UPDATE SET last = MAX(last + 1, excluded.last) RETURNING last',
    ),
    versionInsert: p('INSERT INTO versions(path, version, doc_id, created_at) VALUES (?, ?, ?, ?)'),
    versionsOf: p<{ version: number; doc_id: number; created_at: number; pinned: number }>('SELECT version, doc_id, created_at, pinned FROM versions WHERE path = ? ORDER BY version'),
    versionGet: p<{ doc_id: number; version: number; created_at: number; pinned: number }>('SELECT doc_id, version, created_at, pinned FROM versions WHERE path = ? AND version = ?'),
    versionAt: p<{ doc_id: number; version: number; created_at: number; pinned: number }>(
      'SELECT doc_id, version, created_at, pinned FROM versions WHERE path = ? AND created_at <= ? ORDER BY version DESC LIMIT 1',
    ),
    /** The first version kept after version ?2 of a path (a gap before it: versions removed). */
    versionAfter: p<{ version: number; created_at: number }>('SELECT version, created_at FROM versions WHERE path = ? AND version > ? ORDER BY version LIMIT 1'),
    versionDelete: p('DELETE FROM versions WHERE path = ? AND version = ?'),
    /** The versions naming a document (deleting it by digest). */
    versionsOfDoc: p<{ path: string; version: number }>('SELECT path, version FROM versions WHERE doc_id = ? ORDER BY path, version'),
    versionsDeletePath: p<{ doc_id: number }>('DELETE FROM versions WHERE path = ? RETURNING doc_id'),
    /** Paths deleted with their versions kept (decision 0059). */
    deletedPathSet: p('INSERT INTO deleted_paths(path, at) VALUES (?, ?) ON CONFLICT(path) DO UPDATE SET at = excluded.at'),
    deletedPathClear: p('DELETE FROM deleted_paths WHERE path = ?'),
    deletedPathGet: p<{ at: number }>('SELECT at FROM deleted_paths WHERE path = ?'),
    /** Retention policies kept in the store (decision 0058), by target (`versions:<prefix>`, `snapshots:<label>`). */
    policySet: p('INSERT INTO retention_policies(target, rules) VALUES (?, ?) ON CONFLICT(target) DO UPDATE SET rules = excluded.rules'),
    policyDelete: p('DELETE FROM retention_policies WHERE target = ?'),
    policiesAll: p<{ target: string; rules: string }>('SELECT target, rules FROM retention_policies ORDER BY target'),
    /** Access tokens kept in the store (decision 0060), by name and by the SHA-256 of their secret. */
    tokenInsert: p('INSERT INTO tokens(name, hash, scopes, prefixes, created_at) VALUES (?, ?, ?, ?, ?)'),
    tokenDelete: p('DELETE FROM tokens WHERE name = ?'),
    tokenByName: p<{ name: string }>('SELECT name FROM tokens WHERE name = ?'),
    tokenByHash: p<TokenRow>('SELECT name, scopes, prefixes, created_at FROM tokens WHERE hash = ?'),
    tokensAll: p<TokenRow>('SELECT name, scopes, prefixes, created_at FROM tokens ORDER BY name'),

    /** Entries, the distinct documents they show and the sum of those documents' sizes per entry. */
    stats: p<{ entries: number; documents: number; logical: number; snapshots: number }>(
      'SELECT COUNT(*) AS entries, COUNT(DISTINCT e.doc_id) AS documents, COALESCE(SUM(d.size), 0) AS logical, (SELECT COUNT(*) FROM snapshots) AS snapshots FROM entries e JOIN documents d ON d.id = e.doc_id',
    ),
    /**
     * Every document the store keeps (shown by an entry, an older version, or a snapshot's
     * file); the sizes of every version of every path, of the paths' entries (each its latest
     * version), and of every snapshot's files.
     */
    keptStats: p<{ documents: number; versions: number; path_entries: number; snapshots: number }>(
      'SELECT (SELECT COUNT(*) FROM documents WHERE refs > 0 OR holds > 0) AS documents,' +
        ' (SELECT COALESCE(SUM(d.size), 0) FROM versions v JOIN documents d ON d.id = v.doc_id) AS versions,' +
        ' (SELECT COALESCE(SUM(d.size), 0) FROM entries e JOIN documents d ON d.id = e.doc_id WHERE e.path IS NOT NULL) AS path_entries,' +
        ' (SELECT COALESCE(SUM(bytes), 0) FROM snapshots) AS snapshots',
    ),
    chunkStats: p<{ unique_bytes: number; stored: number; chunks: number }>(
      // A group record is counted once, however many of its members are referenced.
      'SELECT COALESCE(SUM(raw_len), 0) AS unique_bytes, COALESCE(SUM(CASE WHEN group_at IS NULL THEN stored_len + 48 ELSE 0 END), 0)' +
        ' + (SELECT COALESCE(SUM(stored_len + 48), 0) FROM (SELECT DISTINCT pack_id, offset, stored_len FROM chunks WHERE group_at IS NOT NULL AND refs > 0)) AS stored,' +
        ' COUNT(*) AS chunks FROM chunks WHERE refs > 0',
    ),
    packStats: p<{ bytes: number; packs: number }>('SELECT COALESCE(SUM(size), 0) AS bytes, COUNT(*) AS packs FROM packs'),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
