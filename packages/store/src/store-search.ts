/**
 * Store.search and Store.useEmbedder (decision 0036): which mode answers, the embedder wired
 * in, and what the index has pending (Store.indexStatus).
 */
import { indexStatus, type IndexStatus } from './search/index-status.js';
import { historySearch, keywordSearch, semanticSearch } from './search/modes.js';
import type { SearchHits, SearchQuery } from './search/search-query.js';
import { FormatMismatchError, InvalidInputError, ModelUnavailableError } from './errors.js';
import { schemaVersion } from './catalog/schema.js';
import { EmbedJob } from './semantic/embed-job.js';
import type { Embedder } from './semantic/embedder.js';
import { SemanticSearch } from './semantic/semantic-side.js';
import { drainIndex, type StoreContext } from './store-context.js';
import { remadeIfDamaged } from './store-index.js';

/** The schema whose history index and spans (schema 19) searches through history use. */
const HISTORY_SCHEMA = 19;

/**
 * `mode` keyword, semantic or hybrid; by default hybrid once an embedder is in use, else keyword.
 * A damaged keyword index is made again, and the question asked again (store-index.ts).
 */
export async function searchStore(ctx: StoreContext, query: string, options: SearchQuery): Promise<SearchHits> {
  try {
    return await searchOnce(ctx, query, options);
  } catch (e) {
    if (!(await remadeIfDamaged(ctx, e))) throw e;
    return searchOnce(ctx, query, options);
  }
}

async function searchOnce(ctx: StoreContext, query: string, options: SearchQuery): Promise<SearchHits> {
  await drainIndex(ctx);
  if (options?.allVersions || options?.snapshot !== undefined) {
    // A store opened read-only keeps the schema it has: one from before the history spans
    // cannot be searched through history until it is opened for writing (which migrates it).
    const schema = schemaVersion(ctx.db);
    if (ctx.readonly && schema < HISTORY_SCHEMA) {
      throw new FormatMismatchError(`this store's schema is version ${schema}; searching through history needs version ${HISTORY_SCHEMA}: open it once for writing`, String(HISTORY_SCHEMA), String(schema));
    }
    return historySearch({ ...ctx, db: ctx.search.db, history: { db: ctx.db, st: ctx.st, reader: ctx.reader, extract: ctx.indexer.extract }, writable: !ctx.readonly }, query, options);
  }
  const hits = await searchLatest(ctx, query, options);
  // Read-only, the keyword index cannot be brought up to date: the entries a writer changed
  // and has not indexed yet are said, not left out in silence (a library trial).
  if (ctx.readonly) {
    const behind = ctx.db.read(() => ctx.db.prepare<{ n: number | null }>('SELECT SUM(json_array_length(entries)) AS n FROM search_queue').get()?.n ?? 0);
    if (behind) Object.defineProperty(hits, 'notIndexed', { value: behind, writable: true, configurable: true });
  }
  return hits;
}

/** The latest versions searched (not through history), in the mode asked or the default. */
async function searchLatest(ctx: StoreContext, query: string, options: SearchQuery): Promise<SearchHits> {
  const mode = options?.mode ?? (ctx.semantic ? 'hybrid' : 'keyword');
  // (Checked before the model is asked for: `mode: 'fuzzy'` was told it needs a model.)
  if (mode !== 'keyword' && mode !== 'semantic' && mode !== 'hybrid') throw new InvalidInputError(`mode is keyword, semantic or hybrid, not ${JSON.stringify(mode)}`, 'mode');
  if (mode === 'keyword') return withMode(await keywordSearch(searcher(ctx), query, options), mode);
  // The local model reads English: a question with no Latin letter or digit (图书馆, มะม่วง) is
  // noise to it, and its nearest texts came back as confident hits (a Thai note at 0.958 for a
  // Chinese word: a trial). Such a question is answered by its words, and `mode` says so.
  if (ctx.semantic?.embedder.latinOnly && typeof query === 'string' && query.trim() && !READ_BY_MODEL.test(query)) return withMode(await keywordSearch(searcher(ctx), query, options), 'keyword');
  const semantic = ctx.semantic;
  if (!semantic) {
    throw new ModelUnavailableError(`${mode} search needs an embedding model, and none is in use here (a server started with --semantic off; no model installed: scripts/fetch-model.sh; in code, Store.useEmbedder); keyword search works`, 'none');
  }
  return withMode(await semanticSearch({ ...searcher(ctx), semantic }, query, options, mode), mode);
}

/**
 * What a search reads through: the index's connection (search/index-writer.ts), which reads
 * the catalog too. Where the index is a file of its own that connection is not the catalog's,
 * and it sees what the catalog's has committed — every drained change (drainIndex ends the
 * open batch first).
 */
function searcher(ctx: StoreContext): StoreContext {
  return ctx.search.db === ctx.db ? ctx : { ...ctx, db: ctx.search.db };
}

/** A letter or digit of a script the local embedding model reads (Latin). */
const READ_BY_MODEL = /[\p{Script=Latin}\p{Nd}]/u;

/** The hits, saying which mode ranked them (the default depends on whether a model is in use). */
function withMode(hits: SearchHits, mode: 'keyword' | 'semantic' | 'hybrid'): SearchHits {
  Object.defineProperty(hits, 'mode', { value: mode, writable: true, configurable: true });
  return hits;
}

export function useEmbedder(ctx: StoreContext, embedder: Embedder): void {
  const job = new EmbedJob(ctx.db, ctx.st, ctx.reader, embedder, () => ctx.indexer.writing());
  ctx.semantic = new SemanticSearch(ctx.db, ctx.st, ctx.reader, embedder, job);
  ctx.indexer.onIndexed = () => job.schedule();
  job.schedule();
}

const PROGRESS_MS = 250;

/**
 * What the search index has still to do (search/index-status.ts); `wait`: indexes, extracts and
 * embeds everything pending first, telling `onProgress` how it goes every PROGRESS_MS.
 */
export async function indexStatusOf(ctx: StoreContext, options: { wait?: boolean; onProgress?: (s: IndexStatus) => void }): Promise<IndexStatus> {
  const now = () => indexStatus(ctx.db, ctx.st, ctx.semantic?.embedder.model);
  if (!options.wait) return now();
  const { onProgress } = options;
  const timer = onProgress ? setInterval(() => onProgress(now()), PROGRESS_MS) : undefined;
  try {
    await drainIndex(ctx);
    await ctx.semantic?.job.drain();
  } finally {
    clearInterval(timer);
  }
  return now();
}
