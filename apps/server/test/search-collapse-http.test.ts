/**
 * One hit per document over HTTP (decision 0072): the same bytes at three paths are one hit
 * whose `alsoAt` names the others (GET and POST, through the response schema, which would drop
 * a field it does not know), and `collapse=false` answers a hit per path.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { call, closeAll, startServer } from './helpers/server.js';

afterAll(closeAll);

describe('GET and POST /v1/search, one hit per document', () => {
  it('names the other paths of a document in alsoAt; collapse=false gives a hit per path', async () => {
    const s = await startServer();
    for (const path of ['pkg/b/LICENSE', 'pkg/a/LICENSE', 'vendor/c/LICENSE']) {
      expect((await call(s.url, 'POST', `/v1/documents?path=${path}`, { body: 'the MIT license, granted free of charge', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    }
    const got = await call(s.url, 'GET', '/v1/search?q=license');
    expect(got.status).toBe(200);
    expect(got.json.hits.map((h: { path: string; alsoAt?: string[] }) => [h.path, h.alsoAt])).toEqual([['pkg/b/LICENSE', ['pkg/a/LICENSE', 'vendor/c/LICENSE']]]);
    const each = await call(s.url, 'GET', '/v1/search?q=license&collapse=false');
    expect(each.json.hits.map((h: { path: string }) => h.path)).toEqual(['pkg/b/LICENSE', 'pkg/a/LICENSE', 'vendor/c/LICENSE']);
    const posted = await call(s.url, 'POST', '/v1/search', { json: { q: 'license', pathPrefix: 'pkg/' } });
    expect(posted.json.hits.map((h: { path: string; alsoAt?: string[] }) => [h.path, h.alsoAt])).toEqual([['pkg/b/LICENSE', ['pkg/a/LICENSE']]]);
    expect((await call(s.url, 'POST', '/v1/search', { json: { q: 'license', collapse: false } })).json.hits).toHaveLength(3);
    expect((await call(s.url, 'GET', '/v1/search?q=license&collapse=maybe')).status).toBe(400);
  });
});
