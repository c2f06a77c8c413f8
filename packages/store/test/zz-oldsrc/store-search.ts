/**
 * Store.search and Store.useEmbedder (decision 0036): which mode answers, the embedder wired
 * in, and what the index has pending (Store.indexStatus).
 */
import { indexStatus, type IndexStatus } from './search/index-status.js';
import { historySearch, keywordSearch, semanticSearch } from './search/modes.js';
import type { SearchHits, SearchQuery } from './search/search-query.js';
import { ModelUnavailableError } from './errors.js';
import { EmbedJob } from './semantic/embed-job.js';
import type { Embedder } from './semantic/embedder.js';
import { SemanticSearch } from './semantic/semantic-side.js';
import { drainIndex, type StoreContext } from './store-context.js';

/** `mode` keyword, semantic or hybrid; by default hybrid once an embedder is in use, else keyword. */
export async function searchStore(ctx: StoreContext, query: string, options: SearchQuery): Promise<SearchHits> {
  await drainIndex(ctx);
  if (options?.allVersions || options?.snapshot !== undefined) {
    return historySearch({ ...ctx, history: { db: ctx.db, st: ctx.st, reader: ctx.reader, extract: ctx.indexer.extract }, writable: !ctx.readonly }, query, options);
  }
  const mode = options.mode ?? (ctx.semantic ? 'hybrid' : 'keyword');
  if (mode === 'keyword') return keywordSearch(ctx, query, options);
  const semantic = ctx.semantic;
  if (!semantic) {
    throw new ModelUnavailableError(`${mode} search needs an embedding model, and this store has none in use (Store.useEmbedder; the local model: scripts/fetch-model.sh); keyword search works`, 'none');
  }
  return semanticSearch({ ...ctx, semantic }, query, options, mode);
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
