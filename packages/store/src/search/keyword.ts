/**
 * Keyword search (FORMAT.md §10): a parsed query (grammar.ts) matched against the FTS5 index,
 * ranked by BM25, and the hits of every mode made from the entries found (snippets included).
 */
import type { SqlDatabase } from '../backend/sql.js';
import { formatDigest } from '../hex.js';
import { entryFilters } from '../options.js';
import type { Reader } from '../bytes/read.js';
import type { Statements } from '../catalog/statements.js';
import { INDEXED_TEXT_MAX } from './text.js';
import { documentText } from './doc-text.js';
import { z } from 'zod';
import { SNIPPET_SOURCE_MAX, escapeHtml, makeSnippet, queryTerms, snippetPast, stemOf, stopStemmedOnly, weighTerms, type SnippetTerm } from './snippet.js';
import { STOP_WORDS } from './stop-words.js';
import type { SearchHit, SearchQuery } from './search-query.js';
import type { ParsedQuery } from './grammar.js';
import { excludedMatch, filterSql, toMatch, toPhraseMatch } from './fts.js';
import { exactTerms, holdsAny, onlyExact } from './exact-terms.js';

/** An entry a search found, before its snippet is made. */
export interface FoundEntry {
  entry_id: number;
  doc_id: number;
  digest: Uint8Array;
  path: string | null;
  media_type: string | null;
  size: number;
  score: number;
}

/** The SQL conditions on entries `e` of the options' filters and the query's own (`tag:` …). */
export function allFilters(parsed: ParsedQuery, q: z.output<typeof SearchQuery>): { where: string[]; params: (string | number)[] } {
  const a = entryFilters(q);
  const b = filterSql(parsed.filters);
  return { where: [...a.where, ...b.where], params: [...a.params, ...b.params] };
}

/** Entries best first by BM25 over the index (drained first); none when nothing is searchable. */
export function keywordEntries(db: SqlDatabase, parsed: ParsedQuery, q: z.output<typeof SearchQuery>, limit: number, offset: number, among?: readonly number[]): FoundEntry[] {
  const match = toMatch(parsed);
  if (match === null) return [];
  const filters = allFilters(parsed, q);
  if (among) {
    filters.where.push('e.id IN (SELECT value FROM json_each(?))');
    filters.params.push(JSON.stringify(among));
  }
  const where = ['search MATCH ?', ...filters.where];
  // A question's whole text found as a phrase ranks its documents first (fts.ts toPhraseMatch).
  const phrase = toPhraseMatch(parsed);
  const sql = `SELECT e.id AS entry_id, d.id AS doc_id, d.digest AS digest, e.path AS path, e.media_type AS media_type, d.size AS size,
      bm25(search, 4.0, 3.0, 2.0, 1.0) AS score${phrase ? ', search.rowid IN (SELECT rowid FROM search WHERE search MATCH ?) AS whole' : ''}
    FROM search JOIN entries e ON e.id = search.rowid JOIN documents d ON d.id = e.doc_id
    WHERE ${where.join(' AND ')} ORDER BY ${phrase ? 'whole DESC, ' : ''}score, e.id LIMIT ? OFFSET ?`;
  const rows = db.prepare<FoundEntry & { whole?: number }>(sql).all(...(phrase ? [phrase] : []), match, ...filters.params, limit, offset);
  if (phrase) for (const r of rows) delete r.whole;
  return rows;
}

/** Candidates of a stop-stemmed query (`keywordFound`) read at most, a page at a time, and for how long. */
export const CHECK_MAX = 2000;
const CHECK_PAGE = 100;
const CHECK_MS = 300;

/**
 * `keywordEntries`, except for a query the index cannot answer exactly, whose candidates are
 * read and checked:
 * - its words all have a stop word for their stem (`Andes` → `and`, `herring` → `her`,
 *   `theses` → `these`; snippet.ts `stopStemmedOnly`). The index cannot tell such a word from
 *   its stop word, so it finds every text with `and`, the most of them first: "Andes" found
 *   "Bread and butter and jam." above the Andes. A candidate needs the word itself, or another
 *   of its forms that is not a stop word;
 * - it asks for identifiers alone, one of them joined (`9.0.0`, `ERR_REQUIRE_ESM`;
 *   exact-terms.ts): the index matches their words in a row, across any punctuation (`0.9.0,
 *   0.9.5` for `9.0.0`). A candidate needs one of them as written.
 * Candidates are read best first and kept when their path, tags, metadata or text (as far as
 * it is indexed) passes — until the page is full, CHECK_MAX candidates were read, or CHECK_MS
 * passed.
 */
export async function keywordFound(
  s: { db: SqlDatabase; st: Statements; reader: Reader },
  parsed: ParsedQuery,
  q: z.output<typeof SearchQuery>,
  limit: number,
  offset: number,
  /**
   * `check`: the test candidates must pass instead of the query's own (null: none), with at
   * most `checks` candidates read — a count, not a time, so that every page of a search is cut
   * from one list.
   */
  o: { check?: ((text: string) => boolean) | null; checks?: number } = {},
): Promise<FoundEntry[]> {
  const has = o.check === undefined ? candidateCheck(parsed) : o.check;
  if (!has) return s.db.read(() => keywordEntries(s.db, parsed, q, limit, offset));
  const want = offset + limit;
  const kept: FoundEntry[] = [];
  const started = performance.now();
  let checked = 0;
  const more = () => kept.length < want && (o.checks !== undefined ? checked < o.checks : checked < CHECK_MAX && performance.now() - started < CHECK_MS);
  for (let from = 0; more(); from += CHECK_PAGE) {
    const page = s.db.read(() => keywordEntries(s.db, parsed, q, CHECK_PAGE, from));
    for (const f of page) {
      if (!more()) break;
      checked++;
      if (await passes(s, f, has)) kept.push(f);
    }
    if (page.length < CHECK_PAGE) break;
  }
  return kept.slice(offset);
}

/** Whether an entry's path, tags, metadata or text (as far as it is indexed) passes a test (its text read only when the others fail). */
export async function passes(s: { db: SqlDatabase; st: Statements; reader: Reader }, f: FoundEntry, has: (text: string) => boolean): Promise<boolean> {
  const { tags, meta, doc } = fieldRows(s, f);
  return has(f.path ?? '') || has(tags) || has(meta) || (doc !== undefined && has(await documentText(s.reader, s.st, doc, f.media_type, INDEXED_TEXT_MAX)));
}

/** An entry's path, tags, metadata and text (as far as it is indexed): what the index matched. */
export async function fieldsOf(s: { db: SqlDatabase; st: Statements; reader: Reader }, f: FoundEntry): Promise<string[]> {
  const { tags, meta, doc } = fieldRows(s, f);
  return [f.path ?? '', tags, meta, doc === undefined ? '' : await documentText(s.reader, s.st, doc, f.media_type, INDEXED_TEXT_MAX)];
}

function fieldRows(s: { db: SqlDatabase; st: Statements }, f: FoundEntry) {
  return s.db.read(() => ({
    tags: s.st.tagsOf.all(f.entry_id).map((t) => t.tag).join(' '),
    meta: s.st.metaOf.all(f.entry_id).map((m) => `${m.key} ${m.value}`).join('\n'),
    doc: s.st.docById.get(f.doc_id),
  }));
}

/** The test a query's candidates must pass (keywordFound), or undefined when the index's match is the answer. */
function candidateCheck(parsed: ParsedQuery): ((text: string) => boolean) | undefined {
  const terms = queryTerms(parsed);
  if (stopStemmedOnly(terms)) return exactForms(terms);
  const exact = exactTerms(parsed);
  return onlyExact(parsed, exact) ? holdsAny(exact) : undefined;
}

/** A test of a text for a word of the stop-stemmed terms': a word with the term's stem that is not a stop word. */
function exactForms(terms: SnippetTerm[]): (text: string) => boolean {
  // A word keeps its stem's letters but the last (porter turns `y` into `i`, adds an `e`).
  const starts = [...new Set(terms.map((t) => t.stem.slice(0, Math.max(1, t.stem.length - 1))))];
  const stems = new Set(terms.map((t) => t.stem));
  // (Starting after anything but a letter or digit, `_` included: the index cuts words there too.)
  const words = new RegExp(`(?<![\\p{L}\\p{N}])(?:${starts.join('|')})[a-z]*`, 'giu');
  return (text) => {
    for (const m of text.matchAll(words)) {
      const w = m[0].toLowerCase();
      if (!STOP_WORDS.has(w) && stems.has(stemOf(w))) return true;
    }
    return false;
  };
}

/** Of `entryIds`, those whose indexed text holds one of the parse's exclusions (`-word`). */
export function excludedEntries(db: SqlDatabase, parsed: ParsedQuery, entryIds: number[]): Set<number> {
  const match = excludedMatch(parsed);
  if (match === null || entryIds.length === 0) return new Set();
  const rows = db.prepare<{ id: number }>('SELECT rowid AS id FROM search WHERE search MATCH ? AND rowid IN (SELECT value FROM json_each(?))').all(match, JSON.stringify(entryIds));
  return new Set(rows.map((r) => r.id));
}

/**
 * A hit for each entry, with a snippet made from the entry's path, tags, metadata and its
 * document's first SNIPPET_SOURCE_MAX bytes of text, read back from the packs (the index is
 * contentless: FORMAT.md §10) — or, given `passage`, from that part of the text (a semantic hit's chunk).
 */
export async function toHits(
  db: SqlDatabase,
  st: Statements,
  reader: Reader,
  parsed: ParsedQuery,
  found: readonly FoundEntry[],
  extra: (f: FoundEntry) => Pick<SearchHit, 'matched'> & Partial<SearchHit> & { passage?: { start: number; end: number } },
  docsHolding?: (term: string) => number,
): Promise<SearchHit[]> {
  const terms = weighed(db, queryTerms(parsed), found.length > 0 ? docsHolding : undefined);
  const hits: SearchHit[] = [];
  for (const r of found) {
    const { tags, meta, doc } = db.read(() => ({
      tags: st.tagsOf.all(r.entry_id).map((t) => t.tag).join(' '),
      meta: st.metaOf.all(r.entry_id).map((m) => `${m.key} ${m.value}`).join('\n'),
      doc: st.docById.get(r.doc_id),
    }));
    const { passage, ...more } = extra(r);
    // A document deleted since the query ran has no text to show: its path still does.
    // (A passage is in characters; the text is read in bytes: up to 4 a character.)
    let damaged: string | undefined;
    let body = doc ? await documentText(reader, st, doc, r.media_type, passage ? Math.min(passage.end * 4, INDEXED_TEXT_MAX) : SNIPPET_SOURCE_MAX, (m) => (damaged = m)) : '';
    if (passage) body = body.slice(passage.start, passage.end);
    let snippet = passage ? passageSnippet(body, terms) : makeSnippet([body, meta, tags, r.path], terms);
    // Nothing marked in the first SNIPPET_SOURCE_MAX of a longer text: where a word first is.
    if (!passage && doc && damaged === undefined && doc.size > SNIPPET_SOURCE_MAX && !snippet.includes('<mark>')) {
      snippet = snippetPast(await documentText(reader, st, doc, r.media_type, INDEXED_TEXT_MAX, (m) => (damaged = m)), terms) || snippet;
    }
    hits.push({
      digest: formatDigest(r.digest),
      path: r.path,
      mediaType: r.media_type,
      size: r.size,
      score: r.score,
      snippet,
      ...(damaged !== undefined ? { damaged } : {}),
      ...more,
    });
  }
  return hits;
}

/** Words of a query weighed for its snippets at most: each costs a walk of its documents in the index (~0.8 ms for a common word in 50,000). */
const WEIGHED_MAX = 8;

/** The terms weighed by rarity (snippet.ts weighTerms) when there are two to WEIGHED_MAX of them; else counted alike. */
function weighed(db: SqlDatabase, terms: SnippetTerm[], docsHolding: ((term: string) => number) | undefined): SnippetTerm[] {
  if (!docsHolding || terms.length < 2 || terms.length > WEIGHED_MAX) return terms;
  return db.read(() => weighTerms(terms, docsHolding));
}

/** A semantic hit's chunk as a snippet: its start, escaped, query words marked where they occur. */
function passageSnippet(text: string, terms: SnippetTerm[]): string {
  const cut = text.length > 300 ? `${text.slice(0, 300).replace(/\s+\S*$/, '')}…` : text;
  return makeSnippet([cut], terms) || escapeHtml(cut.replace(/\s+/g, ' ').trim());
}
