/**
 * Kura's query language (docs/HTTP.md "Query language", decision 0054): any string is words,
 * and a few operators are honoured where typed deliberately and well formed —
 *
 *   "a phrase"   prefix*   a AND b   a OR b   a NOT b   -word   path:P  tag:T  type:M
 *   -path:P  -tag:T  -type:M  (and NOT before a filter: excluded)
 *
 * Nothing a person types is an error. Operator syntax that is not well formed (an unbalanced
 * quote, `AND` with nothing after it, a `-` alone) falls back to plain words, and the parse
 * says so (`fallbacks`); a query with nothing to search for parses to no expression, which
 * finds nothing. The parse is compiled to FTS5 (fts.ts) with every term quoted, so no user
 * text reaches FTS5's parser raw.
 */
import { STOP_WORDS } from './stop-words.js';
import { fold, hasUnspaced, segmentRun, WORD_CHAR } from './words.js';

/** One searchable unit: a word, a word's prefix, or a phrase (its text as typed). */
export type Term = { kind: 'word' | 'prefix' | 'phrase'; text: string };
/** What a prefix the stemmer would cut is searched as (prefixes.ts): a word, or a term as a prefix. */
export type PrefixTerm = { text: string; prefix: boolean };

/**
 * What the query asks for. Juxtaposition is OR (a question's words: any of them, BM25 ranks
 * documents matching more and rarer ones first); AND binds tighter than OR, NOT tighter than
 * AND (`a b AND c NOT d` = a OR (b AND (c NOT d))), as in FTS5.
 */
export type Expr = Term | { kind: 'or' | 'and'; items: Expr[] } | { kind: 'not'; left: Expr; right: Expr };

export interface Filters {
  /** Path prefixes: an entry's path starts with one of them. */
  path: string[];
  /** Tags: an entry has one of them. */
  tag: string[];
  /** Media types: `text/markdown`, `text/*`, or a subtype alone (`pdf` = any type whose subtype is pdf). */
  type: string[];
  /**
   * Excluded (`-path:P`, `NOT tag:T`, `-type:M`): an entry matching any of them is left out (one
   * without a path or a media type is not excluded by a path or a type). Absent when there are none.
   */
  not?: { path: string[]; tag: string[]; type: string[] };
}

export interface ParsedQuery {
  /** What to match; null when nothing in the query is searchable (no hits, not an error). */
  expr: Expr | null;
  /** `-word` and leading `NOT word`: a matching entry must not contain any of them. */
  exclude: Term[];
  filters: Filters;
  /**
   * What semantic search embeds: the query as typed, stop words and order kept, with only its
   * filters, exclusions (`-word`, `NOT word`, a NOT's right side) and operators taken out.
   */
  text: string;
  /** How the query was read, in this grammar's own canonical form. */
  parsedAs: string;
  /** Operator syntax that was not well formed and was read as plain words instead (or left out, or did not group), each said once. */
  fallbacks: string[];
  /**
   * Misspelt words searched as the index's nearest (typos.ts): what was typed, and the word
   * searched — a document's own where one was read (`held`), else one the index reads the same.
   */
  typos?: { typed: string; term: string; held?: true }[];
  /**
   * Prefixes the index's stemmer would cut shorter (`bus*` is `bu*` to it, finding budget and
   * bug), each with the index's terms to search instead (prefixes.ts); keyed by the typed prefix.
   */
  prefixTerms?: ReadonlyMap<string, readonly PrefixTerm[]>;
}

/** Terms searched at most; later ones are left out and `fallbacks` says so. */
export const QUERY_TERMS_MAX = 256;
const FIELDS = new Set(['path', 'tag', 'type']);
const OPERATORS = new Set(['AND', 'OR', 'NOT']);
/** A word after `-` that is rather a command's flag (one or two letters or digits). */
const FLAG = /^[A-Za-z0-9]{1,2}$/;

/** A token and where it is in the query (`start`, `end`: what semantic search leaves out of the text). */
type Token = { start: number; end: number } & (
  | { t: 'term'; term: Term; negated: boolean }
  | { t: 'op'; op: 'AND' | 'OR' | 'NOT' }
  | { t: 'filter'; field: 'path' | 'tag' | 'type'; value: string; negated: boolean }
);

/** Whether a term holds anything the index can match (a letter or digit). */
const searchable = (text: string) => WORD_CHAR.test(text);

/**
 * Splits the query into tokens: quoted phrases, field filters, operators, words. Malformed
 * operator syntax is noted in `fallbacks` and read as words.
 */
/**
 * Typographic double quotes (what phones and word processors type for `"`: “…”, „…“, «…»):
 * a phrase's quotes as `"` is (`“it’s ready”` was read as words, `ready”` among them: a trial).
 * One UTF-16 unit each, as `"`: the tokens' places in the query stay where they are.
 */
const CURLY_QUOTES = /[\u201c\u201d\u201e\u201f\u00ab\u00bb]/g;

function lex(typed: string, fallbacks: Set<string>): Token[] {
  const query = typed.replace(CURLY_QUOTES, '"');
  const tokens: Token[] = [];
  const n = query.length;
  let i = 0;
  const isSpace = (c: string | undefined) => c === undefined || /\s/u.test(c);
  // A `-` before a quote that never closes negates the word after it (`-"abc def`: -abc def).
  let carried = false;
  let carriedFrom = 0;
  while (i < n) {
    if (isSpace(query[i])) {
      i++;
      continue;
    }
    // `-` at the start of a token negates what follows it (a word, a prefix, a phrase or a filter).
    let negated: boolean = carried;
    const start = carried ? carriedFrom : i;
    carried = false;
    if (query[i] === '-' && i + 1 < n && !isSpace(query[i + 1]) && query[i + 1] !== '-') {
      negated = true;
      i++;
    } else if (query[i] === '-') {
      // `-` alone, or `--x`: punctuation, not an exclusion.
      if (i + 1 >= n || isSpace(query[i + 1])) fallbacks.add('a "-" not followed by a word was left out');
    }
    // `("a phrase" OR b)`: a parenthesis before a quote is punctuation (it hid the phrase).
    if (query[i] === '(') {
      let q = i;
      while (query[q] === '(') q++;
      if (query[q] === '"' && query.indexOf('"', q + 1) > 0) i = q;
    }
    if (query[i] === '"') {
      const close = query.indexOf('"', i + 1);
      if (close < 0) {
        fallbacks.add('an unbalanced quote was ignored: the words after it were read as words');
        i++;
        carried = negated;
        carriedFrom = start;
        continue;
      }
      const text = query.slice(i + 1, close);
      i = close + 1;
      if (searchable(text)) {
        // `"a phrase"*`: FTS5's phrase prefix.
        const prefix = query[i] === '*';
        if (prefix) while (query[i] === '*') i++;
        tokens.push({ t: 'term', term: { kind: prefix ? 'prefix' : 'phrase', text }, negated, start, end: i });
      } else if (text.trim()) fallbacks.add(`the phrase ${JSON.stringify(text)} has no letters or digits and was left out`);
      continue;
    }
    let end = i;
    while (end < n && !isSpace(query[end])) end++;
    let word = query.slice(i, end);
    // A field filter: `path:`, `tag:` or `type:` and a value (quoted, or up to the next space);
    // after a `-`, excluded (`-path:src/`: it was read as the word "path:src/" to leave out).
    const field = /^(path|tag|type):/.exec(word);
    if (field && FIELDS.has(field[1]!)) {
      const at = i + field[0].length;
      let value: string;
      if (query[at] === '"' && query.indexOf('"', at + 1) > 0) {
        const close = query.indexOf('"', at + 1);
        value = query.slice(at + 1, close);
        end = close + 1;
      } else value = word.slice(field[0].length);
      if (value.trim()) {
        tokens.push({ t: 'filter', field: field[1] as 'path' | 'tag' | 'type', value: value.trim(), negated, start, end });
        i = end;
        continue;
      }
      fallbacks.add(`"${field[0]}" without a value was read as a word`);
    }
    i = end;
    if (!negated && OPERATORS.has(word)) {
      tokens.push({ t: 'op', op: word as 'AND' | 'OR' | 'NOT', start, end });
      continue;
    }
    // `word*` (one or more stars) is a prefix when there is a word before the stars.
    const stars = /\*+$/.exec(word);
    if (stars) {
      const stem = word.slice(0, stars.index);
      if (searchable(stem)) {
        tokens.push({ t: 'term', term: { kind: 'prefix', text: stem }, negated, start, end });
        continue;
      }
      word = stem;
      if (!searchable(word)) fallbacks.add('a "*" not after a word was left out');
    }
    // `-r`, `-n`, `-rf`: a command's flags, not words to leave out (`grep -r recursive` left
    // grep's manual out, the one page that answers, without a word: a trial). Read as words.
    if (negated && FLAG.test(word)) {
      fallbacks.add(`"-${word}" looks like a command's flag and was read as the word ${JSON.stringify(word)} (to leave out documents with a word, write -word of 3 letters or more, or NOT word)`);
      negated = false;
    }
    // `harbour's` is the word (as Lucene's English possessive filter reads it): to the index it
    // is the phrase "harbour s", which no other form of the word holds — `harbour's` and
    // `Harbour’s` found nothing in a store of harbour notes (a trial).
    const possessive = POSSESSIVE.exec(word);
    if (possessive) word = possessive[1]! + possessive[2]!;
    // `v6.17.0` is the version 6.17.0, found written either way (exact-terms.ts): as written,
    // the word `v6` found 6.17.0 nowhere (a trial).
    const version = V_VERSION.exec(word);
    if (version) word = version[1]! + version[2]! + version[3]!;
    if (searchable(word)) tokens.push({ t: 'term', term: { kind: 'word', text: word }, negated, start, end });
    else if (negated) fallbacks.add(`"-${word}" has no letters or digits and was left out`);
  }
  return tokens;
}

/** A version written with a `v` (`v6.17.0`, `(v2.0)`): the punctuation around it, and the version. */
const V_VERSION = /^([^\p{L}\p{N}]*)[vV](\d+(?:\.\d+)+)([^\p{L}\p{N}]*)$/u;

/** A word ending in `'s` or `’s` (punctuation after it kept): its letters before, then that punctuation. */
const POSSESSIVE = /^([^'’]*\p{L})['’][sS]([^\p{L}\p{N}]*)$/u;

/**
 * A bare word in a script written without spaces (`图书馆在哪里`) is a question's words: its
 * segments, any of them — but a run the dictionary cuts in two at most (`图书馆` is 图书 馆 to
 * ICU, `人工智能` 人工 智能, `ข้าวผัด` ข้าว ผัด) is one word, its segments a phrase: any of them
 * found 博物馆 and 美术馆 for 图书馆 (馆 alone), and a smartphone (智能手机) for 人工智能 (a
 * trial). A phrase or a word in other scripts stays one term (`e-mail`, `10:30` and `U.S.A.` are
 * phrases of their tokens to the index, as they should be).
 */
const COMPOUND_SEGMENTS = 2;
/** A lone Hangul syllable, punctuation around it aside. */
const HANGUL_SYLLABLE = /^[^\p{L}\p{N}]*\p{Script=Hangul}[^\p{L}\p{N}]*$/u;

function unitOf(term: Term): Expr | null {
  // One Hangul syllable (`책`, book) is a word the index holds only inside its pairs (`책을` is
  // the pair 책을: words.ts hangulPairs): found as the pairs it begins.
  if (term.kind === 'word' && HANGUL_SYLLABLE.test(term.text)) return { kind: 'prefix', text: term.text.replace(/[^\p{L}]/gu, '') };
  if (term.kind !== 'word' || !hasUnspaced(term.text)) return term;
  const words: Term[] = [];
  for (const piece of term.text.split(/[^\p{L}\p{N}\p{M}]+/u)) {
    if (!piece) continue;
    if (!hasUnspaced(piece)) {
      if (searchable(piece)) words.push({ kind: 'word', text: piece });
      continue;
    }
    const segments = segmentRun(piece).filter(searchable);
    if (segments.length <= COMPOUND_SEGMENTS) {
      if (segments.length) words.push({ kind: 'word', text: piece }); // (the phrase of its segments: fts.ts)
      continue;
    }
    words.push(...segments.map((w): Term => ({ kind: 'word', text: w })));
  }
  if (words.length === 0) return null;
  return words.length === 1 ? words[0]! : { kind: 'or', items: words };
}

/** Parses any string; never throws. */
export function parseQuery(query: string): ParsedQuery {
  const fallbacks = new Set<string>();
  const filters: Filters = { path: [], tag: [], type: [] };
  const exclude: Term[] = [];
  const tokens = lex(query, fallbacks);
  const source = (k: number) => query.slice(tokens[k]!.start, tokens[k]!.end);
  // Tokens that are not the query's words — filters, exclusions, operators (and a NOT's right
  // side): semantic search embeds the query without them (semanticText).
  const notWords = new Set<number>();
  // Filters and exclusions (by token), which hold for every hit whatever an operator beside
  // them says, and how a fallback names each.
  const constraints = new Map<number, string>();
  // `NOT` right before a filter excludes what the filter names: `TODO NOT path:src/` is
  // `TODO -path:src/` (it was left at the end of the words and read as one, the filter applied).
  const consumed = new Set<number>();
  for (let k = 0; k + 1 < tokens.length; k++) {
    const op = tokens[k]!;
    const f = tokens[k + 1]!;
    if (op.t !== 'op' || op.op !== 'NOT' || f.t !== 'filter' || f.negated) continue;
    f.negated = true;
    consumed.add(k);
    notWords.add(k);
    constraints.set(k + 1, `the exclusion NOT ${source(k + 1)}`);
  }
  // The sequence of units and the operators between them, filters and exclusions taken out.
  // A unit keeps the term as typed: an operator's operand is that term (`图书馆 AND 文化`: the
  // phrase 图书 馆, not either of its words), a bare word the question's words unitOf makes.
  type Op = { t: 'op'; op: 'AND' | 'OR' | 'NOT'; tok: number };
  const seq: ({ t: 'unit'; e: Expr; typed: Term; tok: number } | Op)[] = [];
  tokens.forEach((tok, k) => {
    if (consumed.has(k)) return;
    if (tok.t === 'filter') {
      notWords.add(k);
      if (tok.negated) {
        (filters.not ??= { path: [], tag: [], type: [] })[tok.field].push(tok.value);
        if (!constraints.has(k)) constraints.set(k, `the exclusion ${source(k)}`);
      } else {
        filters[tok.field].push(tok.value);
        constraints.set(k, `the filter ${source(k)}`);
      }
    } else if (tok.t === 'op') seq.push({ t: 'op', op: tok.op, tok: k });
    else if (tok.negated) {
      exclude.push(tok.term);
      notWords.add(k);
      constraints.set(k, `the exclusion ${source(k)}`);
    } else {
      const e = unitOf(tok.term);
      if (e) seq.push({ t: 'unit', e, typed: tok.term, tok: k });
    }
  });
  if (exclude.length > QUERY_TERMS_MAX) {
    exclude.length = QUERY_TERMS_MAX;
    fallbacks.add(`only the first ${QUERY_TERMS_MAX} exclusions were searched`);
  }
  /**
   * What stands beside operator token `k` on one side, where no unit does: a filter or an
   * exclusion (`constraint`: how it reads), or nothing — and where the operator is, as said.
   */
  const beside = (k: number, dir: -1 | 1): { constraint?: string; where: string } => {
    let j = k + dir;
    while (consumed.has(j)) j += dir;
    const c = constraints.get(j);
    if (c !== undefined) return { constraint: c, where: `${dir < 0 ? 'after' : 'before'} ${c}` };
    if (tokens[j] === undefined) return { where: dir < 0 ? 'at the start' : 'at the end' };
    if (tokens[j]!.t === 'op') return { where: dir < 0 ? 'after another operator' : 'before another operator' };
    return { where: `${dir < 0 ? 'after' : 'before'} ${JSON.stringify(source(j))}, which has nothing to search for` };
  };
  // An operator is honoured between two units (a leading NOT: before one, an exclusion);
  // beside a filter or an exclusion it is what they are (AND) or left out (OR, NOT), and said;
  // otherwise it is read as the word it spells.
  const items: ({ t: 'unit'; e: Expr; typed?: Term } | Op)[] = [];
  for (let k = 0; k < seq.length; k++) {
    const s = seq[k]!;
    if (s.t === 'unit') {
      items.push(s);
      continue;
    }
    // `a AND NOT b` is `a NOT b`, as people write it (the AND was read as the word "and").
    const following = seq[k + 1];
    if (s.op === 'AND' && following?.t === 'op' && following.op === 'NOT') {
      notWords.add(s.tok);
      continue;
    }
    const before = items.length > 0 && items[items.length - 1]!.t === 'unit';
    const next = seq[k + 1];
    const after = next !== undefined && next.t === 'unit';
    if (s.op === 'NOT' && !before && after && items.length === 0) {
      exclude.push(next.typed); // as `-word`
      notWords.add(s.tok).add(next.tok);
      constraints.set(next.tok, `the exclusion NOT ${source(next.tok)}`);
      k++;
      continue;
    }
    if (before && after) {
      // Both operands as typed.
      const last = items[items.length - 1] as { t: 'unit'; e: Expr; typed?: Term };
      if (last.typed) last.e = last.typed;
      next.e = next.typed;
      items.push(s);
      notWords.add(s.tok);
      if (s.op === 'NOT') notWords.add(next.tok);
      continue;
    }
    const sides = [before ? undefined : beside(s.tok, -1), after ? undefined : beside(s.tok, 1)].filter((x) => x !== undefined);
    const lacking = sides.find((x) => x.constraint === undefined);
    if (lacking === undefined) {
      // Beside filters or exclusions alone, which hold for every hit whatever joins them: an
      // AND says just that (`TODO AND path:src/`); an OR cannot make one an alternative, nor
      // a NOT exclude an exclusion. (Each said "at the end" or "at the start": a trial.)
      notWords.add(s.tok);
      const c = sides[0]!;
      const what = c.constraint!.startsWith('the filter') ? 'a filter' : 'an exclusion';
      if (s.op === 'OR') fallbacks.add(`"OR" ${c.where} was left out: ${what} holds for every hit, so it is not an alternative`);
      else if (s.op === 'NOT') fallbacks.add(`"NOT" ${c.where} was left out: ${what} holds for every hit, it is excluded already`);
      continue;
    }
    fallbacks.add(`"${s.op}" ${lacking.where} was read as a word`);
    items.push({ t: 'unit', e: { kind: 'word', text: s.op.toLowerCase() } });
  }
  // Operators that lost their operand to a fallback (`a AND OR b`) read as words too.
  const clean: typeof items = [];
  for (let k = 0; k < items.length; k++) {
    const s = items[k]!;
    if (s.t === 'op' && (clean.length === 0 || clean[clean.length - 1]!.t !== 'unit' || items[k + 1]?.t !== 'unit')) {
      fallbacks.add(`"${s.op}" next to another operator was read as a word`);
      notWords.delete(s.tok);
      clean.push({ t: 'unit', e: { kind: 'word', text: s.op.toLowerCase() } });
    } else clean.push(s);
  }
  // Parentheses do not group (they are the words' punctuation, which the index does not read):
  // where an operator is honoured among words they open or close, say so — `harbour AND
  // (ferry OR kayak)` is (harbour AND ferry) OR kayak, and was shown as if grouped (a trial).
  if (clean.some((x) => x.t === 'op') && query.split(/\s+/u).some((w) => groupsAsTyped(w.replace(/^-/, '')))) {
    fallbacks.add('parentheses do not group: they were read as part of the words beside them, and the operators bound as always (NOT, then AND, then OR)');
  }
  const capped = capTerms(clean, fallbacks);
  const words = withoutStopWords(build(capped));
  const expr = asQuestion(words);
  return {
    expr,
    exclude,
    filters,
    text: semanticText(query, tokens, notWords, expr),
    parsedAs: render(expr, exclude, filters),
    fallbacks: [...fallbacks],
  };
}

/** Parentheses in `text` (a word as typed) that open or close at its edge without their pair: `(ferry`, `kayak)`, `(`. */
function groupsAsTyped(text: string): boolean {
  const open = text.split('(').length - 1;
  const close = text.split(')').length - 1;
  return (text.startsWith('(') && open > close) || (text.endsWith(')') && close > open);
}

/** Terms in an expression. */
const termCount = (e: Expr): number => ('text' in e ? 1 : e.kind === 'not' ? termCount(e.left) + termCount(e.right) : e.items.reduce((n, x) => n + termCount(x), 0));

/**
 * Copies of one term a query counts at most. A word said again counts again — FTS5's bm25()
 * sums each of a query's phrases, so a question that says "titles" three times weighs it three
 * times, as BM25 with query term frequency does (CISI, keyword: nDCG@10 0.342 with repeats
 * dropped, 0.391 kept; decision 0054) — but bm25()'s work for a document grows with the
 * phrases times their instances in it: a word pasted 256 times took seconds on 2,000 documents.
 */
export const TERM_REPEATS_MAX = 5;

/**
 * Keeps the first QUERY_TERMS_MAX terms (a pasted page is thousands of words; a unit of many —
 * an unspaced paragraph's words — is cut to the room left), and of each term its first
 * TERM_REPEATS_MAX copies.
 */
function capTerms<T extends { t: 'unit'; e: Expr } | { t: 'op'; op: string }>(items: T[], fallbacks: Set<string>): T[] {
  const out: T[] = [];
  let terms = 0;
  let dropped = 0;
  const copies = new Map<string, number>();
  const again = (e: Expr) => {
    if (!('text' in e)) return false;
    const key = `${e.kind} ${fold(e.text)}`;
    const n = (copies.get(key) ?? 0) + 1;
    copies.set(key, n);
    return n > TERM_REPEATS_MAX;
  };
  for (const s of items) {
    if (s.t !== 'unit') {
      out.push(s);
      continue;
    }
    let e = s.e;
    if ('items' in e && e.kind === 'or') {
      // A unit of words (unitOf): each word counts alone.
      let kept = e.items.filter((x) => !again(x));
      if (terms + kept.length > QUERY_TERMS_MAX) {
        dropped++;
        kept = kept.slice(0, QUERY_TERMS_MAX - terms);
      }
      if (kept.length === 0) continue;
      e = kept.length === 1 ? kept[0]! : { kind: 'or', items: kept };
    } else if (again(e)) continue;
    const n = termCount(e);
    if (terms + n > QUERY_TERMS_MAX) {
      dropped++;
      continue;
    }
    terms += n;
    out.push(e === s.e ? s : { ...s, e });
  }
  if (dropped > 0) fallbacks.add(`only the first ${QUERY_TERMS_MAX} terms were searched`);
  // Dropping units can leave an operator without an operand: drop those too.
  return out.filter((s, k) => s.t !== 'op' || (out[k - 1]?.t === 'unit' && out[k + 1]?.t === 'unit'));
}

/** Precedence climbing over a well-formed sequence: OR (or juxtaposition) < AND < NOT. */
function build(items: ({ t: 'unit'; e: Expr } | { t: 'op'; op: string })[]): Expr | null {
  const ors: Expr[] = [];
  let k = 0;
  const unit = (): Expr => (items[k++] as { e: Expr }).e;
  const notExpr = (): Expr => {
    let left = unit();
    while (k < items.length && items[k]!.t === 'op' && (items[k] as { op: string }).op === 'NOT') {
      k++;
      left = { kind: 'not', left, right: unit() };
    }
    return left;
  };
  const andExpr = (): Expr => {
    const parts = [notExpr()];
    while (k < items.length && items[k]!.t === 'op' && (items[k] as { op: string }).op === 'AND') {
      k++;
      parts.push(notExpr());
    }
    return parts.length === 1 ? parts[0]! : { kind: 'and', items: parts };
  };
  while (k < items.length) {
    if (items[k]!.t === 'op') {
      k++; // OR (juxtaposition means the same)
      continue;
    }
    ors.push(andExpr());
  }
  if (ors.length === 0) return null;
  // Flatten nested ORs (a CJK run's words) into the top level.
  const flat = ors.flatMap((e) => ('kind' in e && e.kind === 'or' ? e.items : [e]));
  return flat.length === 1 ? flat[0]! : { kind: 'or', items: flat };
}

/**
 * A question's plain words without its stop words (stop-words.ts), unless nothing else is
 * left. Only the top level's bare words go: in a phrase or next to an operator, every word
 * was typed deliberately.
 */
function withoutStopWords(expr: Expr | null): Expr | null {
  if (!expr || !('items' in expr) || expr.kind !== 'or') return expr;
  const stop = (e: Expr) => 'text' in e && e.kind === 'word' && isStopWord(e.text);
  const kept = expr.items.filter((e) => !stop(e));
  if (kept.length === 0 || kept.length === expr.items.length) return expr;
  return kept.length === 1 ? kept[0]! : { kind: 'or', items: kept };
}

/** A stop word (`the`, `What?`), or a negated auxiliary (`don't`, `isn’t`: all of them are). */
function isStopWord(word: string): boolean {
  const w = fold(word).replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
  // Apostrophes inside fold away (it's: its); other marks keep the word what it is — `O(n)` and
  // `I.T.` read as "on" and "it" and were dropped as stop words (a trial).
  return STOP_WORDS.has(w.replace(/['’]/gu, '')) || /^\p{L}+n['’]t$/u.test(w);
}

/** Pieces of a word or phrase that count as a question's words: two characters or more, not stop words. */
function questionPieces(text: string): Term[] {
  return text
    .split(/[^\p{L}\p{N}\p{M}]+/u)
    .filter((w) => [...w].length > 1 && searchable(w) && !isStopWord(w))
    .map((w) => ({ kind: 'word', text: w }));
}

/** Punctuation inside a word that joins words of a sentence (`high-speed`, `user's`), not an identifier's (`10:30`, `x.org`). */
const JOINED = /^[\p{L}\p{N}\p{M}]+(?:[-‐‑'’][\p{L}\p{N}\p{M}]+)+$/u;

/** Terms at the top level from which a query reads as a question (asQuestion). */
export const QUESTION_TERMS = 4;

/**
 * A question — QUESTION_TERMS or more words at the top level, stop words out — counts words the
 * way the reference BM25s tokenize it (decision 0054's amendment, measured on CISI, Cranfield
 * and CACM): a hyphenated or apostrophised word is its words (`high-speed` → high, speed;
 * `user's` → user — Lucene's query parser reads it so by default), unless none of them is two
 * characters or more (`I'm` stays as typed) or it has a digit (`utf-8`, `covid-19`: names,
 * found as written — exact-terms.ts); and a quoted phrase counts its words as well as
 * itself, so a near miss of a quoted title still scores while the exact phrase scores more.
 * Shorter queries, and terms next to an operator, stay as typed: `e-mail alerts` keeps the
 * phrase "e mail", `"harbour master" boats` finds the phrase or boats.
 */
function asQuestion(expr: Expr | null): Expr | null {
  if (!expr || !('items' in expr) || expr.kind !== 'or' || expr.items.length < QUESTION_TERMS) return expr;
  const items: Expr[] = [];
  // Terms added stay within QUERY_TERMS_MAX too (a pasted page in quotes is thousands of words).
  let room = Math.max(0, QUERY_TERMS_MAX - termCount(expr));
  for (const e of expr.items) {
    if (!('text' in e) || e.kind === 'prefix') items.push(e);
    else if (e.kind === 'phrase') {
      const pieces = questionPieces(e.text).slice(0, room);
      room -= pieces.length;
      items.push(e, ...pieces);
    } else {
      const core = e.text.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}\p{M}]+$/gu, '');
      // (A word with a digit is a name, not words: `utf-8`, `covid-19`, `x86-64` — exact-terms.ts.)
      const pieces = JOINED.test(core) && !/\p{N}/u.test(core) ? questionPieces(core) : [];
      if (pieces.length === 0 || pieces.length - 1 > room) items.push(e);
      else {
        room -= pieces.length - 1;
        items.push(...pieces);
      }
    }
  }
  return { kind: 'or', items };
}

/**
 * What semantic search embeds: the query as typed — stop words, word order and punctuation
 * kept, as the model reads a question best — with only the tokens that are not its words
 * (`notWords`: filters, exclusions, operators, a NOT's right side) taken out. (Rebuilt from the
 * parsed terms whenever one was there, stop words gone, it embedded `often car serviced` for
 * `how often should the car be serviced path:notes/`, which fell below the floor: a trial.)
 */
function semanticText(query: string, tokens: Token[], notWords: Set<number>, expr: Expr | null): string {
  if (!expr) return '';
  if (notWords.size === 0) return query.trim();
  const kept: string[] = [];
  let at = 0;
  tokens.forEach((t, k) => {
    if (!notWords.has(k)) return;
    kept.push(query.slice(at, t.start));
    at = t.end;
  });
  kept.push(query.slice(at));
  return kept
    .map((s) => s.trim())
    .filter(Boolean)
    .join(' ');
}

/**
 * A word as parsedAs shows it: without the parentheses it opens or closes at its edges with no
 * pair (the index reads no punctuation; and shown, `harbour AND (ferry OR kayak)` looked
 * grouped, which it was not: a trial) — unless what is left would read as other syntax.
 */
function shownWord(text: string): string {
  let t = text;
  const count = (c: string) => t.split(c).length - 1;
  while (t.startsWith('(') && count('(') > count(')')) t = t.slice(1);
  while (t.endsWith(')') && count(')') > count('(')) t = t.slice(0, -1);
  if (t === text || !searchable(t) || OPERATORS.has(t) || /^[-"]|\*$|^(path|tag|type):/.test(t)) return text;
  return t;
}

const quoteTerm = (t: Term) => (t.kind === 'phrase' ? `"${t.text}"` : t.kind === 'prefix' ? `${/\s/.test(t.text) ? `"${t.text}"` : shownWord(t.text)}*` : shownWord(t.text));

/**
 * The canonical form of a parse: terms, operators in capitals (an AND or a NOT among
 * alternatives in parentheses: `x OR (y AND z)`, as it binds), exclusions, filters, and
 * excluded filters.
 */
export function render(expr: Expr | null, exclude: Term[], filters: Filters): string {
  // `inside`: the kind of the expression around (null at the top); a NOT's right side is always parenthesised when compound.
  const out = (e: Expr, inside: Expr['kind'] | 'right' | null): string => {
    if ('text' in e) return quoteTerm(e);
    const s = e.kind === 'not' ? `${out(e.left, 'not')} NOT ${out(e.right, 'right')}` : e.items.map((x) => out(x, e.kind)).join(e.kind === 'or' ? ' OR ' : ' AND ');
    return inside !== null && inside !== e.kind ? `(${s})` : s;
  };
  const parts = expr ? [out(expr, null)] : [];
  for (const t of exclude) parts.push(`-${quoteTerm(t)}`);
  const value = (v: string) => (/\s|"/.test(v) ? JSON.stringify(v) : v);
  for (const f of ['path', 'tag', 'type'] as const) for (const v of filters[f]) parts.push(`${f}:${value(v)}`);
  for (const f of ['path', 'tag', 'type'] as const) for (const v of filters.not?.[f] ?? []) parts.push(`-${f}:${value(v)}`);
  return parts.join(' ');
}
