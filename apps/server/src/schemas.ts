/** zod schemas of the API's JSON: they validate requests and document every response in OpenAPI. */
import { z } from 'zod';
import { HttpError } from './errors.js';

export const Digest = z.string().regex(/^sha256:[0-9a-f]{64}$/).describe('sha256:<64 lowercase hex>');
export const ChunkKey = z.string().regex(/^[0-9a-f]{64}$/).describe('BLAKE3-256 of the raw chunk, 64 lowercase hex');

export const ErrorBody = z
  .object({
    error: z.looseObject({
      code: z.string().describe('stable code from the catalog in docs/HTTP.md'),
      message: z.string(),
      requestId: z.string(),
    }),
  })
  .describe('every error: the code to act on, a message for people, the request id to quote');

export const PutResult = z.object({
  digest: Digest,
  size: z.number().int(),
  chunks: z.number().int(),
  newChunks: z.number().int().optional().describe('chunks this upload added to the store (left out for a token limited to prefixes: it would say what the whole store holds)'),
  newBytesStored: z.number().int().optional().describe('bytes this upload added to pack files (left out for a token limited to prefixes)'),
  version: z.number().int().optional().describe("an upload with a path: the path's version after it — the one it made, or the latest, which had these bytes (left out for a token without read)"),
  versionMade: z.boolean().optional().describe('whether this upload made that version (false: the latest already had these bytes)'),
});

/**
 * A put's answer as a token may see it: the path's version is the entry's, which a token
 * without read learns nothing of (as PATCH /v1/entry answers it 204).
 */
export function putAnswer<R extends { version?: number; versionMade?: boolean }>(result: R, scopes: ReadonlySet<string> | undefined): Omit<R, 'version' | 'versionMade'> | R {
  if (!scopes || scopes.has('read')) return result;
  const { version: _version, versionMade: _made, ...rest } = result;
  return rest;
}

export const DocumentInfo = z.object({
  path: z.string().nullable().describe('the entry\'s path; null for an upload without one (named by its digest)'),
  digest: Digest.describe('the document the entry shows (its latest version)'),
  size: z.number().int(),
  chunks: z.number().int(),
  version: z.number().int().nullable().describe('the latest version\'s number; null without a path'),
  mediaType: z.string().nullable(),
  tags: z.array(z.string()),
  meta: z.record(z.string(), z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const ListResult = z.object({ items: z.array(DocumentInfo), nextCursor: z.string().optional() });

export const VersionInfo = z.object({
  path: z.string(),
  version: z.number().int(),
  digest: Digest,
  size: z.number().int(),
  createdAt: z.string(),
  pinned: z.boolean().describe('kept whatever a retention policy says'),
});

export const SearchHit = z.object({
  digest: Digest,
  path: z.string().nullable(),
  mediaType: z.string().nullable(),
  size: z.number().int(),
  score: z.number().optional().describe('keyword mode: BM25, lower is better; semantic: cosine similarity; hybrid: the fused score (higher is better); hits come best first. BM25 and the fused score are left out for a token limited to prefixes (BM25 weighs words by the whole store)'),
  snippet: z.string().describe('best passage, matches between <mark> and </mark>'),
  damaged: z.string().optional().describe("the document's bytes failed their check (CORRUPT_DATA) when its text was read: the message (run POST /v1/verify)"),
  version: z.number().int().optional().describe('a search through versions (allVersions): the version of path that matched'),
  rerank: z.object({ rank: z.number().int(), score: z.number() }).optional().describe('reranked: this hit\'s rank among the candidates reranked, and the reranker\'s score'),
  matched: z.array(z.enum(['keyword', 'semantic', 'exact'])).describe('which sides found this hit: keyword (its terms), semantic (its meaning, above the relevance floor), exact (it holds the identifiers the query names — 6.17.0, ERR_REQUIRE_ESM, useEffect — as written)'),
  keyword: z.object({ rank: z.number().int(), score: z.number().optional() }).optional().describe('the keyword side\'s rank and BM25 score, when it found this hit (the score left out for a token limited to prefixes)'),
  semantic: z.object({ rank: z.number().int(), score: z.number() }).optional().describe('the semantic side\'s rank and cosine similarity, when it found this hit'),
  exact: z.object({ rank: z.number().int(), score: z.number().optional() }).optional().describe('hybrid: this hit\'s rank and BM25 score among the documents holding the query\'s identifiers as written, when it is one (the score left out for a token limited to prefixes)'),
  alsoAt: z.array(z.string()).optional().describe('the other paths holding the same bytes that the search\'s filters keep (one hit per document unless collapse=false), in path order, 20 at most'),
  alsoAtMore: z.number().int().optional().describe('how many other paths alsoAt leaves out'),
});

export const IndexStatus = z.object({
  queued: z.number().int().describe('entry changes waiting to be indexed'),
  extracted: z.object({ ok: z.number().int(), capped: z.number().int(), failed: z.number().int() }).describe('documents whose text was extracted (PDF, DOCX, HTML), by outcome'),
  problems: z
    .array(
      z.object({
        digest: Digest,
        path: z.string().nullable(),
        kind: z.string(),
        status: z.enum(['capped', 'failed']),
        note: z.string().nullable(),
        pages: z.number().int().nullable(),
      }),
    )
    .describe('capped and failed extractions, newest first (100 at most)'),
  textCapped: z.number().int().describe('entries of text files over 1 MiB: the keyword index holds their first MiB (grep reads them whole)'),
  embedding: z
    .object({
      model: z.string(),
      documents: z.number().int().describe('documents embedded (those without prose with no chunks)'),
      chunks: z.number().int().describe('chunks embedded over those documents'),
      pending: z.number().int().describe('documents still to embed'),
    })
    .nullable()
    .describe('background embedding for the model in use; null when the server has none (semantic search off)'),
});

export const Stats = z.object({
  entries: z.number().int().describe('paths, and uploads without one'),
  documents: z.number().int().describe('distinct documents the entries show'),
  logicalBytes: z.number().int().describe('sizes of the documents the entries show, one per entry'),
  keptDocuments: z.number().int().describe('documents the store keeps: shown by entries, older versions, snapshots\' files'),
  keptBytes: z.number().int().describe('the bytes of everything kept: every entry, older version and snapshot file'),
  uniqueChunkBytes: z.number().int(),
  storedBytes: z.number().int(),
  packBytes: z.number().int(),
  chunks: z.number().int(),
  packs: z.number().int(),
  dedupRatio: z.number().describe('keptBytes / uniqueChunkBytes'),
  compressionRatio: z.number(),
});

export const GcReport = z.object({
  documentsRemoved: z.number().int(),
  chunksRemoved: z.number().int(),
  packsDeleted: z.number().int(),
  packsCompacted: z.number().int(),
  orphansDeleted: z.number().int(),
  bytesFreed: z.number().int(),
  packsWaiting: z.number().int(),
  bytesWaiting: z.number().int(),
  bytesInLog: z.number().int(),
  chunksWaiting: z.number().int(),
  chunkBytesWaiting: z.number().int(),
  waitingUntil: z.string().optional(),
  margin: z.enum(['writers', 'shared']).optional(),
  chunksDamaged: z.array(z.string()).describe('live chunks a compaction could not copy because they are damaged: their packs stay until they are repaired'),
  logCommitsDeleted: z.number().int(),
  checkpointsDeleted: z.number().int(),
});

export const VerifyReport = z.object({
  ok: z.boolean(),
  dataRead: z.boolean(),
  chunksChecked: z.number().int(),
  documentsChecked: z.number().int(),
  bytesChecked: z.number().int(),
  damagedChunks: z.array(z.object({ key: z.string(), reason: z.string(), message: z.string(), documents: z.array(z.string()) })),
  damagedDocuments: z.array(z.object({ digest: z.string(), reason: z.string(), message: z.string(), chunks: z.array(z.string()) })),
  treesChecked: z.number().int().describe('snapshot trees checked (hash, format, entries present)'),
  damagedTrees: z.array(z.object({ digest: z.string(), reason: z.string(), message: z.string() })),
  packsChecked: z.number().int().describe('sealed packs checked: size on disk, and their index against the catalog'),
  damagedPacks: z.array(z.object({ pack: z.string(), reason: z.string(), message: z.string() })),
  logCommitsChecked: z.number().int().describe("commits of the store's log read and checked: intact, chained, the database's head among them"),
  damagedLog: z.array(z.object({ reason: z.string(), seq: z.number().int().optional(), message: z.string() })),
  catalogChecked: z.boolean().describe("whether the database's tables were compared row for row with a replay of the log"),
  catalogRowsChecked: z.number().int().describe('rows compared'),
  damagedCatalog: z
    .array(z.object({ reason: z.enum(['database', 'catalog']), table: z.string().optional(), missing: z.number().int().optional(), extra: z.number().int().optional(), differing: z.number().int().optional(), message: z.string() }))
    .describe('the database found damaged by SQLite (`database`), or tables that are not what the log makes them (`catalog`): kura rebuild mends both'),
  damagedKeys: z.array(z.object({ id: z.string(), message: z.string() })).describe("an encrypted store's key files that cannot be read"),
  damagedSearchIndex: z
    .array(z.object({ message: z.string(), remade: z.boolean() }))
    .describe('what SQLite found wrong with the keyword index; derived, it was emptied and every entry queued (`remade`) where the store is open for writing'),
});

/**
 * A logical path as the API accepts it: relative, `/`-separated, without `.`, `..` or empty
 * segments, backslashes or control characters, so it can never name a place outside the tree
 * it is restored into.
 */
export const SafePath = z
  .string()
  .min(1)
  // (UTF-16 code units, as docs/HTTP.md says: zod's max counts code points.)
  .refine((p) => p.length <= 4096, 'path must be at most 4096 characters (UTF-16 code units)')
  .refine((p) => !/[\u0000-\u001f\u007f\\]/.test(p), 'path must not contain control characters or backslashes')
  .refine((p) => !p.startsWith('/'), 'path must be relative (no leading /)')
  .refine((p) => p.split('/').every((s) => s !== '' && s !== '.' && s !== '..'), 'path must not contain empty, "." or ".." segments');

/**
 * A path that names one the store may hold, to read, change or delete it: SafePath's rules but
 * for control characters and backslashes, which `kura add` and a watch store from file names
 * (a file named `a\nb.md`): listed over HTTP and MCP, such a path could not be read there (a
 * trial). A new path still follows SafePath.
 */
export const NamedPath = z
  .string()
  .min(1)
  .refine((p) => p.length <= 4096, 'path must be at most 4096 characters (UTF-16 code units)')
  .refine((p) => !p.includes('\u0000'), 'path must not contain NUL')
  .refine((p) => !p.startsWith('/'), 'path must be relative (no leading /)')
  .refine((p) => p.split('/').every((s) => s !== '' && s !== '.' && s !== '..'), 'path must not contain empty, "." or ".." segments');

/** A path from a URL's wildcard (`/v1/paths/*`) or a `path=` naming one: INVALID_INPUT naming why when it is not one a document can have. */
export function pathParam(value: string): string {
  const r = NamedPath.safeParse(value);
  if (!r.success) throw new HttpError('INVALID_INPUT', `path: ${r.error.issues[0]!.message}`, { field: 'path' });
  return value;
}

const tag = z.string().min(1).max(256);
export const MetaChange = z
  .object({
    mediaType: z.string().max(255).nullable().optional(),
    meta: z.record(z.string(), z.string().nullable()).optional().describe('null deletes a key'),
    addTags: z.array(tag).max(1000).optional(),
    removeTags: z.array(tag).max(1000).optional(),
  })
  .strict();

export const DigestParams = z.object({ digest: z.string() });
export const PathQuery = z.object({ path: z.string() }).strict();

/** Error responses a route can give, for OpenAPI. */
export function errors(...statuses: number[]): Record<number, typeof ErrorBody> {
  return Object.fromEntries(statuses.map((s) => [s, ErrorBody]));
}
