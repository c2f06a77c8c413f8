/**
 * Results are bounded as they are sent: a tool result is JSON text, so a budget of characters
 * is counted as JSON writes them — a newline, quote or backslash as two, another control
 * character as six, a lone surrogate as six — and a string is cut only between characters,
 * never inside an escape or a surrogate pair, so a cut answer is still valid JSON.
 */

/** Characters `s` takes inside a JSON string (its quotes aside). */
export function jsonLength(s: string): number {
  return fitJson(s, Infinity).length;
}

/**
 * The longest prefix of `s` that takes at most `room` characters inside a JSON string, and
 * what it takes. A surrogate pair is kept or dropped whole.
 */
export function fitJson(s: string, room: number): { text: string; length: number } {
  let used = 0;
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    let width: number;
    let step = 1;
    if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) width = 2;
    else if (c < 0x20) width = 6;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
      width = 2;
      step = 2;
    } else if (c >= 0xd800 && c <= 0xdfff) width = 6; // a lone surrogate: JSON.stringify writes \udxxx
    else width = 1;
    if (used + width > room) break;
    used += width;
    i += step;
  }
  return { text: i === s.length ? s : s.slice(0, i), length: used };
}

/** Characters of JSON an entry's tags and metadata take in an answer at most (shownFields). */
export const FIELDS_CHARS = 4096;

/**
 * An entry's tags and metadata as an answer shows them: whole when they take at most `room`
 * characters of JSON, else each value cut to the longest length that fits (`…` marking the
 * cut), and past that the last tags and keys left out — with `fieldsCut` saying so. A store
 * takes metadata values of 64 KiB and a thousand keys: an ordinary document with 4.5 KB of
 * metadata could not be read by kura_get, and kura_list left its entry out (a trial). Tags,
 * names rather than text, are shown whole or left out.
 */
export function shownFields(tags: string[], meta: Record<string, string>, room = FIELDS_CHARS): { tags: string[]; meta: Record<string, string>; fieldsCut?: true } {
  const keys = Object.keys(meta);
  const quoted = (s: string) => jsonLength(s) + 4; // its quotes, and the separator and indent around it
  // (Tags are names: shown whole or not at all. Values are text: cut.)
  const tagsCost = tags.reduce((n, t) => n + quoted(t), 0);
  const cost = (cap: number) => tagsCost + keys.reduce((n, k) => n + quoted(k) + Math.min(quoted(meta[k]!), cap + 5), 0);
  if (cost(Infinity) <= room) return { tags, meta };
  const cut = (s: string, cap: number) => (s.length <= cap ? s : `${fitJson(s, cap).text}…`);
  // The longest cap on a value that fits (binary search), down to a few characters.
  let lo = 8;
  let hi = 64 * 1024;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (cost(mid) <= room) lo = mid;
    else hi = mid - 1;
  }
  const shownTags: string[] = [];
  const shownMeta: Record<string, string> = {};
  let used = 0;
  for (const t of tags) {
    if ((used += quoted(t)) > room) break;
    shownTags.push(t);
  }
  for (const k of keys) {
    const v = cut(meta[k]!, lo);
    if ((used += quoted(k) + quoted(v)) > room) break;
    shownMeta[k] = v;
  }
  return { tags: shownTags, meta: shownMeta, fieldsCut: true };
}
