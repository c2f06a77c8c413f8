/**
 * The error codes and their docs stay one list: docs/ERRORS.md documents exactly KURA_ERROR_CODES,
 * and docs/HTTP.md's catalog gives every code the server's status (apps/server/src/errors.ts).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HTTP_ONLY_STATUS, LIBRARY_STATUS, STATUS_OF } from '../../../apps/server/src/errors.js';
import { KURA_ERROR_CODES, KuraError, isKuraError, isKuraErrorCode, type KuraErrorCode } from '../src/errors.js';

const doc = (name: string) => readFileSync(new URL(`../../../docs/${name}`, import.meta.url), 'utf8');

/** The cells of the body rows of the first table at or after the line matching `start`. */
function tableRows(markdown: string, start: RegExp): string[][] {
  const lines = markdown.split('\n');
  let at = lines.findIndex((l) => start.test(l));
  expect(at, `no line matching ${start}`).toBeGreaterThanOrEqual(0);
  while (at < lines.length && !lines[at]!.startsWith('|')) at++;
  const rows: string[][] = [];
  // Skip the header and the |---| line.
  for (let i = at + 2; i < lines.length && lines[i]!.startsWith('|'); i++) rows.push(lines[i]!.split('|').slice(1, -1).map((c) => c.trim()));
  return rows;
}

/** The `CODE`s a cell names. */
const codesIn = (cell: string) => [...cell.matchAll(/`([A-Z][A-Z_]*)`/g)].map((m) => m[1]!);

const sorted = (codes: Iterable<string>) => [...codes].sort();

describe('error codes', () => {
  it('docs/ERRORS.md documents exactly the codes of KURA_ERROR_CODES, one row each', () => {
    const documented = tableRows(doc('ERRORS.md'), /^\| code \| class \|/).flatMap((r) => codesIn(r[0]!));
    expect(sorted(documented)).toEqual(sorted(KURA_ERROR_CODES));
  });

  it("docs/HTTP.md's catalog gives every library and HTTP-only code the server's status", () => {
    const documented: Record<string, number | null> = {};
    for (const [codes, status] of tableRows(doc('HTTP.md'), /^## Error catalog/)) {
      // "—": a library code no client meets, answered as INTERNAL.
      for (const code of codesIn(codes!)) documented[code] = status === '—' ? null : Number(status);
    }
    expect(documented).toEqual({ ...LIBRARY_STATUS, ...HTTP_ONLY_STATUS });
  });

  it("the server's catalog: library codes as core lists them, HTTP-only codes apart, STATUS_OF their union", () => {
    expect(sorted(Object.keys(LIBRARY_STATUS))).toEqual(sorted(KURA_ERROR_CODES));
    for (const code of Object.keys(HTTP_ONLY_STATUS)) expect(isKuraErrorCode(code), code).toBe(false);
    const withStatus = Object.entries(LIBRARY_STATUS).filter(([, s]) => s !== null);
    expect(STATUS_OF).toEqual({ ...HTTP_ONLY_STATUS, ...Object.fromEntries(withStatus) });
  });

  it('isKuraErrorCode knows the listed codes only; isKuraError refuses an error with another code', () => {
    for (const code of KURA_ERROR_CODES) expect(isKuraErrorCode(code)).toBe(true);
    for (const v of ['NOPE', 'not_found', '', undefined, 404, 'UNAUTHORIZED']) expect(isKuraErrorCode(v)).toBe(false);
    expect(isKuraError(new KuraError('NO_SUCH_CODE' as KuraErrorCode, 'x'))).toBe(false);
  });
});
