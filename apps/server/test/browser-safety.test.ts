/**
 * What keeps web pages the user visits away from a server on their machine, and stored pages
 * from acting as the API's own: a server without tokens refuses foreign Hosts (DNS rebinding)
 * and foreign Origins (a form's cross-site POST) on every route; stored HTML and SVG are served
 * sandboxed and never sniffed; a path's latest version is revalidated, not cached for a year.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { call, closeAll, startServer } from './helpers/server.js';

afterAll(closeAll);
const code = (r: { json: any }) => r.json?.error?.code;

describe('a server without tokens, against pages on other sites', () => {
  it('refuses a foreign Host or Origin on every route, before doing anything; its own page and clients without an Origin pass', async () => {
    const s = await startServer(); // noAuth: true
    const port = new URL(s.url).port;
    const rebound = { host: `evil.example:${port}`, origin: `http://evil.example:${port}` };
    for (const [method, path] of [['GET', '/v1/documents'], ['GET', '/v1/stats'], ['POST', '/v1/gc'], ['GET', '/docs/json']] as const) {
      const r = await call(s.url, method, path, { headers: { host: `evil.example:${port}` } });
      expect([method, path, r.status, code(r)]).toEqual([method, path, 403, 'FORBIDDEN']);
    }
    // Probes of any name, addresses (a LAN address, 0.0.0.0 as printed for a wildcard listener), a trailing dot.
    expect((await call(s.url, 'GET', '/healthz', { headers: { host: `evil.example:${port}` } })).status).toBe(200);
    for (const host of [`192.168.1.5:${port}`, `0.0.0.0:${port}`, `localhost.:${port}`]) expect((await call(s.url, 'GET', '/v1/stats', { headers: { host } })).status).toBe(200);
    // A page on another port of this machine is another origin.
    expect((await call(s.url, 'POST', '/v1/documents?path=csrf/z.txt', { body: 'z', headers: { origin: 'http://127.0.0.1:5173', 'content-type': 'text/plain' } })).status).toBe(403);
    // A form's POST from another site: a "simple" request, sent without a preflight.
    const csrf = await call(s.url, 'POST', '/v1/documents?path=csrf/x.txt', { body: 'x', headers: { origin: 'http://evil.example', 'content-type': 'text/plain' } });
    expect(csrf.status).toBe(403);
    expect(csrf.json.error.message).toMatch(/Origin http:\/\/evil\.example/);
    expect((await call(s.url, 'POST', '/v1/documents?path=csrf/y.txt', { body: 'y', headers: rebound })).status).toBe(403);
    const del = await call(s.url, 'DELETE', '/v1/entry?path=csrf/x.txt', { headers: { origin: 'https://evil.example' } });
    expect(del.status).toBe(403);
    // Nothing was stored by them.
    expect((await call(s.url, 'GET', '/v1/documents')).json.items).toEqual([]);
    // The server's own page (same origin) and a client that sends no Origin.
    expect((await call(s.url, 'POST', '/v1/documents?path=ok/a.txt', { body: 'a', headers: { origin: s.url, 'content-type': 'text/plain' } })).status).toBe(201);
    expect((await call(s.url, 'POST', '/v1/documents?path=ok/b.txt', { body: 'b' })).status).toBe(201);
    expect((await call(s.url, 'GET', '/v1/documents', { headers: { host: `localhost:${port}` } })).json.items.map((i: { path: string }) => i.path)).toEqual(['ok/a.txt', 'ok/b.txt']);
  });

  it('with tokens, the token decides: a foreign Host with a valid token is answered (only /mcp checks it there)', async () => {
    const token = 'r'.repeat(32);
    const s = await startServer({ noAuth: false, tokens: [{ token, scopes: ['read'] }] });
    const port = new URL(s.url).port;
    expect((await call(s.url, 'GET', '/v1/stats', { token, headers: { host: `kura.example:${port}` } })).status).toBe(200);
    expect((await call(s.url, 'GET', '/v1/stats', { headers: { host: `kura.example:${port}` } })).status).toBe(401);
  });
});

describe('stored bytes as a browser gets them', () => {
  it('HTML, XHTML and SVG are sandboxed; nothing is sniffed; a path\'s latest version is revalidated, a named version and a digest are immutable', async () => {
    const s = await startServer();
    const put = async (path: string, body: string, type: string) => (await call(s.url, 'POST', `/v1/documents?path=${path}&type=${encodeURIComponent(type)}`, { body })).json.digest as string;
    const page = await put('p/evil.html', '<script>fetch("/v1/documents")</script>', 'text/html');
    await put('p/evil.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', 'image/svg+xml');
    await put('p/evil.xhtml', '<html xmlns="http://www.w3.org/1999/xhtml"/>', 'application/xhtml+xml; charset=utf-8');
    await put('p/notes.txt', '<script>not a page</script>', 'text/plain');
    for (const path of ['p/evil.html', 'p/evil.svg', 'p/evil.xhtml']) {
      const r = await call(s.url, 'GET', `/v1/paths/${path}`);
      expect([path, r.status, r.headers['content-security-policy'], r.headers['x-content-type-options']]).toEqual([path, 200, 'sandbox', 'nosniff']);
    }
    const text = await call(s.url, 'GET', '/v1/paths/p/notes.txt');
    expect(text.headers['x-content-type-options']).toBe('nosniff');
    expect(text.headers['content-security-policy']).toBeUndefined();
    expect((await call(s.url, 'GET', `/v1/documents/${page}`)).headers['content-security-policy']).toBe('sandbox');

    // Caching: a second version at the path must be seen.
    expect((await call(s.url, 'GET', '/v1/paths/p/notes.txt')).headers['cache-control']).toBe('private, no-cache');
    expect((await call(s.url, 'GET', '/v1/paths/p/notes.txt?version=1')).headers['cache-control']).toBe('private, max-age=31536000, immutable');
    expect((await call(s.url, 'GET', `/v1/documents/${page}`)).headers['cache-control']).toBe('private, max-age=31536000, immutable');
    const etag = text.headers.etag as string;
    await put('p/notes.txt', 'second version', 'text/plain');
    const again = await call(s.url, 'GET', '/v1/paths/p/notes.txt', { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(200);
    expect(again.body.toString()).toBe('second version');
  });
});

describe('methods a route does not take', () => {
  it('are 405 with Allow, not "no route"; a path no route has is 404', async () => {
    const s = await startServer();
    for (const [method, path, allow] of [
      ['GET', '/v1/gc', 'POST'],
      ['DELETE', '/v1/stats', 'GET, HEAD'],
      ['GET', `/v1/chunks/${'0'.repeat(64)}`, 'PUT'],
      ['POST', `/v1/documents/sha256:${'0'.repeat(64)}`, 'DELETE, GET, HEAD'],
      ['GET', '/v1/documents:commit', 'POST'],
    ] as const) {
      const r = await call(s.url, method, path);
      expect([method, path, r.status, code(r), r.headers.allow]).toEqual([method, path, 405, 'METHOD_NOT_ALLOWED', allow]);
    }
    const none = await call(s.url, 'GET', '/v1/nothing');
    expect([none.status, code(none)]).toEqual([404, 'NOT_FOUND']);
  });
});
