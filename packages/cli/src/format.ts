/** Numbers for people: byte sizes in binary units, rates and ratios. JSON output never uses these. */

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** `0 B`, `999 B`, `1.5 KiB`, `12.3 MiB`, `512 GiB`: three significant digits at most. */
export function bytes(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const sign = n < 0 ? '-' : '';
  let v = Math.abs(n);
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  if (u === 0) return `${sign}${v} B`;
  const digits = v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return `${sign}${v.toFixed(digits)} ${UNITS[u]}`;
}

/** Bytes per second, e.g. `48.2 MiB/s`. */
export function rate(byteCount: number, seconds: number): string {
  return seconds > 0 ? `${bytes(Math.round(byteCount / seconds))}/s` : '-';
}

/** `2.50x`; `∞` when nothing was stored (everything deduplicated). */
export function ratio(x: number): string {
  return Number.isFinite(x) ? `${x.toFixed(2)}x` : '∞';
}

/**
 * An integer with thousands separators: `1,234,567`. Not `toLocaleString`: its first call
 * loads ICU's number formatting, ~30 ms of every command that prints a count.
 */
export function count(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  return String(n).replace(/\B(?=(\d{3})+$)/g, ',');
}

/** `n` and its noun, singular for one: "1 file", "2 files", "1 directory". */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** Characters a name must not bring to a terminal raw: C0 and C1 controls (escape sequences, newlines) and bidirectional overrides. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');

/**
 * A stored path (or file name) as a line of human output shows it: as it is, unless it holds
 * a character that would act on the terminal or break the line (a file named with ESC [31m or
 * a newline: a snapshot of a downloaded tree can hold such names); then quoted, with those
 * characters written as escapes (`"a\nb"`, `"x\u001b[31m"`). `--json` output carries names whole.
 */
export function shownPath(path: string): string {
  if (!UNSAFE.test(path)) return path;
  const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
  return `"${path.replace(/["\\]/g, '\\$&').replace(UNSAFE_ALL, (c) => named[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}
