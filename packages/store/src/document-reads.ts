/**
 * Reading documents: heads and byte readers bound to the row found, chunks, manifests, ranges,
 * and the windowed lookups a restore makes. Every byte is checked on its way out (read.ts).
 */
import { InvalidInputError } from '@kura/core';
import type { SqlDatabase } from './backend/sql.js';
import { requireDoc } from './catalog/entries.js';
import { NotFoundError } from './errors.js';
import { formatDigest, hexToBytes, parseDigest } from './hex.js';
import { decodeManifest } from './bytes/manifest.js';
import type { Reader } from './bytes/read.js';
import type { ChunkLoc, DocRow, Statements } from './catalog/statements.js';
import type { DocumentReader } from './store-types.js';

export interface DocumentReads {
  db: SqlDatabase;
  st: Statements;
  reader: Reader;
}

/** Documents whose rows a restore looks up together (`documentStreams`). */
const RESTORE_WINDOW = 256;

/**
 * One lookup for a read that needs the size or type before the bytes (an HTTP GET): the head,
 * and readers bound to the row found. A delete after the lookup does not stop the reads until
 * GC reclaims the chunks; then they fail with NOT_FOUND ("deleted while being read": not damage).
 */
export function openDocument({ db, st, reader }: DocumentReads, digest: string, unlisted: boolean): DocumentReader {
  // The head without the manifest (a read served from a cache never needs it); the full row is
  // read by id when bytes are wanted. `unlisted`: also documents kept only by snapshots (a
  // restore reads those). The path and type of the entry the digest names (decision 0025),
  // when it names one.
  // One statement (a read of its own: no transaction around it, the only query of a GET the
  // server's cache answers).
  const h = (unlisted ? st.docAnyAndEntry : st.docHeadAndEntry).get(parseDigest(digest));
  if (!h) throw new NotFoundError(`no document ${digest}`);
  let full: Located | undefined;
  // The row and, for a whole read, its chunks' locations, looked up together.
  const located = (withLocations: boolean): Located => {
    if (!full || (withLocations && !full.locs)) {
      full = db.read(() => {
        const row = st.docById.get(h.id);
        return row && { row, locs: withLocations ? chunkLocations(st, row) : undefined };
      });
    }
    if (!full) throw new NotFoundError(`no document ${digest} (deleted while being read)`);
    return full;
  };
  return {
    digest: formatDigest(h.digest),
    size: h.size,
    path: h.path,
    mediaType: h.media_type,
    bytes: async () => {
      const d = located(true);
      return reader.bytes(d.row, d.locs);
    },
    stream: () => {
      const d = located(true);
      return reader.document(d.row, d.locs);
    },
    range: (start, end) => reader.range(located(false).row, start, end),
  };
}

/** A document's row and, when looked up, where each of its chunks lies. */
interface Located {
  row: DocRow;
  locs?: Map<string, ChunkLoc>;
}

/**
 * Where each of the document's chunks lies, by key; call it inside one `db.read`: one
 * statement at a time outside a transaction, each took ~20-35 µs here (a read lock and WAL
 * snapshot per statement), more than reading and checking a 16 KiB chunk.
 */
export function chunkLocations(st: Statements, doc: DocRow): Map<string, ChunkLoc> {
  const locs = new Map<string, ChunkLoc>();
  for (const e of decodeManifest(doc.manifest)) {
    const loc = locs.has(e.key) ? undefined : st.chunkLoc.get(hexToBytes(e.key));
    if (loc) locs.set(e.key, loc);
  }
  return locs;
}

/**
 * What verify has found of a document's chunks (the `damaged` table), when it found any of them
 * damaged: said where a document's extracted text is served without its bytes being read (grep,
 * search's snippets) — the text was checked when extracted, the document may no longer be
 * readable, and a hit or a match must not read as a document that is (a trial). One look at an
 * empty table in the common case; a chunk looked up each otherwise.
 */
export function knownDamage(st: Statements, doc: DocRow): string | undefined {
  const n = damagedChunksOf(st, doc);
  if (n === 0) return undefined;
  return `document ${formatDigest(doc.digest)} has ${n === 1 ? 'a chunk' : `${n} chunks`} verify found damaged: its extracted text was checked when it was made, the document itself cannot be read whole (kura verify names the damage; putting the same bytes again mends it)`;
}

/** How many of a document's distinct chunks verify has found damaged (0 in a sound store, at once). */
export function damagedChunksOf(st: Statements, doc: DocRow): number {
  if (!st.damagedAny.get()?.any) return 0;
  const seen = new Set<string>();
  let n = 0;
  for (const e of decodeManifest(doc.manifest)) {
    if (seen.has(e.key)) continue;
    seen.add(e.key);
    if (st.damagedHas.get(hexToBytes(e.key))) n++;
  }
  return n;
}

/** A document's chunks in order: their keys (BLAKE3, hex) and raw lengths. */
export function manifestOf({ st }: DocumentReads, digest: string, unlisted: boolean): { key: string; length: number }[] {
  const doc = st.docAnyByDigest.get(parseDigest(digest));
  if (!doc || (doc.refs <= 0 && !unlisted)) throw new NotFoundError(`no document ${digest}`);
  return decodeManifest(doc.manifest).map((e) => ({ key: e.key, length: e.length }));
}

/** One chunk's raw bytes (its key already checked), CORRUPT_DATA when damaged. */
export async function chunkBytes({ st, reader }: DocumentReads, key: string): Promise<Uint8Array> {
  if (!st.chunkGet.get(hexToBytes(key))) throw new NotFoundError(`no chunk ${key}`);
  return reader.chunk(key);
}

/** Bytes [start, end) of a document, whole. */
export async function rangeBytes({ st, reader }: DocumentReads, digest: string, start: number, end: number): Promise<Uint8Array> {
  const doc = requireDoc(st, digest);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start || end > doc.size) {
    throw new InvalidInputError(`range [${start}, ${end}) is not within the document's ${doc.size} bytes`, 'range');
  }
  const out = new Uint8Array(end - start);
  let at = 0;
  for await (const piece of reader.range(doc, start, end)) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

/**
 * For restores: a reader of the documents `digests` names, to be asked for in that order.
 * Their rows and chunk locations are looked up RESTORE_WINDOW documents at a time in one read
 * transaction (chunkLocations: ~70 µs of a small file's ~250 µs restore, looked up one
 * statement at a time). A document asked for out of order is looked up alone (`alone`).
 */
export function documentStreams(
  { db, st, reader }: DocumentReads,
  digests: readonly string[],
  alone: (digest: string) => Promise<AsyncIterable<Uint8Array>>,
): (digest: string) => Promise<AsyncIterable<Uint8Array>> {
  let asked = 0;
  let window = new Map<string, Located>();
  const lookUp = (from: number) =>
    db.read(() => {
      const found = new Map<string, Located>();
      for (const digest of digests.slice(from, from + RESTORE_WINDOW)) {
        if (found.has(digest)) continue;
        const row = st.docAnyByDigest.get(parseDigest(digest));
        if (!row) continue; // asked for alone below: NOT_FOUND as before
        found.set(digest, { row, locs: chunkLocations(st, row) });
      }
      return found;
    });
  return async (digest) => {
    const i = asked++;
    if (!window.has(digest) && digests[i] === digest) window = lookUp(i);
    const hit = window.get(digest);
    return hit ? reader.document(hit.row, hit.locs) : alone(digest);
  };
}

/** The document as a stream of byte pieces; ends with CORRUPT_DATA if anything is damaged. */
export function documentStream({ db, st, reader }: DocumentReads, digest: string): AsyncIterable<Uint8Array> {
  const d = locate(db, st, digest);
  return reader.document(d.row, d.locs);
}

/** The whole document, checked against its digest before it is returned. */
export function documentBytes({ db, st, reader }: DocumentReads, digest: string): Promise<Uint8Array> {
  const d = locate(db, st, digest);
  return reader.bytes(d.row, d.locs);
}

/** The listed document `digest` names and its chunks' locations, in one read transaction. */
function locate(db: SqlDatabase, st: Statements, digest: string): Located {
  return db.read(() => {
    const row = requireDoc(st, digest);
    return { row, locs: chunkLocations(st, row) };
  });
}

/** Bytes [start, end) as a stream, reading only the chunks that hold them. */
export function rangeStream({ st, reader }: DocumentReads, digest: string, start: number, end: number): AsyncIterable<Uint8Array> {
  return reader.range(requireDoc(st, digest), start, end);
}
