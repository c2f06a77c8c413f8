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
