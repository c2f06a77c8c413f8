/**
 * The `Range` header (RFC 9110 §14): one byte range is served as 206; several, or a syntax
 * this server does not honour, are ignored (the full document is sent, as the RFC allows);
 * a well-formed range that starts beyond the end is 416.
 */
export type RangeResult =
  | { kind: 'full' }
  | { kind: 'partial'; start: number; end: number } // [start, end), end exclusive
  | { kind: 'unsatisfiable' };

export function parseRange(header: string | undefined, size: number): RangeResult {
  if (header === undefined) return { kind: 'full' };
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m) return { kind: 'full' }; // multiple ranges, other units, garbage: ignored
  const [, a, b] = m;
  if (a === '' && b === '') return { kind: 'full' };
  if (a === '') {
    // Suffix: the last N bytes.
    const n = Number(b);
    if (n === 0) return { kind: 'unsatisfiable' };
    return size === 0 ? { kind: 'unsatisfiable' } : { kind: 'partial', start: Math.max(0, size - n), end: size };
  }
  // (Digits past 2^53 are compared as what they are: a start that large is past any end.)
  const start = Number(a);
  const last = b === '' ? Infinity : Number(b);
  if (last < start) return { kind: 'full' }; // invalid: ignored
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end: Math.min(last, size - 1) + 1 };
}

/** Whether an `If-None-Match` list names this entity tag (weak comparison, `*` matches all). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}
