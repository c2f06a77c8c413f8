/**
 * Search snippets, in linear time. FTS5's snippet() scores every window around every match and
 * is quadratic in matches per column (one document repeating a word 200,000 times took minutes
 * here), so snippets are made here: the first word that matches a query term, with a few
 * words of context, matched words between <mark> and </mark>. A snippet is an HTML fragment:
 * the document's text in it is escaped, so it can be rendered as it is (and `<mark>` in a
 * document can never pass for a match). A word matches as the index matches it: by its porter
 * stem ("retrieval" for "retrieving"). Stop words are not marked (nor looked for) unless the
 * query has no other words: "the" did not make a match.
 */
import type { Expr, ParsedQuery } from './grammar.js';
import { stemmer } from 'stemmer';
import { STOP_WORDS } from './stop-words.js';
import { fold, isHangul, wordsOf } from './words.js';
import { VERSION } from './exact-terms.js';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

/** Bytes of a body looked at for a snippet; matching itself covers all indexed text. */
export const SNIPPET_SOURCE_MAX = 64 * 1024;
const BEFORE = 6;
const AFTER = 10;


/**
 * A query word as the index matches it: folded, and stemmed (porter: the index's tokenizer).
 * `stopStem`: its stem is a stop word while it is not one (`andes` → `and`, `herring` → `her`,
 * `theses` → `these`), so the stop word itself, which the index cannot tell from it, is not
 * taken for it (stopStemmedOnly).
 */
export type SnippetTerm = {
  word: string;
  prefix: boolean;
  stem: string;
  hangul: boolean;
  stopStem: boolean;
  weight?: number;
  /**
   * A word of a phrase — or of a term the index reads as one, `e-mail`, `10:30`, `sort_keys` —
   * matches only where the phrase is: `words` (stop words too) each in its place, this one at `at`.
   */
  phrase?: { forms: SnippetTerm[][]; at: number };
};

/** FTS5's porter tokenizer stems words of ASCII letters only; others match as they are. */
export const stemOf = (folded: string) => (/^[a-z]+$/.test(folded) ? stemmer(folded) : folded);

/** The terms of a parse that made a match: its words (not exclusions, nor the right of a NOT). */
export function queryTerms(parsed: ParsedQuery): SnippetTerm[] {
  const terms: SnippetTerm[] = [];
  const walk = (e: Expr) => {
    if ('text' in e) {
      // Cut at `_` as the text's words are (snippetWords): `sort_keys` marks the index's `sort`
      // and `keys` (whole, it matched no word of the text, and the snippet showed none — a trial).
      const words: SnippetTerm[] = snippetWords(e.text).map((w, i, all) => {
        const word = fold(w.word);
        const stem = stemOf(word);
        return { word, prefix: e.kind === 'prefix' && i === all.length - 1, stem, hangul: isHangul(word), stopStem: STOP_WORDS.has(stem) && !STOP_WORDS.has(word) };
      });
      // Words of a phrase are its words where it is, not wherever each is: `distance "harbour
      // master"` marked "harbours" and "master" apart in a text matched by "distance" (a trial).
      if (words.length > 1) {
        // A version number is found written `v1.0.2` too (fts.ts): its first word `v1`.
        const forms = [words];
        if (e.kind === 'word' && VERSION.test(e.text.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))) forms.push([{ ...words[0]!, word: `v${words[0]!.word}`, stem: `v${words[0]!.stem}` }, ...words.slice(1)]);
        words.forEach((w, at) => terms.push({ ...w, phrase: { forms, at } }));
      } else terms.push(...words);
    } else if (e.kind === 'not') walk(e.left);
    else e.items.forEach(walk);
  };
  if (parsed.expr) walk(parsed.expr);
  const content = terms.filter((t) => t.prefix || !STOP_WORDS.has(t.word));
  return content.length ? content : terms;
}

/** ASCII letters and digits: folding is lower-casing (no NFKD needed). */
const ASCII = /^[\x00-\x7f]*$/;

/**
 * For each of the text's tokens, which of `terms` it matches (the term's index), or -1 — as the
 * index matches: by stem (porter), a prefix by its start. A word of a phrase matches where the
 * phrase is: the tokens around it its other words, in order (FTS5's phrase: punctuation between
 * them aside, as the index reads none).
 */
function matchedTerms(tokens: readonly { word: string }[], terms: SnippetTerm[]): number[] {
  const folded = tokens.map((t) => (ASCII.test(t.word) ? t.word.toLowerCase() : fold(t.word)));
  const stems: (string | undefined)[] = new Array(tokens.length);
  const matchesAt = (j: number, q: SnippetTerm): boolean => {
    const t = folded[j]!;
    // A Korean word is found at the start of its phrase (particles follow it: words.ts).
    if (q.prefix || (q.hangul && t.length > q.word.length)) return t.startsWith(q.word);
    if (t === q.word) return true;
    // Porter changes at most a word's last three letters before its stem ends (`relational`
    // → `relat`, `happy` → `happi`): a token that does not share the rest cannot have its
    // stem, and is not stemmed (stemming every token of a 64 KiB text cost most of a query).
    return t.length >= q.stem.length - 3 && t.startsWith(q.stem.slice(0, Math.max(1, q.stem.length - 3))) && (stems[j] ??= stemOf(t)) === q.stem && !(q.stopStem && STOP_WORDS.has(t));
  };
  const which: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    let found = -1;
    for (let n = 0; n < terms.length && found < 0; n++) {
      const q = terms[n]!;
      const p = q.phrase;
      if (!p) {
        if (matchesAt(i, q)) found = n;
        continue;
      }
      const from = i - p.at;
      for (const form of p.forms) {
        if (from < 0 || from + form.length > tokens.length || !matchesAt(i, form[p.at]!)) continue;
        let all = true;
        for (let k = 0; k < form.length && all; k++) if (k !== p.at) all = matchesAt(from + k, form[k]!);
        if (all) {
          found = n;
          break;
        }
      }
    }
    which.push(found);
  }
  return which;
}

/**
 * The token to centre a snippet on: the match whose window (BEFORE words before it, AFTER
 * after) holds the distinct query words of most weight (weighTerms: the rarer, the more), the
 * first of those. The first match alone showed a table of contents naming one word where a
 * later passage had them all (a trial); counted alike, two common words outweighed the rare
 * one that made the match (a trial: `HISTTIMEFORMAT` in a question about bash history).
 */
function bestMatch(which: number[], terms: SnippetTerm[]): number {
  const all = terms.reduce((a, t) => a + (t.weight ?? 1), 0);
  let best = -1;
  let bestWeight = 0;
  for (let i = 0; i < which.length; i++) {
    if (which[i]! < 0) continue;
    if (best < 0) best = i;
    if (bestWeight >= all) break; // (every word in one window: none does better)
    const seen = new Set<number>();
    for (let j = Math.max(0, i - BEFORE); j <= Math.min(which.length - 1, i + AFTER); j++) if (which[j]! >= 0) seen.add(which[j]!);
    let weight = 0;
    for (const t of seen) weight += terms[t]!.weight ?? 1;
    if (weight > bestWeight) {
      bestWeight = weight;
      best = i;
    }
  }
  return best;
}

/**
 * The terms, each weighed by how few documents hold it (1 / their number, as the index counts
 * them; 1 for a term no document holds — matched in a path or tag alone — and a prefix the
 * least of the others'): a snippet shows the passage of the rare word that made the match.
 */
export function weighTerms(terms: SnippetTerm[], docsHolding: (term: string) => number): SnippetTerm[] {
  const weighed = terms.map((t) => {
    if (t.prefix) return t;
    const n = docsHolding(t.hangul ? t.word : t.stem);
    return { ...t, weight: n > 0 ? 1 / n : 1 };
  });
  const least = Math.min(...weighed.filter((t) => !t.prefix).map((t) => t.weight!));
  return weighed.map((t) => (t.prefix ? { ...t, weight: Number.isFinite(least) ? least : 1 } : t));
}

/**
 * Whether the query's words are all words whose stem is a stop word (`Andes`, `herring`): the
 * index then finds every text with the stop word (`and`, `her`), ranked by how often it has it,
 * and its candidates must be checked for the word itself (keyword.ts `keywordFound`).
 */
export function stopStemmedOnly(terms: SnippetTerm[]): boolean {
  return terms.length > 0 && terms.every((t) => t.stopStem && !t.prefix);
}


/**
 * The text's words as the index has them: the index's tokenizer (unicode61) cuts at `_` too, so
 * `needle` matches `needle_in_haystack` — whose snippet showed no mark, or not the matching
 * part of a long text (a trial).
 */
function snippetWords(text: string): { word: string; index: number }[] {
  return wordsOf(text).flatMap((t) => {
    if (!t.word.includes('_')) return [t];
    const parts: { word: string; index: number }[] = [];
    for (const m of t.word.matchAll(/[^_]+/g)) parts.push({ word: m[0], index: t.index + m.index! });
    return parts;
  });
}

/** A snippet of the first of `fields` that contains a term; the start of the first field else. */
export function makeSnippet(fields: (string | null)[], terms: SnippetTerm[]): string {
  for (const field of fields) {
    if (!field) continue;
    const text = field.length > SNIPPET_SOURCE_MAX ? field.slice(0, SNIPPET_SOURCE_MAX) : field;
    const tokens = snippetWords(text);
    const which = matchedTerms(tokens, terms);
    const hit = bestMatch(which, terms);
    if (hit < 0) continue;
    const from = Math.max(0, hit - BEFORE);
    const to = Math.min(tokens.length - 1, hit + AFTER);
    let out = from > 0 ? '…' : '';
    let at = tokens[from]!.index;
    for (let i = from; i <= to; i++) {
      const t = tokens[i]!;
      out += escapeHtml(text.slice(at, t.index));
      const word = escapeHtml(t.word); // letters, digits and marks: escaped all the same
      out += which[i]! >= 0 ? `<mark>${word}</mark>` : word;
      at = t.index + t.word.length;
    }
    return to < tokens.length - 1 ? `${out}…` : out + escapeHtml(text.slice(at));
  }
  const first = fields.find((f) => f) ?? '';
  return first.length > 120 ? `${escapeHtml(first.slice(0, 120))}…` : escapeHtml(first);
}

/** Candidates looked at past SNIPPET_SOURCE_MAX at most (each a regex match checked as a word). */
const PAST_CANDIDATES = 200;

/**
 * A snippet from where a query word first occurs past the SNIPPET_SOURCE_MAX characters
 * makeSnippet reads, in a longer text (as far as it is indexed); '' when none does. A long
 * man page or changelog matched by a word on its 70th KiB showed its first lines, unmarked
 * (a trial: HISTTIMEFORMAT in bash(1)).
 */
export function snippetPast(text: string, terms: SnippetTerm[]): string {
  if (text.length <= SNIPPET_SOURCE_MAX || terms.length === 0) return '';
  // A word keeps its stem's letters but the last (as exactForms in keyword.ts has it).
  const starts = [...new Set(terms.map((t) => t.stem.slice(0, Math.max(1, t.stem.length - 1)).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')))];
  const from = SNIPPET_SOURCE_MAX - 200;
  const re = new RegExp(`(?<![\\p{L}\\p{N}])(?:${starts.join('|')})`, 'giu');
  let seen = 0;
  for (const m of text.slice(from).matchAll(re)) {
    if (++seen > PAST_CANDIDATES) break;
    const at = from + m.index;
    const around = text.slice(Math.max(0, at - 600), at + 600);
    const snippet = makeSnippet([around], terms);
    if (snippet.includes('<mark>')) return snippet.startsWith('…') ? snippet : `…${snippet}`;
  }
  return '';
}
