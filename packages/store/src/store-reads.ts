/**
 * The reading half of the store's facade (FORMAT.md §5–15): search, documents, entries,
 * versions, snapshots, verify and stats — each a call of the module that does it, with the
 * store's context once the store is known to be open. `Store` (store.ts) adds the writes.
 */
import { InvalidInputError, decompress, isKuraError, type Digest, type ResolvedChunkParams } from '@kura/core';
import { CorruptDataError, NotFoundError } from './errors.js';
import { statTarget, type DocumentInfo, type EntryTarget } from './catalog/entries.js';
import { formatDigest, parseDigest } from './hex.js';
import { onlyOptions, type ListQuery } from './options.js';
import type { VerifyProgress, VerifyReport } from './bytes/verify.js';
import { verifyAll } from './store-verify.js';
import type { SearchHits, SearchQuery } from './search/search-query.js';
import { indexStatusOf, searchStore } from './store-search.js';
import { WHOLE_MAX, eventsOf, grep as grepStore, type GrepEvent, type GrepOptions, type GrepSource } from './search/grep.js';
import { TextCache } from './search/text-cache.js';
import { breather } from './breather.js';
import type { IndexStatus } from './search/index-status.js';
import { chunkBytes, damagedChunksOf, knownDamage, documentBytes, documentStream, manifestOf, openDocument, rangeBytes, rangeStream } from './document-reads.js';
import { deletedPaths, exclusiveSize, listEntries, pathVersion, resolveRef, storeStats, tagCounts, versionsOf } from './catalog/queries.js';
import type { DocumentReader, ListResult, StoreConfig, StoreStats, VersionInfo } from './store-types.js';
import { drainIndex, usable, type StoreContext } from './store-context.js';
import { checkKeys, missingChunks } from './bytes/sync.js';
import type { FileEntry, SnapshotDiff, SnapshotInfo, WalkEntry } from './catalog/snapshot.js';
import * as snapshots from './store-snapshots.js';

export class StoreReads {
  readonly config: StoreConfig;
  readonly readonly: boolean;
  /** The store's context, open or closed (store-context.ts): reads take it through #r. */
  protected readonly ctx: StoreContext;

  protected constructor(ctx: StoreContext) {
    this.ctx = ctx;
    this.config = ctx.config;
    this.readonly = ctx.readonly;
  }

  /** The context, once the store is known to be open (else STORE_CLOSED). */
  #r(): StoreContext {
    return usable(this.ctx);
  }

  /** Texts grep read and checked, matched again without reading (search/text-cache.ts). */
  protected readonly grepTexts = new TextCache(this.grepTextBytes(), WHOLE_MAX);

  /** How much text grep keeps (a browser's tab: 64 MiB; node/index.ts keeps more). */
  protected grepTextBytes(): number {
    return 64 << 20;
  }

  /** What grep reads with: the context's database and reader, and its cache of texts. */
  protected grepSourceOf(ctx: StoreContext): GrepSource {
    return { db: ctx.db, st: ctx.st, reader: ctx.reader, texts: this.grepTexts };
  }

  // ---- chunks, ingest parameters, the log ---------------------------------------------------

  /** Of these chunk keys (BLAKE3, 64 hex), the ones the store has no good copy of, first-seen order. */
  async missingChunks(keys: string[]): Promise<string[]> {
    return missingChunks(this.#r(), checkKeys(keys, 'keys'));
  }

  /** The parameters an ingest producer must use for `putChunks`. */
  ingestOptions(): { chunking: ResolvedChunkParams; compression: number | false; chunkNameKey?: Uint8Array } {
    const key = this.ctx.chunkNameKey;
    return { chunking: this.config.chunking, compression: this.ctx.compression, ...(key ? { chunkNameKey: key } : {}) };
  }

  /**
   * Tells a store on object storage that the reads from now on will cover most of it (a copy,
   * a restore): each pack is fetched whole on its first read — one request — and kept in the
   * cache directory, instead of by growing ranges that concurrent readers break. Elsewhere it
   * changes nothing. `false` goes back to ranged reads.
   */
  fetchWholePacks(on = true): void {
    this.#r().b.packs.fetchWholePacks?.(on);
  }

  /**
   * Applies what other writers committed — on object storage, by reading the log's new objects
   * (decision 0040) — and answers how many commits that was and the newest commit's seq.
   */
  async refresh(): Promise<{ commits: number; seq: number }> {
    const { log } = this.#r();
    return { commits: await log.refresh(), seq: log.head.seq };
  }

  // ---- snapshots (FORMAT.md §13; store-snapshots.ts) ---------------------------------------

  /** All snapshots, oldest first. */
  async snapshots(): Promise<SnapshotInfo[]> {
    return snapshots.allSnapshots(this.#r());
  }

  async snapshotInfo(id: string): Promise<SnapshotInfo> {
    return snapshots.oneSnapshot(this.#r(), id);
  }

  /** Every entry of a snapshot, depth first, each directory before its contents. */
  async *snapshotEntries(id: string): AsyncGenerator<WalkEntry> {
    yield* snapshots.snapshotEntries(this.#r(), id);
  }

  /** The file at `path` in a snapshot: its digest (read it with `document(digest, { unlisted: true })`), size, mode, time. */
  async snapshotFile(id: string, path: string): Promise<FileEntry> {
    return snapshots.snapshotFile(this.#r(), id, path);
  }

  /** Paths added, removed and changed from snapshot `a` to snapshot `b`. */
  async diffSnapshots(a: string, b: string): Promise<SnapshotDiff> {
    return snapshots.diffSnapshots(this.#r(), a, b);
  }

  /** Bytes that deleting the snapshot would free (its chunks no other document uses). */
  async snapshotExclusiveSize(id: string): Promise<number> {
    return snapshots.exclusiveSizeOfSnapshot(this.#r(), id);
  }

  // ---- search, entries, documents (queries.ts, document-reads.ts, store-search.ts) --------

  /**
   * Search that sees every committed change (semantic and hybrid within `waitMs`, when given:
   * SearchHits.notEmbedded): `keyword` (BM25 over paths, tags, metadata and
   * text), `semantic` (the embedder's vectors) or `hybrid` (both, fused by reciprocal rank
   * fusion) — the default once an embedder is in use, else keyword (decision 0036).
   */
  async search(query: string, options: SearchQuery = {}): Promise<SearchHits> {
    return searchStore(this.#r(), query, options);
  }

  /**
   * The lines of the stored text that match `pattern` (a regular expression, linear-time;
   * decision 0055): every path's latest document — text files as they are, PDF, DOCX and HTML
   * by their extracted text — in path order, as events (`begin`, `match`, `context`, `end`,
   * `error`, then one `summary`). Text still to extract is extracted first.
   */
  grep(pattern: string, options: GrepOptions = {}): AsyncGenerator<GrepEvent> {
    return eventsOf(this.grepRuns(pattern, options));
  }

  /** grep's events in runs (search/grep.ts), scanned on this thread (node/ scans on workers too). */
  protected async *grepRuns(pattern: string, options: GrepOptions): AsyncGenerator<GrepEvent[]> {
    const ctx = this.#r();
    await drainIndex(ctx);
    const breathe = breather();
    try {
      // Between documents: a store closed meanwhile ends the scan (STORE_CLOSED).
      yield* grepStore(this.grepSourceOf(ctx), pattern, options, async () => {
        usable(ctx);
        await breathe();
      });
    } catch (e) {
      usable(ctx); // a store closed during the scan: STORE_CLOSED, not the database's own error
      throw e;
    }
  }

  /**
   * What the search index has still to do, and which documents' text could not be (fully)
   * extracted (decision 0035), and how far background embedding is (0036); `wait: true`
   * finishes the pending work first, extraction and embedding included, telling `onProgress`
   * how it goes every quarter second.
   */
  async indexStatus(options: { wait?: boolean; onProgress?: (s: IndexStatus) => void } = {}): Promise<IndexStatus> {
    onlyOptions(options, { wait: 'boolean', onProgress: 'function' }, 'indexStatus');
    return indexStatusOf(this.#r(), options);
  }

  /** The versions of a logical path, oldest first. */
  async versions(path: string): Promise<VersionInfo[]> {
    return versionsOf(this.#r(), path);
  }

  /** The digest a reference names: a digest, a path (latest), `path@N` or `path@<ISO time>`. */
  async resolve(ref: string): Promise<Digest> {
    return resolveRef(this.#r(), ref);
  }

  /** Paths deleted with their versions kept (no entry, versions left), in path order after `after`: what `list` does not show. */
  async deletedPaths(q: { prefixes?: readonly string[]; after?: string; limit?: number } = {}): Promise<{ path: string; deletedAt: string }[]> {
    onlyOptions(q, { prefixes: 'strings', after: 'string', limit: 'count' }, 'deletedPaths');
    return deletedPaths(this.#r(), q);
  }

  /** One version of a path (`version` N, or the latest `at` a time, else the latest), unparsed. */
  async pathVersion(path: string, which: { version?: number; at?: Date | string | number } = {}): Promise<VersionInfo> {
    onlyOptions(which, { version: 'count', at: 'time' }, 'pathVersion');
    return pathVersion(this.#r(), path, which);
  }

  async has(digest: string): Promise<boolean> {
    return this.#r().st.docIdByDigest.get(parseDigest(digest)) !== undefined;
  }

  /**
   * How many chunks verify has found damaged here, not mended since. A put of the same bytes
   * mends a document's (`put(…, {}, { listed: false })` names nothing: `kura copy` mends a
   * destination so).
   */
  async damagedChunks(): Promise<number> {
    return (this.#r().db.prepare<{ n: number }>('SELECT COUNT(*) AS n FROM damaged').get()?.n ?? 0) as number;
  }

  /** Of `damagedChunks`, those of one document. */
  async damagedChunksOf(digest: string): Promise<number> {
    const { st } = this.#r();
    const doc = st.docAnyByDigest.get(parseDigest(digest));
    return doc ? damagedChunksOf(st, doc) : 0;
  }

  /**
   * The text extracted from a PDF, DOCX or HTML document (the text search and grep read), or
   * undefined while it has none (not such a document, or not extracted yet: `indexStatus({
   * wait: true })` extracts what is pending). `status` `capped`: cut at the extractor's bounds
   * (`note` says which); `failed`: none could be read (`note` says why, `text` is ''). A
   * document verify has found damaged is CORRUPT_DATA here, as its bytes are.
   */
  async extractedText(digest: string): Promise<{ kind: string; status: 'ok' | 'capped' | 'failed'; text: string; note?: string } | undefined> {
    const { st, db } = this.#r();
    const found = db.read(() => {
      const doc = st.docAnyByDigest.get(parseDigest(digest));
      return doc ? { doc, row: st.docTextGet.get(doc.id) } : undefined;
    });
    if (!found) throw new NotFoundError(`no document ${digest}`);
    const { doc, row } = found;
    if (!row) return undefined;
    const damage = knownDamage(st, doc);
    if (damage) throw new CorruptDataError(damage, 'damaged-chunk', { digest: formatDigest(doc.digest) });
    const text = row.bytes > 0 ? new TextDecoder().decode(decompress(row.text, row.bytes)) : '';
    return { kind: row.kind, status: row.status, text, ...(row.note ? { note: row.note } : {}) };
  }

  /** An entry: `ref` is a path, or a digest naming the entry of that content (else AMBIGUOUS). */
  async stat(ref: string): Promise<DocumentInfo> {
    const ctx = this.#r();
    const target = targetOf(ref);
    return ctx.db.read(() => statTarget(ctx.st, target));
  }

  /** One lookup, then reads bound to the row found (an HTTP GET needs the size before the bytes). */
  async document(digest: string, options: { unlisted?: boolean } = {}): Promise<DocumentReader> {
    onlyOptions(options, { unlisted: 'boolean' }, 'document');
    return openDocument(this.#r(), digest, options.unlisted ?? false);
  }

  /** The document as a stream of byte pieces; ends with CORRUPT_DATA if anything is damaged. */
  get(digest: string): AsyncIterable<Uint8Array> {
    return documentStream(this.#r(), digest);
  }

  /** A document's chunks in order: their keys (BLAKE3, hex) and raw lengths. */
  async manifest(digest: string, options: { unlisted?: boolean } = {}): Promise<{ key: string; length: number }[]> {
    onlyOptions(options, { unlisted: 'boolean' }, 'manifest');
    return manifestOf(this.#r(), digest, options.unlisted ?? false);
  }

  /** One chunk's raw bytes, checked against its key (CORRUPT_DATA when damaged). */
  async chunk(key: string): Promise<Uint8Array> {
    return chunkBytes(this.#r(), checkKeys([key], 'key')[0]!);
  }

  /** The whole document, checked against its digest before it is returned. */
  async getBytes(digest: string): Promise<Uint8Array> {
    return documentBytes(this.#r(), digest);
  }

  /** Bytes [start, end) as a stream, reading only the chunks that hold them. */
  getRangeStream(digest: string, start: number, end: number): AsyncIterable<Uint8Array> {
    return rangeStream(this.#r(), digest, start, end);
  }

  async getRange(digest: string, start: number, end: number): Promise<Uint8Array> {
    return rangeBytes(this.#r(), digest, start, end);
  }

  /** Entries in the order they were made, filtered, a page at a time, each with its latest document. */
  async list(query: ListQuery = {}): Promise<ListResult> {
    try {
      return listEntries(this.#r(), query);
    } catch (e) {
      // A cursor beyond every entry this server has made may be another server's, on a shared
      // store, that this one has not caught up with: caught up, and asked again (once).
      if (!(isKuraError(e) && e.code === 'INVALID_INPUT' && (e as { field?: string }).field === 'cursor' && this.#r().log.publishes)) throw e;
      await this.refresh();
      return listEntries(this.#r(), query);
    }
  }

  /** Every tag on an entry, with how many entries carry it, by name. */
  async tags(): Promise<{ tag: string; entries: number }[]> {
    return tagCounts(this.#r());
  }

  /** Bytes that deleting the document would free (stored bytes of chunks only it uses). */
  async exclusiveSize(digest: string): Promise<number> {
    return exclusiveSize(this.#r(), digest);
  }

  /**
   * Checks every chunk, document, tree, pack and commit of the log; a writer marks what is
   * damaged. `readData` (default: on a local store, not on object storage, where it downloads
   * the whole store): every chunk and document read and re-hashed; without it, the packs'
   * presence, sizes and indexes against the rows.
   */
  async verify(onProgress?: ((p: VerifyProgress) => void) | { readData?: boolean }, options: { readData?: boolean } = {}): Promise<VerifyReport> {
    // (Options alone, first: `verify({ readData: false })` failed with "onProgress is not a function".)
    if (onProgress !== undefined && typeof onProgress !== 'function') return this.verify(undefined, onProgress);
    onlyOptions(options, { readData: 'boolean' }, 'verify');
    return verifyAll(this.#r(), onProgress, options);
  }

  async stats(): Promise<StoreStats> {
    const ctx = this.#r();
    const stats = storeStats(ctx);
    // The open pack's row has the size it had when opened: its bytes since (records of puts,
    // and of puts that failed — garbage GC can take) count too, as the doc comment says.
    const open = ctx.writer.openPackRow;
    if (open) stats.packBytes += Math.max(0, ctx.writer.openPackSize - (ctx.st.packById.get(open.id)?.size ?? 0));
    return stats;
  }
}

/** A reference as an entry target: `sha256:…` is a digest, anything else a path. */
export function targetOf(ref: string): EntryTarget {
  if (typeof ref !== 'string' || !ref) throw new InvalidInputError('reference must be a non-empty string', 'ref');
  return ref.startsWith('sha256:') ? { digest: ref } : { path: ref };
}
