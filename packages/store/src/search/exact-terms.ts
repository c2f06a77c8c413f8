/**
 * A question's identifiers, found as they were written (decision 0068): version numbers
 * (`6.17.0`), names joined by punctuation (`ERR_REQUIRE_ESM`, `node:fs`, `os.path`), names
 * mixing letters and digits (`sha256`) and camelCase names (`useEffect`).
 *
 * The index cuts `6.17.0` into the words `6 17 0`, and FTS5 matches the phrase wherever those
 * words stand in a row: `0.9.0, 0.9.5` held "9.0.0" for it (a trial). A joined identifier is
 * therefore checked against the text — its words with the separators typed, whole at both
 * ends. And an identifier is the part of a question a reader is surest of: hybrid search fuses
 * a third list, the documents that hold the question's identifiers as written (modes.ts), so
 * that the release note for `qs 6.17.0` is not fused down to sixth by documents that only
 * resemble the question (a trial: keyword first, hybrid sixth).
 */
import { render, type Expr, type ParsedQuery, type Term } from './grammar.js';

export interface ExactTerm {
  /** The word or phrase as typed. */
  term: Term;
  /**
   * The index cuts it into several words: a match of them in a row is not yet the term, and
   * `pattern` says whether a text holds it. (A single word needs no check: the index's word is it.)
   */
  joined: boolean;
  /** Finds the term as written, case aside: its separators as typed, not inside a longer name. */
  pattern: RegExp;
}

const WORD = /[\p{L}\p{N}]/u;
const LETTER = /\p{L}/u;
const DIGIT = /\p{N}/u;
/** A separator that makes a name of the words around it wherever it stands. */
const NAME_JOINER = /[._:#@$\\]/;
/** A separator that joins a name only beside digits (`utf-8`, `covid-19`, not `e-mail`). */
const NUMBER_JOINER = /^[-/]$/;
/** Ordinals and decades are words, not names (`2nd`, `1990s`). */
const ORDINAL = /^\p{N}+(st|nd|rd|th|s)$/iu;
/** Only ASCII is checked as written: elsewhere the index folds accents the check would not. */
const ASCII = /^[\x00-\x7f]*$/;

/** Whether a word (no spaces) is an identifier, and its parts: the index's words and what separates them. */
function identifier(word: string): { joined: boolean } | undefined {
  const parts = word.split(/([^\p{L}\p{N}]+)/u).filter(Boolean);
  const tokens = parts.filter((p) => WORD.test(p));
  if (tokens.length === 0) return undefined;
  if (tokens.length > 1) {
    const seps = parts.filter((p) => !WORD.test(p));
    const named = seps.some((s) => NAME_JOINER.test(s)) || (DIGIT.test(word) && seps.some((s) => NUMBER_JOINER.test(s)));
    // (`e.g.`, `U.S.`: abbreviations.)
    if (named && !tokens.every((t) => t.length === 1 && LETTER.test(t))) return { joined: true };
    return undefined;
  }
  const t = tokens[0]!;
  if (LETTER.test(t) && DIGIT.test(t) && !ORDINAL.test(t)) return { joined: false };
  // camelCase: a lower-case start, or two humps (`getElementById`; not `JavaScript`, `GitHub`).
  const humps = t.match(/\p{Ll}\p{Lu}/gu)?.length ?? 0;
  if (humps > 0 && (/^\p{Ll}/u.test(t) || humps >= 2)) return { joined: false };
  return undefined;
}

// (In a `u` pattern `-` outside a class may not be escaped: it is literal there.)
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
// (`_` is kept: `MALLOC_CHECK_` is a name as written, which without its `_` was held to have
// no `_` after it, and found nowhere.)
const EDGE = /^[^\p{L}\p{N}_]+|[^\p{L}\p{N}_]+$/gu;

/**
 * An identifier as a pattern: its words as typed, each separator as typed — a `-` as any dash
 * (`COVID‑19`, `COVID–19`), a `_` also escaped as Markdown writes it (`ERR\_REQUIRE\_ESM`).
 */
function identifierPattern(word: string): string {
  return word
    .split(/([^\p{L}\p{N}]+)/u)
    .filter(Boolean)
    .map((p) => (WORD.test(p) ? escape(p) : [...p].map((c) => (c === '-' ? '[-\\u2010-\\u2015\\u2212]' : c === '_' ? '\\\\?_' : escape(c))).join('')))
    .join('');
}

/**
 * The term's pattern: identifiers as identifierPattern has them, other words apart as the
 * index has them and ending as their stems let them (`release` in `Released 9.0.0`). Whole at
 * both ends — no letter, digit or `_` beside it (`ERR_INVALID_URL` is not in
 * `ERR_INVALID_URL_SCHEME`), and a number not inside a longer one (`9.0.0` is not in `1.9.0.0`
 * nor `6.17.0` in `6.17.0.1`, `1-2` not in `0-1-2`); a name may be part of a qualified one
 * (`os.path` is in `os.path.join`, `useEffect` in `React.useEffect`). A name of one word may end
 * in more letters, as the index's stems let it (`useEffects`).
 */
function patternOf(words: string[], ids: ({ joined: boolean } | undefined)[]): RegExp {
  const body = words
    .map((w, i) => (ids[i] ? identifierPattern(w) : `${w.split(/[^\p{L}\p{N}]+/u).map(escape).join('[^\\p{L}\\p{N}]+')}\\p{L}*`))
    .join('[^\\p{L}\\p{N}]+');
  const single = words.length === 1 && ids[0] && !ids[0].joined;
  // (`v1.0.2` is `1.0.2` too: fts.ts searches both.)
  const first = words[0]!;
  const last = words.at(-1)!;
  // A version is not inside a longer one (`9.0.0` is not in `1.9.0.0`), but it is the version
  // of a Debian one, an epoch before or a revision after (`1:1.2.13.dfsg-1`, `2.39.2-3`), and
  // an address is one with its netmask (`10.0.0.1/8`): those were "in no document as written"
  // (a trial). Other numbers keep every joiner (`1-2` is not in `0-1-2`).
  const before = `(?<![\\p{L}\\p{N}_])${DIGIT.test(first.at(0)!) ? (VERSION.test(first) ? '(?<!\\p{N}\\.)v?' : '(?<!\\p{N}[-.:/])') : ''}`;
  const after = `${single ? '\\p{L}*' : ''}(?![\\p{L}\\p{N}_])${DIGIT.test(last.at(-1)!) ? (VERSION.test(last) ? '(?!\\.\\p{N})' : '(?![-.:/]\\p{N})') : ''}`;
  return new RegExp(`${before}${body}${after}`, 'iu');
}

/** A word or phrase of the query that holds an identifier, as an ExactTerm (undefined: none). */
function exactTerm(term: Term): ExactTerm | undefined {
  if (term.kind === 'prefix' || !ASCII.test(term.text)) return undefined;
  const words = term.text.split(/\s+/).map((w) => w.replace(EDGE, '')).filter(Boolean);
  const ids = words.map(identifier);
  if (!ids.some(Boolean)) return undefined;
  return { term, joined: ids.some((i) => i?.joined === true), pattern: patternOf(words, ids) };
}

/** The positive terms of an expression: not the right side of a NOT. */
function positiveTerms(e: Expr, out: Term[] = []): Term[] {
  if ('text' in e) out.push(e);
  else if (e.kind === 'not') positiveTerms(e.left, out);
  else e.items.forEach((x) => positiveTerms(x, out));
  return out;
}

/** The identifiers among the query's words and phrases (each once, in order). */
export function exactTerms(parsed: ParsedQuery): ExactTerm[] {
  if (!parsed.expr) return [];
  const seen = new Set<string>();
  const out: ExactTerm[] = [];
  for (const t of positiveTerms(parsed.expr)) {
    const x = exactTerm(t);
    if (x && !seen.has(keyOf(t))) out.push((seen.add(keyOf(t)), x));
  }
  return out;
}

const keyOf = (t: Term) => `${t.kind}:${t.text.toLowerCase()}`;

/**
 * Whether the query asks for identifiers alone and one of them needs its check (`9.0.0`,
 * `ERR_REQUIRE_ESM`): then a keyword match that holds none of them as written is no match.
 */
export function onlyExact(parsed: ParsedQuery, exact: ExactTerm[]): boolean {
  return exact.some((x) => x.joined) && allExact(parsed, exact);
}

/** Whether every word the query asks for is an identifier: its keyword list is the exact list already. */
export function allExact(parsed: ParsedQuery, exact: ExactTerm[]): boolean {
  const keys = new Set(exact.map((x) => keyOf(x.term)));
  return parsed.expr !== null && exact.length > 0 && positiveTerms(parsed.expr).every((t) => keys.has(keyOf(t)));
}

/**
 * The joined identifiers a match must hold (the query's root, or a part of its AND): a
 * candidate without one of them as written is no match (`lodash AND 4.17.21` is not `4.17, 21`).
 */
export function requiredJoined(parsed: ParsedQuery, exact: ExactTerm[]): ExactTerm[] {
  const e = parsed.expr;
  if (!e) return [];
  const top = 'text' in e ? [e] : e.kind === 'and' ? e.items : e.kind === 'not' ? ('text' in e.left ? [e.left] : e.left.kind === 'and' ? e.left.items : []) : [];
  const keys = new Set(top.filter((t): t is Term => 'text' in t).map(keyOf));
  return exact.filter((x) => x.joined && keys.has(keyOf(x.term)));
}

/** A test of texts for any of the terms as written. */
export function holdsAny(exact: ExactTerm[]): (text: string) => boolean {
  return (text) => exact.some((x) => x.pattern.test(text));
}

/**
 * The question with one of its identifiers required (the question AND any of them): what the
 * exact list is found by, in the question's BM25 order — a version that many changelogs hold
 * is found first in the one whose package the question names.
 */
export function exactQuery(parsed: ParsedQuery, exact: ExactTerm[]): ParsedQuery {
  const terms = exact.map((x) => x.term);
  const any: Expr = terms.length === 1 ? terms[0]! : { kind: 'or', items: terms };
  return { ...parsed, expr: parsed.expr === null ? null : { kind: 'and', items: [parsed.expr, any] }, fallbacks: [] };
}

/** The query of its joined identifiers alone (their OR), none of its exclusions: what may match one of them across punctuation. */
export function joinedQuery(parsed: ParsedQuery, exact: ExactTerm[]): ParsedQuery {
  return identifiersQuery(parsed, exact.filter((x) => x.joined));
}

/** The query of the identifiers given alone (their OR), none of its exclusions. */
export function identifiersQuery(parsed: ParsedQuery, exact: ExactTerm[]): ParsedQuery {
  const terms = exact.map((x) => x.term);
  return { ...parsed, expr: terms.length === 1 ? terms[0]! : { kind: 'or', items: terms }, exclude: [], fallbacks: [] };
}

/**
 * A query of identifiers alone that no document holds as written, with its joined names asked
 * as the phrase of their words — the index's own match, other characters between the words —
 * and what to say of each (undefined: no such name). A name is written more ways than one:
 * `fs.inotify.max_user_watches` is `/proc/sys/fs/inotify/max_user_watches` in its manual, and
 * `Restart=on-failure` a table of `Restart=` values; found as written alone, both found nothing
 * (a collection of manual pages, where a plain BM25 found them first). A number keeps its
 * check: `9.0.0` in the words of `0.9.0, 0.9.5` would be another version.
 */
export function namesApart(parsed: ParsedQuery): { parsed: ParsedQuery; said: string[] } | undefined {
  const exact = exactTerms(parsed);
  if (!onlyExact(parsed, exact)) return undefined;
  const names = new Map<string, { typed: string; phrase: Term }>();
  for (const x of exact) {
    const words = x.term.text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
    if (x.joined && LETTER.test(x.term.text) && words.length > 1) names.set(keyOf(x.term), { typed: x.term.text, phrase: { kind: 'phrase', text: words.join(' ') } });
  }
  if (names.size === 0 || !parsed.expr) return undefined;
  const apart = (e: Expr): Expr => ('text' in e ? (names.get(keyOf(e))?.phrase ?? e) : e.kind === 'not' ? { ...e, left: apart(e.left) } : { ...e, items: e.items.map(apart) });
  const expr = apart(parsed.expr);
  const said = [...names.values()].map((n) => `"${n.typed}" is in none of the documents searched as written: found as its words in a row ("${n.phrase.text}"), other characters between them`);
  return { parsed: { ...parsed, expr, parsedAs: render(expr, parsed.exclude, parsed.filters) }, said };
}

/** A version number (`1.0.2`): changelogs write it `v1.0.2` as often, one word and two more to the index. */
export const VERSION = /^\d+(?:\.\d+)+$/;
