/**
 * No question refused (decision 0054): any Unicode string up to 10 KiB, in every mode, is
 * answered 200 through HTTP (GET where the URL holds it, POST always) and resolves through the
 * store API — never 400 or 5xx, never an exception — with the real model on the semantic side.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { call, closeAll, startServer } from './helpers/server.js';

afterAll(closeAll);

const MODES = ['keyword', 'semantic', 'hybrid'] as const;

/** Strings people and programs send: operators and punctuation mixed with words of any script. */
const query = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 200 }) },
  { weight: 2, arbitrary: fc.array(fc.constantFrom('AND', 'OR', 'NOT', '"', '-', '*', '(', ')', ':', 'path:', 'tag:', 'type:', '^', 'NEAR', '?', ' ', '图书馆', '지하철은', 'ข้าว', 'harbour', '🙂', '\u0000', '\\'), { maxLength: 30 }).map((a) => a.join('')) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 10 * 1024 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-composite', minLength: 2000, maxLength: 10 * 1024 }) },
);

describe('any query is answered', () => {
  it('through HTTP and the store API, in every mode: 200, never 400 or 5xx, never an exception', { timeout: 240_000 }, async () => {
    const s = await startServer({ semantic: 'on' });
    for (const [path, body] of [
      ['notes/harbour.txt', 'The harbour master decides where visiting boats stay.'],
      ['zh/library.txt', '市立图书馆每天早上九点开门，借书需要带上借书证。'],
      ['ko/subway.txt', '서울 지하철은 매일 새벽 5시 30분부터 운행합니다.'],
    ]) {
      expect((await call(s.url, 'POST', `/v1/documents?path=${path}&tag=t`, { body, headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    }
    expect((await call(s.url, 'GET', '/v1/index?wait=true')).status).toBe(200);
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(query, fc.constantFrom(...MODES), async (q, mode) => {
        const posted = await call(s.url, 'POST', '/v1/search', { body: JSON.stringify({ q, mode, limit: 5 }), headers: { 'content-type': 'application/json' } });
        expect({ q, mode, status: posted.status, body: posted.status === 200 ? '' : JSON.stringify(posted.json) }).toEqual({ q, mode, status: 200, body: '' });
        expect(typeof posted.json.parsedAs).toBe('string');
        const url = `/v1/search?mode=${mode}&limit=5&q=${encodeURIComponent(q)}`;
        if (url.length < 8000) {
          const got = await call(s.url, 'GET', url);
          expect({ q, mode, status: got.status }).toEqual({ q, mode, status: 200 });
          expect(got.json.hits).toEqual(posted.json.hits);
        }
        const hits = await s.app.store.search(q, { mode, limit: 5, waitMs: 1000 });
        expect(hits.map((h) => h.path)).toEqual(posted.json.hits.map((h: { path: string }) => h.path));
        answered++;
      }),
      { numRuns: Number(process.env.KURA_QUERY_RUNS ?? 150) },
    );
    expect(answered).toBeGreaterThanOrEqual(150);
  });
});
