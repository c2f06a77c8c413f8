/**
 * A damaged keyword index (decision 0083). The index is derived from the catalog, so damage to
 * it loses nothing: a search that meets it (SQLite's SQLITE_CORRUPT from FTS5's segments, or
 * its totals) has the index emptied and every entry queued again, then asks again — which
 * waits for the whole store to be indexed anew. `verify` checks it and does the same. A store
 * opened read-only cannot write it: its searches fail with CORRUPT_DATA `search-index`.
 */
import { CorruptDataError } from '@kura/core';
import type { StoreContext } from './store-context.js';

/** Empties the index and queues every entry, with no indexing batch in flight. */
export async function remakeIndex(ctx: StoreContext): Promise<void> {
  const remake = ctx.search.remake;
  if (!remake) return;
  await ctx.indexer.exclusive(() => remake(() => ctx.log.endBatch()));
}

/**
 * Whether `e` (thrown while searching) came from a damaged index, which is then made anew:
 * true, and the caller asks again. Damage elsewhere (the catalog) is not the index's: false.
 * Read-only, the index stays as it is: CORRUPT_DATA `search-index` is thrown.
 */
export async function remadeIfDamaged(ctx: StoreContext, e: unknown): Promise<boolean> {
  if (!(e instanceof CorruptDataError && e.reason === 'database')) return false;
  let problems: string[];
  try {
    problems = ctx.search.check(false);
  } catch {
    return false; // (the check itself fails: the damage is not only the index's)
  }
  if (problems.length === 0) return false;
  if (!ctx.search.remake) {
    throw new CorruptDataError(`the keyword index is damaged (${problems[0]}); it is derived from the catalog, and a store opened for writing makes it again`, 'search-index', {}, { cause: e });
  }
  await remakeIndex(ctx);
  return true;
}
