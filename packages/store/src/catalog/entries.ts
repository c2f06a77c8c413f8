/**
 * Entries and documents (decision 0025, FORMAT.md §7 and §11): the catalog changes a put, a
 * metadata update or a delete makes, inside the caller's transaction, and entry rows read into
 * the public EntryInfo shape. A document is content; an entry is a path (with versions) or a
 * put without a path, and carries the tags, metadata and media type.
 */
import type { Digest } from '@kura/core';
import { AmbiguousError, NotFoundError } from '../errors.js';
import { formatDigest, hexToBytes, parseDigest } from '../hex.js';
import { decodeManifest } from '../bytes/manifest.js';
import type { DocRow, EntryView, Statements } from './statements.js';

export interface EntryInfo {
  /** The entry's path; null for a put without one (a pathless entry, named by its digest). */
  path: string | null;
  /** The document the entry shows (its latest version). */
  digest: Digest;
  size: number;
  chunks: number;
  /** The latest version's number; null for a pathless entry. */
  version: number | null;
  mediaType: string | null;
  tags: string[];
  meta: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

/** What `stat` and `list` return. (Before schema 6 this described a document; now an entry.) */
export type DocumentInfo = EntryInfo;

/** The public shape of an entry (read with statements.ts ENTRY_VIEW). */
export function entryInfo(st: Statements, e: EntryView): EntryInfo {
  const meta: Record<string, string> = {};
  for (const m of st.metaOf.all(e.id)) meta[m.key] = m.value;
  return {
    path: e.path,
    digest: formatDigest(e.digest),
    size: e.size,
    chunks: e.chunk_count,
    version: e.version,
    mediaType: e.media_type,
    tags: st.tagsOf.all(e.id).map((t) => t.tag),
    meta,
    createdAt: new Date(e.created_at).toISOString(),
    updatedAt: new Date(e.updated_at).toISOString(),
  };
}

/** A document no entry shows now (only older versions name it): its content, no attributes. */
export function documentOnlyInfo(doc: DocRow): EntryInfo {
  const t = new Date(doc.created_at).toISOString();
  return { path: null, digest: formatDigest(doc.digest), size: doc.size, chunks: doc.chunk_count, version: null, mediaType: null, tags: [], meta: {}, createdAt: t, updatedAt: t };
}

/** The row of a document some entry or version names, or NOT_FOUND. */
export function requireDoc(st: Statements, digest: string): DocRow {
  const row = st.docByDigest.get(parseDigest(digest));
  if (!row) throw new NotFoundError(`no document ${digest}`);
  return row;
}

/** How a caller names an entry: its path, or the digest of the content it shows. */
export type EntryTarget = { path: string } | { digest: string };

/** Paths named in an AMBIGUOUS error (and the count beyond them). */
const AMBIGUOUS_SHOWN = 10;

/**
 * The entry a target names (decision 0025): a path's entry; for a digest, the document's
 * pathless entry, else the one entry showing it. NOT_FOUND when there is none; AMBIGUOUS when
 * several entries show the document. One statement when it names one.
 */
export function resolveEntry(st: Statements, target: EntryTarget): EntryView {
  if ('path' in target) {
    const e = st.entryViewByPath.get(target.path);
    if (!e) {
      // Said as a read by path says it (queries.ts pathVersion): its history is still there.
      const deleted = st.deletedPathGet.get(target.path);
      if (deleted) throw new NotFoundError(`${target.path} was deleted at ${new Date(deleted.at).toISOString()}; its versions remain (${target.path}@N)`);
      throw new NotFoundError(`no document at ${target.path}`);
    }
    return e;
  }
  const found = st.entriesOfDigest.all(parseDigest(target.digest));
  if (found.length === 1 || (found.length > 1 && found[0]!.path === null)) return found[0]!;
  const doc = requireDoc(st, target.digest);
  if (found.length === 0) {
    throw new NotFoundError(`no path shows ${target.digest} now (only older versions name it): name the path and version instead`);
  }
  const showing = st.entriesShowing.all(doc.id, AMBIGUOUS_SHOWN + 1);
  const paths = showing.slice(0, AMBIGUOUS_SHOWN).map((e) => e.path ?? formatDigest(doc.digest));
  const more = showing.length > AMBIGUOUS_SHOWN ? ', …' : '';
  throw new AmbiguousError(`${target.digest} is the content of several paths (${paths.join(', ')}${more}): name one of them instead of the digest`, { paths });
}

/** The id of the entry a target names: `resolveEntry`'s choice, in one lean statement when it names one. */
export function resolveEntryId(st: Statements, target: EntryTarget): number {
  if ('path' in target) {
    const e = st.entryIdByPath.get(target.path);
    if (e) return e.id;
  } else {
    const id = st.entryIdOfDigest.get(parseDigest(target.digest))?.id;
    if (id != null) return id;
  }
  return resolveEntry(st, target).id; // throws NOT_FOUND or AMBIGUOUS
}

/**
 * What `stat` shows for a target: its entry, or for a digest only older versions name, the
 * document's content with no path or attributes.
 */
export function statTarget(st: Statements, target: EntryTarget): EntryInfo {
  if ('digest' in target) {
    const id = st.entryIdOfDigest.get(parseDigest(target.digest))?.id;
    if (id != null) return entryInfo(st, st.entryViewById.get(id)!);
    const doc = requireDoc(st, target.digest);
    if (st.entriesShowing.all(doc.id, 1).length === 0) return documentOnlyInfo(doc); // (pathless entries included)
  }
  return entryInfo(st, resolveEntry(st, target)); // (a path; or AMBIGUOUS)
}

/** A change to one entry's attributes. Meta values of null delete keys. */
export interface MetaChange {
  mediaType?: string | null | undefined;
  meta?: Record<string, string | null> | undefined;
  addTags?: readonly string[] | undefined;
  removeTags?: readonly string[] | undefined;
}

/**
 * Applies one change to an entry (inside the caller's transaction) and queues it for the index.
 * `updated_at` stays: it is when the entry's version last changed (decision 0033).
 */
export function applyMeta(st: Statements, entryId: number, change: MetaChange): void {
  if (change.mediaType !== undefined) st.entrySetMediaType.run(change.mediaType, entryId);
  for (const [k, v] of Object.entries(change.meta ?? {})) {
    if (v === null) st.metaDelete.run(entryId, k);
    else st.metaSet.run(entryId, k, v);
  }
  for (const t of change.addTags ?? []) st.tagAdd.run(entryId, t);
  for (const t of change.removeTags ?? []) st.tagRemove.run(entryId, t);
  st.queued.add(entryId); // path, tags and metadata are searchable
}

export interface PutAttributes {
  path?: string | undefined;
  mediaType?: string | undefined;
  tags?: readonly string[] | undefined;
  meta?: Record<string, string> | undefined;
  /** When the version is of (ms; schema 17): a copy from another store keeps its times. Absent: the commit's time. */
  time?: number | undefined;
  /** The version's number when higher than the path's last (schema 17): a copy keeps its source's numbers. */
  version?: number | undefined;
}

/**
 * When a new version of `path` was made: the put's own time when it gives one (a copy keeps
 * the source's), else its commit's — never before the path's latest version, so that numbers
 * and times agree (writers in several processes take a commit's time before the lock that
 * orders them: version 4 was once 1 ms older than version 3, and `path@time` disagreed with
 * the numbering).
 */
function versionTime(st: Statements, path: string, given: number | undefined, commitTime: number): number {
  return given ?? Math.max(commitTime, st.versionLatest.get(path)?.created_at ?? 0);
}

/** The number a new version of `path` gets: the next, or the one asked for when higher. */
function nextVersion(st: Statements, path: string, wanted: number | undefined): number {
  return wanted === undefined ? st.versionNext.get(path)!.last : st.versionNextAtLeast.get(path, wanted)!.last;
}

/**
 * What a user's put of document `docId` records (FORMAT.md §11): at a path, a new version
 * unless the latest already is this document (the entry is made on the first); without one,
 * the document's pathless entry. Either way the tags and metadata are merged into the entry
 * and a given media type replaces its own.
 */
export function recordPut(st: Statements, docId: number, put: PutAttributes, commitTime: number, fresh = false): { version: number; made: boolean } | undefined {
  // A path's times follow its versions' (versionTime), so `since` and `path@time` agree.
  const now = put.path !== undefined ? versionTime(st, put.path, put.time, commitTime) : (put.time ?? commitTime);
  // A document inserted by this commit (`fresh`) has no entry yet, and was inserted with the
  // one reference this put adds whichever way below (a new entry, or a new version).
  const entry = put.path !== undefined ? st.entryByPath.get(put.path) : fresh ? undefined : st.entryPathless.get(docId);
  let id: number;
  // The path's version after the put: the one it made, or the latest, which has these bytes.
  let version: { version: number; made: boolean } | undefined;
  if (!entry) {
    id = Number(st.entryInsert.run(put.path ?? null, docId, put.mediaType ?? null, now, now).lastInsertRowid);
    if (!fresh) st.docRef.run(1, docId);
    if (put.path !== undefined) {
      // A path deleted with its versions kept comes back with a new version, even of the same
      // bytes. Its deletion's row stays: `path@<time>` between the deletion and this version
      // finds nothing (it found the version before the deletion: a trial).
      version = { version: nextVersion(st, put.path, put.version), made: true };
      st.versionInsert.run(put.path, version.version, docId, now);
    }
  } else {
    id = entry.id;
    if (entry.doc_id !== docId) {
      // (A pathless entry is found by its document: only a path's entry can change documents.)
      version = { version: nextVersion(st, put.path!, put.version), made: true };
      st.versionInsert.run(put.path!, version.version, docId, now);
      if (!fresh) st.docRef.run(1, docId);
      st.entrySetDoc.run(docId, now, id);
    } else if (put.path !== undefined) {
      const latest = st.versionLatest.get(put.path);
      if (latest) version = { version: latest.version, made: false };
    }
    if (put.mediaType !== undefined) st.entrySetMediaType.run(put.mediaType, id);
  }
  for (const [k, v] of Object.entries(put.meta ?? {})) st.metaSet.run(id, k, v);
  for (const t of put.tags ?? []) st.tagAdd.run(id, t);
  st.queued.add(id);
  return version;
}

/** Removes an entry with its tags and metadata (not its versions or documents); its search row goes once the indexer meets its id. */
function dropEntry(st: Statements, entryId: number): void {
  st.tagsDeleteEntry.run(entryId);
  st.metaDeleteEntry.run(entryId);
  st.queued.add(entryId);
  st.entryDelete.run(entryId);
}

/** Deletes a document that nothing names any more, releasing its chunks. */
function releaseIfUnnamed(st: Statements, docId: number): void {
  const doc = st.docById.get(docId);
  if (doc && doc.refs <= 0 && doc.holds <= 0) purgeDocument(st, doc);
}

/** Deletes a document row and releases its chunks (inside the caller's transaction). */
export function purgeDocument(st: Statements, doc: DocRow): void {
  const counts = new Map<string, number>();
  for (const e of decodeManifest(doc.manifest)) counts.set(e.key, (counts.get(e.key) ?? 0) + 1);
  for (const [k, n] of counts) {
    const key = hexToBytes(k);
    // Unreferenced from now: a mark GC left from an earlier time it was unreferenced must not
    // count (§9: a chunk goes a margin after it was last found unreferenced, not first).
    if (st.chunkRelease.get(n, key)?.refs === 0) st.condemnedClear.run(key);
  }
  st.docTextDelete.run(doc.id); // derived from it (decisions 0035, 0036)
  st.vectorsDeleteDoc.run(doc.id);
  st.embeddedDeleteDoc.run(doc.id);
  st.docDelete.run(doc.id);
}

/**
 * Deletes version `version` of `path`; the entry then shows its previous version, or goes
 * with its last one. False when there is no such version.
 */
export function deleteVersion(st: Statements, path: string, version: number, now: number): boolean {
  const row = st.versionGet.get(path, version);
  if (!row) return false;
  st.versionDelete.run(path, version);
  st.docRef.run(-1, row.doc_id);
  const entry = st.entryByPath.get(path);
  const latest = st.versionLatest.get(path);
  if (entry) {
    if (!latest) dropEntry(st, entry.id);
    else if (latest.doc_id !== entry.doc_id) {
      st.entrySetDoc.run(latest.doc_id, now, entry.id);
      st.queued.add(entry.id);
    }
  }
  if (!latest) st.deletedPathClear.run(path);
  releaseIfUnnamed(st, row.doc_id);
  return true;
}

/**
 * Deletes a path's entry and all its versions (also those of a path deleted with its versions
 * kept). False when there was neither.
 */
export function deletePath(st: Statements, path: string): boolean {
  const entry = st.entryByPath.get(path);
  const docs = st.versionsDeletePath.all(path).map((r) => r.doc_id);
  if (!entry && docs.length === 0) return false;
  if (entry) dropEntry(st, entry.id);
  st.deletedPathClear.run(path);
  for (const d of docs) st.docRef.run(-1, d);
  for (const d of new Set(docs)) releaseIfUnnamed(st, d);
  return true;
}

/**
 * Deletes a path but keeps its versions (decision 0059: a watched file deleted on disk): it
 * leaves listings, search and reads by path; `path@N` and its versions stay until a delete or
 * retention removes them, and a put to it makes it again (a new version). False when there
 * is no such entry.
 */
export function deletePathKeepingVersions(st: Statements, path: string, now: number): boolean {
  const entry = st.entryByPath.get(path);
  if (!entry) return false;
  dropEntry(st, entry.id);
  st.deletedPathSet.run(path, now);
  return true;
}

/**
 * Removes a document from the namespace (delete by digest): its pathless entry and every
 * version naming it. A snapshot that names it keeps it. False when no entry or version did.
 */
export function deleteDocument(st: Statements, doc: DocRow, now: number): boolean {
  let removed = false;
  const pathless = st.entryPathless.get(doc.id);
  if (pathless) {
    dropEntry(st, pathless.id);
    st.docRef.run(-1, doc.id);
    removed = true;
  }
  for (const v of st.versionsOfDoc.all(doc.id)) removed = deleteVersion(st, v.path, v.version, now) || removed;
  releaseIfUnnamed(st, doc.id);
  return removed;
}
