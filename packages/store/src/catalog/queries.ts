/**
 * Reads of the catalog the store answers (versions, references, listings, tags, sizes and
 * statistics): functions of the database, each in one read transaction where it reads more
 * than one row.
 */
import { InvalidInputError, type Digest } from '@kura/core';
import type { SqlDatabase } from '../backend/sql.js';
import { entryInfo, requireDoc } from './entries.js';
import { NotFoundError } from '../errors.js';
import { formatDigest, hexToBytes } from '../hex.js';
import { decodeManifest } from '../bytes/manifest.js';
import { ListQuery, entryFilters, parse, toMillis } from '../options.js';
import { parseRef } from '../path-ref.js';

export { parseRef };
import { storedShare } from '../bytes/pack-record.js';
import { ENTRY_VIEW, type EntryView, type Statements } from './statements.js';
import type { ListResult, StoreStats, VersionInfo } from '../store-types.js';

export interface CatalogReads {
  db: SqlDatabase;
  st: Statements;
}

function checkPath(path: unknown): asserts path is string {
  if (typeof path !== 'string' || !path) throw new InvalidInputError('path must be a non-empty string', 'path');
}

/** The versions of a path, oldest first. */
export function versionsOf({ db, st }: CatalogReads, path: string): VersionInfo[] {
  checkPath(path);
  return db.read(() =>
    st.versionsOf.all(path).map((v) => {
      const doc = st.docById.get(v.doc_id)!;
      return { path, version: v.version, digest: formatDigest(doc.digest), size: doc.size, createdAt: new Date(v.created_at).toISOString(), pinned: v.pinned === 1 };
    }),
  );
}

/**
 * Paths deleted with their versions kept (decision 0059: what a watch does when a file goes):
 * no entry, versions left, in path order after `after`, `limit` at most, under one of
 * `prefixes` when given. (What `list` does not show and a copy must carry.)
 */
export function deletedPaths({ db }: CatalogReads, q: { prefixes?: readonly string[]; after?: string; limit?: number } = {}): { path: string; deletedAt: string }[] {
  const limit = Math.min(Math.max(1, q.limit ?? 256), 10_000);
  const rows = db
    .prepare<{ path: string; at: number }>(
      `SELECT d.path AS path, d.at AS at FROM deleted_paths d
       WHERE d.path > ? AND NOT EXISTS (SELECT 1 FROM entries e WHERE e.path = d.path) AND EXISTS (SELECT 1 FROM versions v WHERE v.path = d.path)
         AND (? IS NULL OR EXISTS (SELECT 1 FROM json_each(?) p WHERE substr(d.path, 1, length(p.value)) = p.value))
       ORDER BY d.path LIMIT ?`,
    )
    .all(q.after ?? '', q.prefixes?.length ? 1 : null, JSON.stringify(q.prefixes ?? []), limit);
  return rows.map((r) => ({ path: r.path, deletedAt: new Date(r.at).toISOString() }));
}

/**
 * One version of a path: `version` N, or the version that was latest `at` a time, or else the
 * latest.
 */
export function pathVersion({ st }: CatalogReads, path: string, which: { version?: number; at?: Date | string | number } = {}): VersionInfo {
  checkPath(path);
  let row: { doc_id: number; version: number; created_at: number; pinned: number } | undefined;
  if (which.version !== undefined) {
    if (!Number.isSafeInteger(which.version) || which.version < 1) throw new InvalidInputError('version must be a positive integer', 'version');
    row = st.versionGet.get(path, which.version);
  } else if (which.at !== undefined) {
    const t = toMillis(which.at);
    if (Number.isNaN(t)) throw new InvalidInputError('at must be a time (ISO 8601 or milliseconds)', 'at');
    row = st.versionAt.get(path, t);
    // A path deleted with its versions kept shows nothing from its deletion until it is put
    // again (its last deletion is kept when it comes back).
    const deleted = st.deletedPathGet.get(path);
    if (row && deleted && deleted.at >= row.created_at && deleted.at <= t) {
      throw new NotFoundError(`${path} was deleted at ${new Date(deleted.at).toISOString()}${st.entryIdByPath.get(path) ? ', and made again later' : ''}: no version of it at ${new Date(t).toISOString()}; its versions remain (${path}@N)`);
    }
    // Versions removed between this one and the next kept (forgotten, deleted): one of them
    // may have been the latest then, and its time is gone with it. (Answered with the one
    // before, an older version passed for what the path showed: a trial.)
    const next = row && st.versionAfter.get(path, row.version);
    if (row && next && next.version > row.version + 1) {
      throw new NotFoundError(
        `the version of ${path} latest at ${new Date(t).toISOString()} is not known here: versions between @${row.version} (${new Date(row.created_at).toISOString()}) and @${next.version} (${new Date(next.created_at).toISOString()}) are not kept (removed, or never copied here)`,
      );
    }
  } else {
    // The latest version of a path that exists (one deleted with its versions kept has none).
    row = st.entryIdByPath.get(path) ? st.versionLatest.get(path) : undefined;
  }
  if (!row) {
    const deleted = which.version === undefined && which.at === undefined ? st.deletedPathGet.get(path) : undefined;
    if (deleted) throw new NotFoundError(`${path} was deleted at ${new Date(deleted.at).toISOString()}; its versions remain (${path}@N)`);
    const what = which.version !== undefined ? `version ${which.version} of ${path}` : which.at !== undefined ? `version of ${path} at ${String(which.at)}` : `document at ${path}`;
    throw new NotFoundError(`no ${what}`);
  }
  const doc = st.docById.get(row.doc_id)!;
  return { path, version: row.version, digest: formatDigest(doc.digest), size: doc.size, createdAt: new Date(row.created_at).toISOString(), pinned: row.pinned === 1 };
}

/**
 * The digest a reference names: a digest (`sha256:…`), a path (its latest version), `path@N`
 * (version N) or `path@<ISO time>` (the version that was latest then).
 */
export function resolveRef(c: CatalogReads, ref: string): Digest {
  if (typeof ref !== 'string' || !ref) throw new InvalidInputError('reference must be a non-empty string', 'ref');
  if (/^sha256:/.test(ref)) return formatDigest(requireDoc(c.st, ref).digest);
  const r = parseRef(ref);
  return pathVersion(c, r.path, r.which).digest;
}


/**
 * A list cursor (FORMAT.md §11): opaque to callers — base64url of `e` and the id of the last
 * entry listed, the log's order of entries (the same after a rebuild, and on every server
 * replaying the same log). Opaque so that what it holds may change without breaking callers.
 */
export function encodeCursor(entryId: number): string {
  return btoa(`e${entryId}`).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function decodeCursor(cursor: string): number {
  let text = '';
  try {
    if (/^[A-Za-z0-9_-]{1,32}$/.test(cursor)) text = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    // not base64: refused below
  }
  const m = /^e([0-9]{1,15})$/.exec(text);
  if (!m) throw new InvalidInputError('cursor is not one this store gave out', 'cursor');
  return Number(m[1]);
}

/**
 * Entries (paths, and puts without one) in the order they were made, filtered, one page at a
 * time; each with the document of its latest version.
 */
export function listEntries({ db, st }: CatalogReads, query: ListQuery): ListResult {
  const q = parse(ListQuery, query, 'list query');
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (q.cursor !== undefined) {
    const after = decodeCursor(q.cursor);
    // An id no entry ever had (AUTOINCREMENT: sqlite_sequence holds the highest ever given) is
    // no cursor this store gave out: `e999999` listed nothing, as if at the end (a trial).
    // (One whose entry was deleted since is: its page goes on after it.)
    const highest = db.prepare<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'entries'").get()?.seq ?? 0;
    if (after < 1 || after > highest) throw new InvalidInputError('cursor is not one this store gave out', 'cursor');
    where.push('e.id > ?');
    params.push(after);
  }
  const filters = entryFilters(q);
  where.push(...filters.where);
  params.push(...filters.params);
  const sql = `SELECT ${ENTRY_VIEW} FROM entries e JOIN documents d ON d.id = e.doc_id ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY e.id LIMIT ?`;
  const statement = db.prepare<EntryView>(sql);
  // One read transaction for the page and each entry's tags and metadata: one snapshot, and
  // one lock instead of two statements' worth per entry (~16 µs each here).
  return db.read(() => {
    const rows = statement.all(...params, q.limit + 1);
    const page = rows.slice(0, q.limit);
    const result: ListResult = { items: page.map((r) => entryInfo(st, r)) };
    if (rows.length > q.limit) result.nextCursor = encodeCursor(page[page.length - 1]!.id);
    return result;
  });
}

/** Every tag on an entry, with how many entries carry it, by name. */
export function tagCounts({ db }: CatalogReads): { tag: string; entries: number }[] {
  return db.prepare<{ tag: string; entries: number }>('SELECT tag, COUNT(*) AS entries FROM tags GROUP BY tag ORDER BY tag').all();
}

/** Bytes that deleting the document would free (stored bytes of chunks only it uses). */
export function exclusiveSize({ st }: CatalogReads, digest: string): number {
  const doc = requireDoc(st, digest);
  if (doc.holds > 0) return 0; // a snapshot names it: deleting it only unlists it
  const counts = new Map<string, number>();
  for (const e of decodeManifest(doc.manifest)) counts.set(e.key, (counts.get(e.key) ?? 0) + 1);
  let bytes = 0;
  for (const [k, n] of counts) {
    const row = st.chunkGet.get(hexToBytes(k));
    if (row && row.refs <= n) bytes += storedShare(row);
  }
  return bytes;
}

export function storeStats({ st }: CatalogReads): StoreStats {
  const d = st.stats.get()!;
  const k = st.keptStats.get()!;
  // Every entry, every older version (all versions but each path's latest, which its entry
  // shows), every snapshot's file: the bytes as the user sees them kept, however deduplicated.
  const kept = d.logical + k.versions - k.path_entries + k.snapshots;
  const c = st.chunkStats.get()!;
  const p = st.packStats.get()!;
  return {
    entries: d.entries,
    documents: d.documents,
    logicalBytes: d.logical,
    keptDocuments: k.documents,
    keptBytes: kept,
    uniqueChunkBytes: c.unique_bytes,
    storedBytes: c.stored,
    packBytes: p.bytes,
    chunks: c.chunks,
    packs: p.packs,
    // Over everything kept, as the chunks are: over the entries alone it fell below 1 once
    // paths had older versions (their chunks counted, their bytes not).
    dedupRatio: c.unique_bytes > 0 ? kept / c.unique_bytes : 1,
    compressionRatio: c.stored > 0 ? c.unique_bytes / c.stored : 1,
  };
}
