/**
 * How hybrid search fuses its rankings (decision 0071): by their scores — each side's scores
 * scaled to [0, 1] over its own window (min-max), times the side's weight, summed — by default,
 * or by their ranks (reciprocal rank fusion, decision 0036). Ranks alone cannot tell a side
 * that is sure of its first hit from one that is not: a question in people's words whose
 * document semantic search put first, far ahead of its second, fell below the dozens keyword
 * search matched on common words (`run a command with a time limit` found systemctl(1) first,
 * not timeout(1)).
 */
import { STOP_WORDS } from './stop-words.js';

/** Words (stop words aside) of a query up to which keyword's list weighs as much as semantic's. */
export const SHORT_QUERY_WORDS = 3;
/** Keyword's weight for a longer query: a question in people's words. */
export const KEYWORD_WEIGHT_LONG = 0.6;

/**
 * Keyword's weight in hybrid fusion when the query gives none (decision 0071, amended): 1 for a
 * query of SHORT_QUERY_WORDS words or fewer — words typed as keywords, each one meant — and
 * KEYWORD_WEIGHT_LONG for a longer one, whose common words' BM25 matches are guesses beside
 * the model's reading of the whole question. (The identifiers' list keeps its weight: what a
 * question names as written is found there.)
 */
export function keywordWeight(text: string): number {
  const words = new Set<string>();
  for (const token of text.toLowerCase().split(/\s+/)) {
    // A word is what has a letter or a digit, its edges' punctuation and a contraction's
    // ending left out (`harbour.` is `harbour`, `what's` is `what`; a lone `-` is no word).
    const word = token.replace(/['\u2019](s|re|t|ll|ve|d|m)$/u, '').replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    if (word && !STOP_WORDS.has(word)) words.add(word);
  }
  return words.size <= SHORT_QUERY_WORDS ? 1 : KEYWORD_WEIGHT_LONG;
}

/** A fused item: its score, and its rank in each list (from 1; undefined where a list lacks it). */
export interface Fused<T> {
  item: T;
  score: number;
  ranks: (number | undefined)[];
}

/**
 * Score fusion: score(x) = Σ over lists of weight × (s − min) / (max − min), each list's scores
 * higher-is-better and scaled over that list (a list whose scores are all one value gives 1).
 */
export function fuseScores<T>(lists: { items: readonly T[]; scores: readonly number[]; weight: number }[]): Fused<T>[] {
  return fuse(lists, (list) => {
    let max = -Infinity;
    let min = Infinity;
    for (const s of list.scores) {
      max = Math.max(max, s);
      min = Math.min(min, s);
    }
    return (i) => list.weight * (max > min ? (list.scores[i]! - min) / (max - min) : 1);
  });
}

/** Reciprocal rank fusion (decision 0036): score(x) = Σ over lists of weight / (k + rank), ranks from 1. */
export function fuseRanks<T>(lists: { items: readonly T[]; weight: number }[], k: number): Fused<T>[] {
  return fuse(lists, (list) => (i) => list.weight / (k + i + 1));
}

function fuse<T, L extends { items: readonly T[] }>(lists: L[], valueIn: (list: L) => (i: number) => number): Fused<T>[] {
  const fused = new Map<T, { score: number; ranks: (number | undefined)[]; first: number }>();
  let order = 0;
  lists.forEach((list, li) => {
    const value = valueIn(list);
    list.items.forEach((item, i) => {
      let f = fused.get(item);
      if (!f) fused.set(item, (f = { score: 0, ranks: lists.map(() => undefined), first: order++ }));
      f.score += value(i);
      f.ranks[li] = i + 1;
    });
  });
  // Ties (equal scores) keep the order in which the lists first named them: stable everywhere.
  return [...fused].sort((a, b) => b[1].score - a[1].score || a[1].first - b[1].first).map(([item, f]) => ({ item, score: f.score, ranks: f.ranks }));
}
