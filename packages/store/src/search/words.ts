/**
 * Words of every language, for the index and for queries alike (FORMAT.md §10, decision 0054).
 *
 * FTS5's unicode61 tokenizer splits at spaces and punctuation, so a run of Chinese, Japanese or
 * Thai characters — scripts written without spaces — is one token, and a word inside a sentence
 * is never found. Before the index (or a query) sees text, such runs are cut into words by
 * `Intl.Segmenter` (ICU's dictionaries, in Node and in browsers) and the words joined by
 * spaces; everything else is left as it is for unicode61, which folds case and accents.
 *
 * Only those runs go through the segmenter: V8's is ~1 MB/s on English and slows down on long
 * inputs (a 64 KB string: 0.12 MB/s), while finding the runs is a regex scan (~650 MB/s).
 * Runs are short (they end at every punctuation mark and space), so each segmentation is too.
 */

/** Scripts written without spaces between words. (Korean has spaces: see hangulPairs.) */
const SCRIPTS = '\\p{scx=Han}\\p{scx=Hiragana}\\p{scx=Katakana}\\p{scx=Thai}\\p{scx=Lao}\\p{scx=Khmer}\\p{scx=Myanmar}';
// Script_Extensions, not Script: `ー` (the prolonged sound mark in `タワー`) is Common by Script.
const UNSPACED = new RegExp(`[${SCRIPTS}]+`, 'gu');
const SCRIPT_CHAR = new RegExp(`[${SCRIPTS}]`, 'u');
/**
 * Every script above starts at U+0E00 (Thai): text with no character past U+0DFF has none of
 * them, and this test runs at memory speed where the Script_Extensions one runs ~1 GB/s (it
 * cost a 128 MiB close ~0.1-0.2 s of indexing).
 */
const PAST_0DFF = /[^\u0000-\u0dff]/;
const HAS_UNSPACED = { test: (text: string) => PAST_0DFF.test(text) && SCRIPT_CHAR.test(text) };

let segmenter: Intl.Segmenter | undefined;

/**
 * Characters segmented at a time at most: V8's segmenter slows down with its input's length,
 * and a run need not end (`。` is Han by Script_Extensions; a page of Chinese without a comma is
 * one run). A longer run is cut into pieces of this size, at a full stop where one is near.
 */
const RUN_MAX = 256;

/** The words of one unspaced run, in order. */
export function segmentRun(run: string): string[] {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' });
  const words: string[] = [];
  for (let at = 0; at < run.length; ) {
    let end = Math.min(run.length, at + RUN_MAX);
    if (end < run.length) {
      const stop = run.lastIndexOf('。', end);
      if (stop > at + RUN_MAX / 2) end = stop + 1;
    }
    for (const s of segmenter.segment(run.slice(at, end))) if (s.isWordLike) words.push(s.segment);
    at = end;
  }
  return words;
}

/** Whether `text` holds characters of a script written without spaces. */
export function hasUnspaced(text: string): boolean {
  return HAS_UNSPACED.test(text);
}

/**
 * Korean is written with spaces, but between phrases, not words: a noun carries its particle
 * (`지하철은`, "the subway" + topic), and neither unicode61 nor ICU's segmenter separates them.
 * A run of Hangul syllables is indexed as its overlapping pairs (`지하 하철 철은`), as Lucene's
 * CJK analyzer does, so a word is found inside its phrase as the phrase of its pairs.
 */
const HANGUL_RUN = /\p{Script=Hangul}{2,}/gu;
const HAS_HANGUL = /\p{Script=Hangul}/u;

function hangulPairs(run: string): string {
  const chars = [...run];
  const pairs: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) pairs.push(chars[i]! + chars[i + 1]!);
  return ` ${pairs.join(' ')} `;
}

/**
 * Any character past ASCII: only such text has letters to fold (foldLetters leaves ASCII as it
 * is), and this test runs at memory speed.
 */
const PAST_ASCII = /[^\u0000-\u007f]/;

/**
 * Letters unicode61 keeps apart from the ones people type for them (it folds the diacritics of
 * Latin letters only, and no letter into two): `ß` is ss (`strasse` finds Straße), `œ` oe, `æ`
 * ae, `ø` o, `ł` l, the dotless `ı` i (`ırmak` finds Irmak), Russian `ё` е (typed so mostly),
 * Greek's final `ς` σ (as unicode61 folds it). Lucene's ASCII folding reads them so too.
 */
const LETTERS: Record<string, string> = { ß: 'ss', ẞ: 'ss', œ: 'oe', Œ: 'oe', æ: 'ae', Æ: 'ae', ø: 'o', Ø: 'o', ł: 'l', Ł: 'l', ı: 'i', ё: 'е', Ё: 'Е', ς: 'σ' };
const FOLDED_LETTERS = /[ßẞœŒæÆøØłŁıёЁς]/g;
/** Greek letters, with their accents (tonos, dialytika: marks unicode61 keeps), and Hebrew points. */
const GREEK = /[\u0370-\u03ff\u1f00-\u1fff]+/g;
const HEBREW_POINTS = /[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7]/g;
/** Thai's abbreviation mark (`กรุงเทพฯ`), a full stop to a reader, part of the word to ICU. */
const THAI_ABBREVIATION = /\u0e2f/g;

/**
 * Text past ASCII with its letters folded as the index folds them (schema 20): compatibility
 * forms (NFKC: `ＰＤＦ` and `２０２６` are PDF and 2026, `ﬁle` is file, halfwidth `ｶﾀｶﾅ` is
 * カタカナ), LETTERS, Greek accents and Hebrew points left out. Case and Latin accents are
 * unicode61's.
 */
function foldLetters(text: string): string {
  // ~300-700 MB/s (V8's ICU), against ~1 MB/s for the segmenter spaceWords runs after it.
  let out = text.normalize('NFKC');
  out = out.replace(FOLDED_LETTERS, (c) => LETTERS[c]!);
  out = out.replace(GREEK, (run) => run.normalize('NFD').replace(/[\u0300-\u036f]/g, ''));
  out = out.replace(HEBREW_POINTS, '');
  return out.replace(THAI_ABBREVIATION, ' ');
}

/**
 * `text` as the index sees it: letters folded (foldLetters), every unspaced run cut into words
 * separated by spaces, Hangul runs as their pairs of syllables; ASCII text is returned as it is
 * (the same string: no copy).
 */
export function spaceWords(text: string): string {
  let out = PAST_ASCII.test(text) ? foldLetters(text) : text;
  if (HAS_UNSPACED.test(out)) out = out.replace(UNSPACED, (run) => ` ${segmentRun(run).join(' ')} `);
  if (HAS_HANGUL.test(out)) out = out.replace(HANGUL_RUN, hangulPairs);
  return out;
}

/** Whether `word` is Hangul (a snippet marks it where a phrase starts with it: `지하철은`). */
export const isHangul = (word: string) => HAS_HANGUL.test(word);

/** A letter or digit: what unicode61 keeps in a token (other characters separate tokens). */
export const WORD_CHAR = /[\p{L}\p{N}]/u;

const TOKEN = /[\p{L}\p{N}\p{M}_]+/gu;

/** The words of `text` with where each starts, unspaced runs cut into their words. */
export function wordsOf(text: string): { word: string; index: number }[] {
  const out: { word: string; index: number }[] = [];
  const unspaced = HAS_UNSPACED.test(text);
  for (const m of text.matchAll(TOKEN)) {
    if (!unspaced || !HAS_UNSPACED.test(m[0])) {
      out.push({ word: m[0], index: m.index! });
      continue;
    }
    segmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' });
    for (const s of segmenter.segment(m[0])) if (s.isWordLike) out.push({ word: s.segment, index: m.index! + s.index });
  }
  return out;
}

/** Case, accents and the letters of foldLetters folded, as the index folds them (for snippets, typos). */
export const fold = (s: string) => s.normalize('NFKD').replace(/\p{M}/gu, '').replace(FOLDED_LETTERS, (c) => LETTERS[c]!).toLowerCase();
