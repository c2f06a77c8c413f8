/**
 * Prefixes the index's stemmer would cut (`bus*`). FTS5 hands a prefix query's token to the
 * tokenizer like any other, so porter stems it: `bus*` is searched as `bu*` — budget, bug, bûche
 * — and `stras*` as `stra*`, finding words that do not begin with what was typed, none of them
 * marked in the snippets (a trial). Such a prefix is searched as the index's terms that do begin
 * with it, read from its vocabulary, and as the word itself (`bus`, whose term is `bu`).
 */
import type { Expr, ParsedQuery, PrefixTerm } from './grammar.js';
import { stemOf } from './snippet.js';
import { wordOfStem, type Vocabulary } from './typos.js';
import { fold } from './words.js';

/** Index terms a prefix is searched as at most; past it, the stemmed prefix, said in `fallbacks`. */
export const PREFIX_TERMS_MAX = 64;

/** The parse with `prefixTerms` for each prefix the stemmer would cut (fts.ts searches those). */
export function withPrefixesRead(v: Vocabulary, parsed: ParsedQuery): ParsedQuery {
  const prefixes = new Set<string>();
  const walk = (e: Expr) => {
    if ('text' in e) {
      if (e.kind === 'prefix') prefixes.add(e.text);
    } else if (e.kind === 'not') {
      walk(e.left);
      walk(e.right);
    } else e.items.forEach(walk);
  };
  if (parsed.expr) walk(parsed.expr);
  parsed.exclude.forEach(walk);
  const read = new Map<string, readonly PrefixTerm[]>();
  const fallbacks: string[] = [];
  for (const typed of prefixes) {
    const p = fold(typed);
    // Porter stems words of ASCII letters of 3 bytes or more (FTS5 passes shorter ones as they
    // are: `is*` is searched as typed); a prefix it leaves whole is searched as typed.
    if (!/^[a-z]{3,}$/.test(p) || stemOf(p) === p) continue;
    const terms = termsStartingWith(v, p);
    if (terms === undefined) fallbacks.push(`"${typed}*" was searched as "${stemOf(p)}*" (the index's stem of "${typed}"): too many of its words begin with "${typed}" to search them one by one — type more letters`);
    else read.set(typed, terms);
  }
  if (read.size === 0 && fallbacks.length === 0) return parsed;
  return { ...parsed, ...(read.size ? { prefixTerms: read } : {}), fallbacks: [...parsed.fallbacks, ...fallbacks] };
}

/**
 * What to search for the index's terms beginning with `p`, as FTS5 is to be given them (its
 * tokenizer stems each again): a term whose stem keeps the prefix stands, as a prefix, for
 * itself and the terms it begins (`busi` for busi, busier…); another (`agre`, which porter would
 * cut to `agr`) is given as a word it is the stem of (`agreed`). Undefined past PREFIX_TERMS_MAX.
 */
function termsStartingWith(v: Vocabulary, p: string): PrefixTerm[] | undefined {
  const out: PrefixTerm[] = [];
  const covered: string[] = [];
  for (const { term } of v.startingWith(p).sort((a, b) => (a.term < b.term ? -1 : 1))) {
    if (covered.some((c) => term.startsWith(c))) continue;
    const stem = stemOf(term);
    if (stem.startsWith(p)) {
      out.push({ text: term, prefix: true });
      covered.push(stem);
    } else {
      const word = wordOfStem(term);
      if (word === undefined) continue;
      out.push({ text: word, prefix: false });
    }
    if (out.length > PREFIX_TERMS_MAX) return undefined;
  }
  return out;
}
