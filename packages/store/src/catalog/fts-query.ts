/**
 * What keyword search accepts (FORMAT.md §10): people's words as an FTS5 query, FTS5's own
 * syntax as typed, and the limits and the typed error for everything else.
 */
import { KuraError } from '@kura/core';

/** A query FTS5 cannot parse. */
export class InvalidQueryError extends KuraError {
  constructor(message: string) {
    super('INVALID_QUERY', message);
  }
}

/** FTS5 syntax: quotes, prefix *, grouping, ^, operators, or a column filter of ours. */
const FTS_SYNTAX = /["*()^]|\b(AND|OR|NOT|NEAR)\b|(^|[\s(])(path|tags|meta|body)\s*:/;
/** Limits that keep one query from holding the (synchronous) database for seconds. */
export const QUERY_MAX_CHARS = 4096;
export const QUERY_MAX_TERMS = 64;

/**
 * Plain words are quoted (`http://x.org` or `10:30` are words here) and OR-ed: a question in
 * people's words matches the documents that share any of its terms, and BM25 ranks those that
 * match more and rarer terms first (requiring every term, FTS5's default, made questions match
 * almost nothing: nDCG@10 0.006 against 0.359 OR-ed on a labelled collection, SEMANTIC.md).
 * FTS5 syntax passes through unchanged, for those who type it (`a AND b`, `"a phrase"`, `pre*`).
 */
export function toFtsQuery(query: string): string {
  const q = query.trim();
  if (!q) throw new InvalidQueryError('the query is empty');
  if (q.length > QUERY_MAX_CHARS) throw new InvalidQueryError(`the query is longer than ${QUERY_MAX_CHARS} characters`);
  if (q.split(/\s+/).length > QUERY_MAX_TERMS) throw new InvalidQueryError(`the query has more than ${QUERY_MAX_TERMS} terms`);
  if (FTS_SYNTAX.test(q)) return q;
  // Only what the tokenizer indexes can match: a "word" of punctuation alone is no term.
  const words = q.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w));
  if (words.length === 0) throw new InvalidQueryError(`the query ${JSON.stringify(query)} has no words to search for (letters or digits)`);
  return words.map((w) => `"${w.replace(/"/g, '""')}"`).join(' OR ');
}
