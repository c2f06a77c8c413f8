/**
 * `GET /v1/grep` (decision 0055): NDJSON events with known answers; a bad pattern is a 400
 * before the stream starts; a hostile pattern over 100 KB of `a` neither hangs the server nor
 * holds other requests (another is answered meanwhile).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { call, closeAll, startServer } from './helpers/server.js';

afterAll(closeAll);

const events = (body: Buffer) => body.toString('utf8').trim().split('\n').map((l) => JSON.parse(l));

describe('GET /v1/grep', () => {
  it('streams matching lines as NDJSON events; a bad pattern is 400', async () => {
    const s = await startServer();
    await call(s.url, 'POST', '/v1/documents?path=a/notes.txt&tag=t', { body: 'alpha\nthe harbour\nomega harbour\n', headers: { 'content-type': 'text/plain' } });
    await call(s.url, 'POST', '/v1/documents?path=b/other.txt', { body: 'harbour here too\n', headers: { 'content-type': 'text/plain' } });
    const r = await call(s.url, 'GET', '/v1/grep?pattern=HARBOUR&ignoreCase=true&prefix=a/&context=1');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const got = events(r.body);
    expect(got.map((e) => `${e.type}${e.line ? `:${e.line}` : ''}`)).toEqual(['begin', 'context:1', 'match:2', 'match:3', 'end', 'summary']);
    expect(got[2]).toMatchObject({ path: 'a/notes.txt', text: 'the harbour', submatch: [4, 11] });
    expect(got.at(-1)).toMatchObject({ type: 'summary', files: 1, filesMatched: 1, matches: 2, truncated: false });
    const limited = events((await call(s.url, 'GET', '/v1/grep?pattern=harbour&limit=1')).body);
    expect(limited.at(-1)).toMatchObject({ matches: 1, truncated: true });
    const bad = await call(s.url, 'GET', '/v1/grep?pattern=(unclosed');
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/unclosed/) });
    expect((await call(s.url, 'GET', '/v1/grep')).status).toBe(400);
    // An empty pattern matches every line, as in the CLI and the library (it was a 400: a trial).
    const every = events((await call(s.url, 'GET', '/v1/grep?pattern=&prefix=b/')).body);
    expect(every.filter((e) => e.type === 'match').map((e) => e.text)).toEqual(['harbour here too']);
    // onlyMatching: each match event carries every match of its line (grep -o).
    const only = events((await call(s.url, 'GET', '/v1/grep?pattern=\\bh\\w%2B|\\bo\\w%2B&onlyMatching=true&prefix=a/')).body);
    expect(only.filter((e) => e.type === 'match').map((e) => e.matchedTexts)).toEqual([['harbour'], ['omega', 'harbour']]);
    expect((await call(s.url, 'GET', '/v1/grep?pattern=x&onlyMatching=yes')).status).toBe(400);
    // count: each file with a match, its count, no lines (grep -c).
    const counted = events((await call(s.url, 'GET', '/v1/grep?pattern=harbour&count=true')).body);
    expect(counted.map((e) => (e.type === 'end' ? `${e.path}:${e.matches}` : e.type))).toEqual(['begin', 'a/notes.txt:2', 'begin', 'b/other.txt:1', 'summary']);
    expect((await call(s.url, 'GET', '/v1/grep?pattern=x&count=true&context=2')).status).toBe(400);
  });

  it('a pathological pattern does not hang the server: another request is answered meanwhile', { timeout: 60_000 }, async () => {
    const s = await startServer();
    // 40 documents of 100 KB of `a`: 4 MB for `(a+)+$`, which a backtracking engine takes
    // years over; the linear-time matcher seconds at most, with turns between documents.
    for (let i = 0; i < 40; i++) await call(s.url, 'POST', `/v1/documents?path=a/${String(i).padStart(2, '0')}.txt`, { body: `${'a'.repeat(100_000)}${i}`, headers: { 'content-type': 'text/plain' } });
    const started = performance.now();
    let grepMs = 0;
    const grep = call(s.url, 'GET', '/v1/grep?pattern=(a%2B)%2B%24').then((r) => {
      grepMs = performance.now() - started;
      return r;
    });
    // Other requests are answered while it runs: none waits for the whole scan.
    const waits: number[] = [];
    while (grepMs === 0) {
      const t0 = performance.now();
      expect((await call(s.url, 'GET', '/v1/stats')).status).toBe(200);
      waits.push(performance.now() - t0);
    }
    const r = await grep;
    expect(r.status).toBe(200);
    // Each document ends with its number: no line matches, the worst case for backtracking.
    expect(events(r.body).at(-1)).toMatchObject({ type: 'summary', files: 40, matches: 0 });
    expect(grepMs).toBeLessThan(30_000); // linear time: well under a second here; backtracking: years
    expect(Math.max(...waits)).toBeLessThan(Math.max(5_000, grepMs / 2));
  });
});
