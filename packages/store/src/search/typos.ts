/**
 * A misspelt word read as the nearest word the index holds (decision 0069): `retreival` is in
 * no document, so a query of it found nothing at all.
 *
 * Only a query whose keyword match finds no document at all is read again (a question with
 * other words that match is answered by them, as typed: an absent word is as often a real one
 * the store lacks — `dislocation`, `Collier` — as a typo), and in it only plain words of four
 * letters or more that no document holds (FTS5's own tokenizer says so) — and only when every
 * word no document holds has a near one (else the question is about something the store
 * lacks). For each, the index's vocabulary (an fts5vocab table over the search index, made on
 * the connection) is scanned for
 * the terms sharing its stem's first two letters; the nearest by edit distance (insertions,
 * deletions, substitutions and swaps of two neighbours: one for words of up to eight letters,
 * two for longer ones) wins — the stem against the term, and the typed word against the
 * term's English forms (`informaton` is one edit from `information`, whose stem is `inform`)
 * — then the one most documents hold. The parse records what was read (`typos`); the hits say
 * it (modes.ts), in a word a hit's snippet shows.
 */
import type { SqlDatabase } from '../backend/sql.js';
import { render, type Expr, type ParsedQuery, type Term } from './grammar.js';
import { stemOf } from './snippet.js';
import { STOP_WORDS } from './stop-words.js';
import { fold } from './words.js';
import { toMatch } from './fts.js';

/**
 * The index's terms of stop words (`any` is `ani` there): never a word a typo is read as. A
 * question is about its content words, and a stop word's term made words nobody wrote — a
 * trial's `animal` was searched as `any`, and `animal digging` was said to be near "anies".
 */
const STOP_TERMS = new Set([...STOP_WORDS].flatMap((w) => [w, stemOf(w)]));

/** Letters a word needs before it is read as a typo (shorter words are too often other words). */
export const TYPO_MIN_LETTERS = 4;
/** Letters from which a word may be two edits from what was meant (fewer: one). */
const LONG_WORD = 9;
/** Words of a query read again at most (each costs a vocabulary scan). */
const TYPOS_MAX = 8;
/** Absent words of a query that found documents looked up at most (typosNoticed). */
const NOTICES_MAX = 2;
const LETTERS = /^\p{L}+$/u;
const EDGE = /^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu;

/** The index's vocabulary, as this module asks it. */
export interface Vocabulary {
  /** Whether any document matches an FTS5 expression. */
  matches(match: string): boolean;
  /** Whether any document holds the word (as the index reads it: stemmed, folded). */
  holds(word: string): boolean;
  /** The index's terms starting with `prefix`, with how many documents hold each. */
  startingWith(prefix: string): { term: string; doc: number }[];
  /** How many documents hold the index's term `term` (0: none). */
  docsHolding(term: string): number;
}

/** The search index's vocabulary on this connection (a temp fts5vocab table, made once). */
export function indexVocabulary(db: SqlDatabase): Vocabulary {
  // The index is the catalog's own table, or attached as `idx` (node/search-file.ts).
  const schema = db.prepare<{ n: number }>("SELECT COUNT(*) AS n FROM main.sqlite_master WHERE name = 'search'").get()!.n > 0 ? 'main' : 'idx';
  try {
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_vocab USING fts5vocab(${schema}, 'search', 'row')`);
  } catch {
    // A SQLite without fts5vocab: every word is searched as typed (no search fails for this).
    return { matches: () => true, holds: () => true, startingWith: () => [], docsHolding: () => 0 };
  }
  const match = db.prepare<{ one: number }>('SELECT 1 AS one FROM search WHERE search MATCH ? LIMIT 1');
  const range = db.prepare<{ term: string; doc: number }>('SELECT term, doc FROM temp.search_vocab WHERE term >= ? AND term < ?');
  const one = db.prepare<{ doc: number }>('SELECT doc FROM temp.search_vocab WHERE term = ?');
  return {
    matches: (expr) => match.get(expr) !== undefined,
    // (Quoted as fts.ts quotes a term: no word reaches FTS5's parser raw — `AND"AND` did.)
    holds: (word) => match.get(`"${word.replace(/\0/g, ' ').replace(/"/g, '""')}"`) !== undefined,
    startingWith: (prefix) => range.all(prefix, `${prefix}\u{10ffff}`),
    docsHolding: (term) => one.get(term)?.doc ?? 0,
  };
}

/** Edit distance with swaps of neighbours (optimal string alignment), or `max + 1` once past `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let least = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row.push(d);
      least = Math.min(least, d);
    }
    if (least > max) return max + 1;
    prev2 = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * Endings a stem takes in English words (`inform` → information, `librari` → library): a typed
 * word is compared with the stem's words as well as with the stem — `informaton` is two edits
 * from `inform` as stems go (porter leaves it whole) and one from `information`.
 */
const ENDINGS = ['', 'e', 's', 'y', 'es', 'ed', 'er', 'al', 'ly', 'ing', 'ion', 'ions', 'ity', 'ive', 'ment', 'ness', 'able', 'ation', 'ations', 'ative', 'ical', 'ally', 'ence', 'ance', 'ship'];

/**
 * The words of a stem of about `length` letters (within `slack`): those of its forms (ENDINGS,
 * and `y` where porter made an `i`) that stem back to it. (Lengths first: a vocabulary range
 * holds thousands of terms, and the stemmer is the costly part.)
 */
function formsOf(term: string, length: number, slack: number): string[] {
  const forms = ENDINGS.map((e) => term + e);
  if (term.endsWith('i')) forms.push(...['y', 'ies', 'ied'].map((e) => term.slice(0, -1) + e));
  return forms.filter((w) => Math.abs(w.length - length) <= slack && stemOf(w) === term);
}

/** A word the stemmer makes `term` of (`agreed` for `agre`): what FTS5 must be given to find the term. */
export function wordOfStem(term: string): string | undefined {
  return formsOf(term, term.length, Infinity)[0];
}

/** The word to search instead of `word` (as a word of the store's, where one is found), or undefined: it is held, or nothing is near. */
function nearest(v: Vocabulary, word: string): string | undefined {
  return nearestWord(v, word, 2)?.search;
}

/**
 * `nearest`'s word, and the word of it to show (the term is often no word: `retriev`), among
 * the terms sharing the stem's first `shared` letters (each a vocabulary scan of them).
 */
function nearestWord(v: Vocabulary, word: string, shared: number): { search: string; said: string } | undefined {
  const folded = fold(word);
  if (folded.length < TYPO_MIN_LETTERS || !LETTERS.test(folded) || STOP_WORDS.has(folded)) return undefined;
  const stem = stemOf(folded);
  const max = folded.length < LONG_WORD ? 1 : 2;
  let best: { term: string; said: string; d: number; saidD: number; doc: number } | undefined;
  for (const c of v.startingWith(stem.slice(0, shared))) {
    // (A term longer than the word by more than the distance allowed is not near; its forms are longer still.)
    if (c.doc === 0 || c.term.length > folded.length + max || !LETTERS.test(c.term) || STOP_TERMS.has(c.term)) continue;
    // The stem against the term, and the typed word against the term's words; said as the
    // word of them nearest to what was typed (the term is often no word: `retriev`).
    let d = editDistance(stem, c.term, max);
    let said = c.term;
    let saidD = Infinity;
    for (const w of formsOf(c.term, folded.length, max)) {
      const dw = editDistance(folded, w, max);
      if (dw < saidD) [said, saidD] = [w, dw];
      d = Math.min(d, dw);
    }
    if (d > max) continue;
    // Ties go to the word nearest to what was typed, then to the one most documents hold:
    // `singal` is one edit from the stems of both `signal` and `single`, but as typed, a swap
    // from `signal` and two from `single` (it was read as `single`: a trial).
    if (!best || d < best.d || (d === best.d && (saidD < best.saidD || (saidD === best.saidD && (c.doc > best.doc || (c.doc === best.doc && said < best.said)))))) best = { term: c.term, said, d, saidD, doc: c.doc };
  }
  // Searched as the word shown where the index reads it as the term (the parse, `searched:`,
  // showed the stem before: `retriev`, a trial), else as the term itself.
  if (!best) return undefined;
  const search = v.holds(best.said) ? best.said : v.holds(best.term) ? best.term : undefined;
  return search === undefined ? undefined : { search, said: best.said };
}

/**
 * For a query that found documents: its plain words no document holds that are near one that
 * some do — searched as typed all the same (the question's other words answered it, and an
 * absent word is as often one the store lacks as a typo), so that a misspelling is not passed
 * over in silence (a trial: `timeuot` in a question that matched on its other words). Each with
 * the near word (`near`: one the index reads as the term some documents hold — often no word
 * anyone wrote, `decise` for `decis`: the caller shows a document's own, noticedSaid).
 */
export function typosNoticed(v: Vocabulary, parsed: ParsedQuery): { typed: string; near: string }[] {
  const out: { typed: string; near: string }[] = [];
  const seen = new Set<string>();
  let scans = 0;
  const walk = (e: Expr): void => {
    if ('text' in e) {
      const word = e.text.replace(EDGE, '');
      if (e.kind !== 'word' || seen.has(word) || seen.size >= TYPOS_MAX || scans >= NOTICES_MAX || !LETTERS.test(word) || fold(word).length < TYPO_MIN_LETTERS) return;
      seen.add(word);
      if (v.holds(fold(word))) return;
      // (A search that found documents pays for this: the terms sharing three letters, not two
      // — a scan of those a review measured at ~8 ms in 50,000 documents — for two words at most.)
      scans++;
      const near = nearestWord(v, word, 3);
      if (near) out.push({ typed: word, near: near.search });
      return;
    }
    if (e.kind === 'not') return walk(e.left);
    e.items.forEach(walk);
  };
  if (parsed.expr) walk(parsed.expr);
  return out;
}

/** What is said of a word typosNoticed found: `shown`, a word of a document's the index reads as the near one. */
export function noticedSaid(typed: string, shown: string): string {
  return `"${typed}" is in no document: searched as typed, with the other words ("${shown}" is in some)`;
}

/**
 * The parse with the words its typos were read as replaced (`shown`: the word searched -> a
 * document's own word the index reads the same, `decision` for `decise`), so that what it says
 * it searched is a word someone wrote; the search itself is the same.
 */
export function withTyposShown(parsed: ParsedQuery, shown: Map<string, string>): ParsedQuery {
  if (!parsed.expr || !parsed.typos || shown.size === 0) return parsed;
  const walk = (e: Expr): Expr => {
    if ('text' in e) return e.kind === 'word' && shown.has(e.text) ? ({ kind: 'word', text: shown.get(e.text)! } satisfies Term) : e;
    if (e.kind === 'not') return { ...e, left: walk(e.left) };
    return { ...e, items: e.items.map(walk) };
  };
  const expr = walk(parsed.expr);
  const typos = parsed.typos.map((t) => (shown.has(t.term) ? { typed: t.typed, term: shown.get(t.term)!, held: true as const } : t));
  return { ...parsed, expr, parsedAs: render(expr, parsed.exclude, parsed.filters), typos };
}

/**
 * The parse with each misspelt word searched as its nearest held word (see above), when its
 * keyword match finds nothing; the parse itself otherwise. Words inside phrases, prefixes,
 * exclusions and filters stay as typed.
 */
export function withTyposRead(v: Vocabulary, parsed: ParsedQuery): ParsedQuery {
  const match = toMatch(parsed);
  if (!parsed.expr || match === null || v.matches(match)) return parsed;
  const typos: { typed: string; term: string }[] = [];
  const seen = new Map<string, string | null>(); // a word's reading (null: held); looked up once
  let unread = false; // a word no document holds, and none near it
  const walk = (e: Expr): Expr => {
    if ('text' in e) {
      // (`retreival?`: a question's word keeps its mark in the parse.)
      const word = e.text.replace(EDGE, '');
      if (e.kind !== 'word' || unread) return e;
      if (!seen.has(word)) {
        if (seen.size >= TYPOS_MAX || v.holds(fold(word))) seen.set(word, null);
        else {
          const instead = LETTERS.test(word) ? nearest(v, word) : undefined;
          if (instead === undefined) unread = true;
          else {
            seen.set(word, instead);
            typos.push({ typed: word, term: instead });
          }
        }
      }
      const instead = seen.get(word);
      return instead ? ({ kind: 'word', text: instead } satisfies Term) : e;
    }
    if (e.kind === 'not') return { ...e, left: walk(e.left) };
    return { ...e, items: e.items.map(walk) };
  };
  const expr = walk(parsed.expr);
  // Every word no document holds must have a near one: a question of words the store lacks
  // (`how to fix a leaking faucet`, asked of recipes) is about something else, not misspelt —
  // read word by word, it found bread (a test).
  if (typos.length === 0 || unread) return parsed;
  return { ...parsed, expr, parsedAs: render(expr, parsed.exclude, parsed.filters), typos };
}

/**
 * What the hits say of the words read again: the typed word, and the word searched where a
 * document holds it as written (`held`: the one nearest to what was typed), else the first a
 * snippet marks with the term's stem (a word of the store's), else its stem and an ellipsis (a
 * stem is a word's beginning: `retriev…`).
 */
export function typosSaid(typos: { typed: string; term: string; held?: true }[], snippets: string[]): string[] {
  return typos.map(({ typed, term, held }) => {
    let shown: string | undefined;
    for (const s of snippets) {
      for (const m of s.matchAll(/<mark>([^<]*)<\/mark>/g)) {
        const w = fold(m[1]!.replace(/&[a-z]+;|&#\d+;/g, ''));
        if (LETTERS.test(w) && (w === term || stemOf(w) === stemOf(term))) {
          shown = w; // (folded: the snippet's `TIMEOUT` or `Information` is the word searched, not its case)
          break;
        }
      }
      if (shown) break;
    }
    return `"${typed}" is in no document: searched "${held ? term : (shown ?? `${stemOf(term)}…`)}" instead`;
  });
}
