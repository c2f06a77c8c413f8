/**
 * A parsed query (grammar.ts) as an FTS5 MATCH expression and as SQL filters. Every term is a
 * quoted FTS5 string, so nothing a person typed is read by FTS5's parser as syntax; inside the
 * quotes FTS5's tokenizer splits it as it split the indexed text (`e-mail` is the phrase
 * "e mail"), and words of unspaced scripts are spaced as the index's were (words.ts).
 */
import type { Expr, Filters, ParsedQuery, Term } from './grammar.js';
import { spaceWords } from './words.js';
import { mediaTypesSql } from './media-type-filter.js';
import { VERSION } from './exact-terms.js';

// A NUL ends FTS5's reading of the expression (an unterminated string): it separates words, like a space.
const quoted = (text: string) => `"${spaceWords(text).replace(/\0/g, ' ').trim().replace(/"/g, '""')}"`;
/** A version number asked for (`1.0.2`) is found written `v1.0.2` too: one word `v1` to the index (exact-terms.ts). */
function term(t: Term, prefixTerms?: ParsedQuery['prefixTerms']): string {
  if (t.kind === 'prefix') {
    // A prefix the stemmer would cut: the word itself (its stem) and each index term starting
    // with the prefix (as a prefix: the stemmer keeps those at least as long as the prefix).
    const instead = prefixTerms?.get(t.text);
    if (instead) return `(${[quoted(t.text), ...instead.map((x) => (x.prefix ? `${quoted(x.text)} *` : quoted(x.text)))].join(' OR ')})`;
    return `${quoted(t.text)} *`;
  }
  const core = t.kind === 'word' ? t.text.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '') : '';
  return VERSION.test(core) ? `(${quoted(core)} OR ${quoted(`v${core}`)})` : quoted(t.text);
}

function expr(e: Expr, prefixTerms?: ParsedQuery['prefixTerms']): string {
  if ('text' in e) return term(e, prefixTerms);
  if (e.kind === 'not') return `(${expr(e.left, prefixTerms)} NOT ${expr(e.right, prefixTerms)})`;
  return `(${e.items.map((x) => expr(x, prefixTerms)).join(e.kind === 'or' ? ' OR ' : ' AND ')})`;
}

/** The MATCH expression of a parse, or null when it has nothing to match (no hits). */
/** Words a question needs (and may have at most) for its whole text to be looked for as a phrase. */
export const PHRASE_WORDS_MIN = 3;
const PHRASE_WORDS_MAX = 32;

/**
 * A question of plain words (no operators, phrases, prefixes or exclusions typed), of
 * PHRASE_WORDS_MIN to PHRASE_WORDS_MAX words of ASCII, as one phrase: its words in a row, stop
 * words too. Documents holding it rank first (keyword.ts): a line pasted from a manual —
 * `Keep (don't delete) input files` — ranked gzip's manual 16th under pages holding more of
 * its common words (a trial). Null for any other query. (A question's words seldom stand in a
 * row in a text: CISI's 76 questions hold none, so their ranking is BM25's alone.)
 */
export function toPhraseMatch(q: ParsedQuery): string | null {
  if (!q.expr || q.exclude.length || !/^[\x20-\x7e]*$/.test(q.text)) return null;
  const plain = 'text' in q.expr ? q.expr.kind === 'word' : q.expr.kind === 'or' && q.expr.items.every((x) => 'text' in x && x.kind === 'word');
  if (!plain) return null;
  const words = q.text.split(WORD_SPLIT).filter(Boolean);
  return words.length >= PHRASE_WORDS_MIN && words.length <= PHRASE_WORDS_MAX ? quoted(words.join(' ')) : null;
}

export function toMatch(q: ParsedQuery): string | null {
  if (!q.expr) return null;
  const match = expr(q.expr, q.prefixTerms);
  return q.exclude.length ? `${match} NOT (${q.exclude.map((t) => term(t, q.prefixTerms)).join(' OR ')})` : match;
}

/**
 * A MATCH expression that a text holding several texts' lines matches whenever one of those
 * texts matches the parse (a history span's distinct lines: decision 0056): exclusions and
 * NOT's right sides are left out, and a term of several words is the AND of them — the union
 * keeps each line whole but not the lines' order, and a phrase may cross a line's end. Every
 * part is cut where FTS5's tokenizer surely cuts words (WORD_SPLIT), so each stays within one
 * line of the text it came from (a part FTS5 cuts further, at a character outside ASCII, stays
 * a phrase: found unless a line ends inside it).
 */
export function toSupersetMatch(q: ParsedQuery): string | null {
  return q.expr ? superset(q.expr) : null;
}

/**
 * Where a term is cut into words that FTS5's tokenizer surely cuts too: white space and ASCII
 * other than letters and digits. (Elsewhere its tables decide — Unicode 6.1's categories, with
 * characters assigned since, emoji among them, kept inside words — so a part left whole is
 * quoted as it was typed and FTS5 cuts it as it cut the text.)
 */
export const WORD_SPLIT = /[\s\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+/u;

function superset(e: Expr): string {
  if ('text' in e) {
    const parts = spaceWords(e.text).split(WORD_SPLIT).filter(Boolean);
    if (parts.length <= 1) return term(e);
    return `(${parts.map((p, i) => (e.kind === 'prefix' && i === parts.length - 1 ? `${quoted(p)} *` : quoted(p))).join(' AND ')})`;
  }
  if (e.kind === 'not') return superset(e.left);
  return `(${e.items.map(superset).join(e.kind === 'or' ? ' OR ' : ' AND ')})`;
}

/** A MATCH expression any of a parse's exclusions matches (null: it has none). */
export function excludedMatch(q: ParsedQuery): string | null {
  // `-b`, a leading `NOT b`, and the right side of every `a NOT b` the whole query needs (the
  // root, or an AND's part): a semantic hit found by meaning must not hold them either — `dogs
  // NOT puppy` returned the puppy note in semantic and hybrid mode (a trial). A NOT inside an
  // OR holds for its side alone, and excludes nothing from the other.
  const parts = [...q.exclude.map((t) => term(t, q.prefixTerms)), ...(q.expr ? requiredNots(q.expr) : []).map((e) => expr(e, q.prefixTerms))];
  return parts.length ? parts.join(' OR ') : null;
}

/** The right sides of the NOTs a match of `e` must satisfy whichever way it matches. */
function requiredNots(e: Expr): Expr[] {
  if ('text' in e || e.kind === 'or') return [];
  if (e.kind === 'not') return [e.right, ...requiredNots(e.left)];
  return e.items.flatMap(requiredNots);
}

/** `%`, `_` and `\` taken literally in a LIKE pattern (ESCAPE '\'). */

/**
 * SQL conditions on entries `e` for a parse's field filters: each field's values are
 * alternatives (`tag:a tag:b`: either tag), different fields must all hold; and an entry
 * matching any excluded filter (`-path:src/`, `NOT tag:x`, `-type:pdf`) is left out — one
 * without a path, tags or a media type matches none (each condition is false, never NULL).
 */
export function filterSql(f: Filters): { where: string[]; params: string[] } {
  const where: string[] = [];
  const params: string[] = [];
  const add = (field: 'path' | 'tag' | 'type', values: readonly string[], not: boolean) => {
    if (!values.length) return;
    let sql: string;
    if (field === 'path') {
      const ranges = `(${values.map(() => '(e.path >= ? AND e.path < ?)').join(' OR ')})`;
      sql = not ? `(e.path IS NOT NULL AND ${ranges})` : ranges;
      for (const p of values) params.push(p, `${p}\u{10ffff}`);
    } else if (field === 'tag') {
      sql = `EXISTS (SELECT 1 FROM tags t WHERE t.entry_id = e.id AND t.tag IN (${values.map(() => '?').join(', ')}))`;
      params.push(...values);
    } else {
      const t = mediaTypesSql(values);
      sql = t.sql; // (media_type IS NOT NULL AND …)
      params.push(...t.params);
    }
    where.push(not ? `NOT ${sql}` : sql);
  };
  for (const field of ['path', 'tag', 'type'] as const) add(field, f[field], false);
  for (const field of ['path', 'tag', 'type'] as const) add(field, f.not?.[field] ?? [], true);
  return { where, params };
}
