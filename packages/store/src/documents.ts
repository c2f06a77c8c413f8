/** Reading document rows into the public DocumentInfo shape, and metadata writes. */
import type { Digest } from '@kura/core';
import { NotFoundError } from './errors.js';
import { formatDigest, hexToBytes, parseDigest } from './hex.js';
import { decodeManifest } from './manifest.js';
import type { DocRow, Statements } from './statements.js';

export interface DocumentInfo {
  digest: Digest;
  size: number;
  chunks: number;
  path: string | null;
  mediaType: string | null;
  tags: string[];
  meta: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

export function toInfo(st: Statements, row: DocRow): DocumentInfo {
  const meta: Record<string, string> = {};
  for (const m of st.metaOf.all(row.id)) meta[m.key] = m.value;
  return {
    digest: formatDigest(row.digest),
    size: row.size,
    chunks: row.chunk_count,
    path: row.path,
    mediaType: row.media_type,
    tags: st.tagsOf.all(row.id).map((t) => t.tag),
    meta,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** The id of a document, or NOT_FOUND. */
export function requireDocId(st: Statements, digest: string): number {
  const row = st.docIdByDigest.get(parseDigest(digest));
  if (!row) throw new NotFoundError(`no document ${digest}`);
  return row.id;
}

/** The row of a document, or NOT_FOUND. */
export function requireDoc(st: Statements, digest: string): DocRow {
  const row = st.docByDigest.get(parseDigest(digest));
  if (!row) throw new NotFoundError(`no document ${digest}`);
  return row;
}

export interface MetaChange {
  path?: string | null | undefined;
  mediaType?: string | null | undefined;
  meta?: Record<string, string | null> | undefined;
  addTags?: readonly string[] | undefined;
  removeTags?: readonly string[] | undefined;
}

/** Applies one change to a document row (inside the caller's transaction). */
export function applyMeta(st: Statements, docId: number, change: MetaChange, now: number, touch = true): void {
  if (change.path !== undefined) st.docSetPath.run(change.path, docId);
  if (change.mediaType !== undefined) st.docSetMediaType.run(change.mediaType, docId);
  for (const [k, v] of Object.entries(change.meta ?? {})) {
    if (v === null) st.metaDelete.run(docId, k);
    else st.metaSet.run(docId, k, v);
  }
  for (const t of change.addTags ?? []) st.tagAdd.run(docId, t);
  for (const t of change.removeTags ?? []) st.tagRemove.run(docId, t);
  if (touch) st.docTouch.run(now, docId);
  st.enqueueIndex.run(docId); // path, tags and metadata are searchable
}

/** Removes a document's user-facing records: tags, metadata, versions, search entry. */
function forget(st: Statements, id: number): void {
  st.tagsDeleteDoc.run(id);
  st.metaDeleteDoc.run(id);
  st.versionsDeleteDoc.run(id);
  st.searchDelete.run(id);
  st.queueDropDoc.run(id);
}

/** Deletes a document row and releases its chunks (inside the caller's transaction). */
export function purgeDocument(st: Statements, doc: DocRow): void {
  const counts = new Map<string, number>();
  for (const e of decodeManifest(doc.manifest)) counts.set(e.key, (counts.get(e.key) ?? 0) + 1);
  for (const [k, n] of counts) st.chunkAddRefs.run(-n, hexToBytes(k));
  forget(st, doc.id);
  st.docDelete.run(doc.id);
}

/** Keeps a document only for the snapshots that name it (inside the caller's transaction). */
export function unlistDocument(st: Statements, doc: DocRow): void {
  forget(st, doc.id);
  st.docUnlist.run(doc.id);
}
