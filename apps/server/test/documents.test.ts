import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { blake3 } from '@kura/core';
import { Store } from '@kura/store';
import { afterAll, describe, expect, it } from 'vitest';
import { randomBytes, textBytes } from '../../../packages/core/test/helpers/data.js';
import { call, closeAll, errorCode, startServer } from './helpers/server.js';
import { makeDocx, makeHtml, makePdf } from '../../../packages/store/test/helpers/documents.js';

const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

afterAll(closeAll);

describe('documents over HTTP', () => {
  it('stores a raw body and serves it back byte for byte, with ETag and length', async () => {
    const s = await startServer();
    for (const data of [new Uint8Array(0), textBytes(1, 1000), randomBytes(2, 3 << 20), randomBytes(3, 9 << 20)]) {
      const put = await call(s.url, 'POST', '/v1/documents', { body: data });
      expect(put.status).toBe(201);
      expect(put.json.digest).toBe(sha(data));
      expect(put.json.size).toBe(data.length);
      expect(put.headers.location).toBe(`/v1/documents/${sha(data)}`);
      const get = await call(s.url, 'GET', `/v1/documents/${sha(data)}`);
      expect(get.status).toBe(200);
      expect(sha(get.body)).toBe(sha(data));
      expect(get.headers.etag).toBe(`"${sha(data)}"`);
      expect(get.headers['content-length']).toBe(String(data.length));
      const head = await call(s.url, 'HEAD', `/v1/documents/${sha(data)}`);
      expect(head.status).toBe(200);
      expect(head.headers['content-length']).toBe(String(data.length));
      expect(head.body.length).toBe(0);
    }
    // Streamed without a length (chunked transfer encoding).
    const big = randomBytes(4, 12 << 20);
    async function* pieces() {
      for (let i = 0; i < big.length; i += 1 << 20) yield big.subarray(i, i + (1 << 20));
    }
    const put = await call(s.url, 'POST', '/v1/documents', { body: pieces() });
    expect(put.json.digest).toBe(sha(big));
  });

  it('answers If-None-Match with 304 and serves single ranges as 206', async () => {
    const s = await startServer();
    const data = randomBytes(5, 200_000);
    const d = sha(data);
    await call(s.url, 'POST', '/v1/documents', { body: data });
    const url = `/v1/documents/${d}`;
    expect((await call(s.url, 'GET', url, { headers: { 'if-none-match': `"${d}"` } })).status).toBe(304);
    expect((await call(s.url, 'GET', url, { headers: { 'if-none-match': `"x", W/"${d}"` } })).status).toBe(304);
    expect((await call(s.url, 'GET', url, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);

    const cases: [string, number, number][] = [
      ['bytes=0-9', 0, 10],
      ['bytes=100000-', 100_000, 200_000],
      ['bytes=-500', 199_500, 200_000],
      ['bytes=199999-199999', 199_999, 200_000],
      ['bytes=150000-999999999', 150_000, 200_000], // clamped to the end
      ['bytes=-999999', 0, 200_000],
    ];
    for (const [range, start, end] of cases) {
      const r = await call(s.url, 'GET', url, { headers: { range } });
      expect(r.status, range).toBe(206);
      expect(r.headers['content-range']).toBe(`bytes ${start}-${end - 1}/200000`);
      expect(Buffer.compare(r.body, Buffer.from(data.subarray(start, end))), range).toBe(0);
    }
    for (const range of ['bytes=200000-', 'bytes=300000-300010', 'bytes=-0']) {
      const r = await call(s.url, 'GET', url, { headers: { range } });
      expect(r.status, range).toBe(416);
      expect(r.headers['content-range']).toBe('bytes */200000');
      expect(errorCode(r)).toBe('RANGE_NOT_SATISFIABLE');
    }
    // Ignored (full 200): several ranges, other units, nonsense, a stale If-Range.
    for (const headers of [{ range: 'bytes=0-1,5-6' }, { range: 'items=0-1' }, { range: 'bytes=9-2' }, { range: 'bytes=0-9', 'if-range': '"sha256:other"' }]) {
      const r = await call(s.url, 'GET', url, { headers });
      expect(r.status, JSON.stringify(headers)).toBe(200);
      expect(r.body.length).toBe(200_000);
    }
    expect((await call(s.url, 'GET', url, { headers: { range: 'bytes=0-9', 'if-range': `"${d}"` } })).status).toBe(206);
  });

  it('a wrong expected digest is DIGEST_MISMATCH and leaves nothing reachable', async () => {
    const s = await startServer();
    const data = randomBytes(6, 500_000);
    const wrong = sha(randomBytes(7, 10));
    for (const opts of [{ headers: { 'x-kura-sha256': wrong } }, { headers: { 'x-kura-sha256': wrong.slice(7).toUpperCase() } }]) {
      const r = await call(s.url, 'POST', '/v1/documents?path=a/b.bin&tag=t', { body: data, ...opts });
      expect(r.status).toBe(400);
      expect(errorCode(r)).toBe('DIGEST_MISMATCH');
      expect(r.json.error.found).toBe(sha(data));
    }
    expect((await call(s.url, 'GET', `/v1/documents/${sha(data)}`)).status).toBe(404);
    expect((await call(s.url, 'GET', '/v1/paths/a/b.bin')).status).toBe(404);
    expect((await call(s.url, 'GET', '/v1/documents')).json.items).toEqual([]);
    const stats = (await call(s.url, 'GET', '/v1/stats')).json;
    expect(stats.documents).toBe(0);
    expect(stats.chunks).toBe(0);
    const ok = await call(s.url, 'POST', `/v1/documents?digest=${sha(data)}`, { body: data });
    expect(ok.status).toBe(201);
    const bad = await call(s.url, 'POST', '/v1/documents', { body: data, headers: { 'x-kura-sha256': 'sha256:nothex' } });
    expect(errorCode(bad)).toBe('INVALID_INPUT');
  });

  it('takes metadata from the query, x-kura-* headers and Content-Type', async () => {
    const s = await startServer();
    const a = await call(s.url, 'POST', `/v1/documents?path=notes/a.txt&tag=x&tag=y&meta=${encodeURIComponent('{"k":"v"}')}`, {
      body: 'alpha harbour',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
    expect(a.status).toBe(201);
    const ia = (await call(s.url, 'GET', `/v1/documents/${a.json.digest}/meta`)).json;
    expect(ia).toMatchObject({ path: 'notes/a.txt', mediaType: 'text/plain; charset=utf-8', meta: { k: 'v' } });
    expect(ia.tags.sort()).toEqual(['x', 'y']);
    const b = await call(s.url, 'POST', '/v1/documents', {
      body: 'beta',
      headers: { 'x-kura-path': encodeURIComponent('notes/b ü.txt'), 'x-kura-tags': 'one, t%2Cwo', 'x-kura-meta': '{"owner":"ops"}', 'content-type': 'application/octet-stream' },
    });
    const ib = (await call(s.url, 'GET', `/v1/documents/${b.json.digest}/meta`)).json;
    // octet-stream says nothing about the bytes: the type comes from the path (since issue 23;
    // before, it was stored without one).
    expect(ib).toMatchObject({ path: 'notes/b ü.txt', mediaType: 'text/plain', meta: { owner: 'ops' } });
    expect(ib.tags.sort()).toEqual(['one', 't,wo']);
    expect((await call(s.url, 'GET', `/v1/documents/${b.json.digest}`)).headers['content-type']).toMatch(/^text\/plain/);
    for (const [path, headers] of [
      ['/v1/documents?meta=%7Bbad', {}],
      ['/v1/documents?meta=%5B1%5D', {}],
      ['/v1/documents', { 'x-kura-meta': '{"n":1}' }],
      ['/v1/documents', { 'x-kura-path': '%E0%A4%A' }],
      ['/v1/documents?type=notatype', {}],
      ['/v1/documents?unknown=1', {}],
    ] as const) {
      const r = await call(s.url, 'POST', path, { body: 'x', headers });
      expect(r.status, path + JSON.stringify(headers)).toBe(400);
      expect(errorCode(r)).toBe('INVALID_INPUT');
    }
  });

  it('refuses paths that could escape a tree: .., absolute, backslashes, control characters', async () => {
    const s = await startServer();
    const bad = ['../etc/passwd', 'a/../../b', '/etc/passwd', 'a//b', './a', 'a/.', 'a\\..\\b', 'a\u0000b', 'a\nb', ''];
    for (const p of bad) {
      const r1 = await call(s.url, 'POST', `/v1/documents?path=${encodeURIComponent(p)}`, { body: 'x' });
      expect(r1.status, JSON.stringify(p)).toBe(400);
      expect(errorCode(r1)).toBe('INVALID_INPUT');
      const r2 = await call(s.url, 'POST', '/v1/documents', { body: 'x', headers: { 'x-kura-path': encodeURIComponent(p) } });
      expect(r2.status, JSON.stringify(p)).toBe(400);
    }
    const d = (await call(s.url, 'POST', '/v1/documents?path=ok.txt', { body: 'x' })).json.digest;
    const r3 = await call(s.url, 'PATCH', `/v1/documents/${d}/meta`, { json: { path: '../up' } });
    expect(errorCode(r3)).toBe('INVALID_INPUT');
    // (Dot segments written literally in a URL are resolved by the client before it is sent.)
    for (const url of ['/v1/paths/..%2Fetc%2Fpasswd', '/v1/paths/a%2F..%2F..%2Fb', '/v1/versions?path=..%2Fx']) {
      const r = await call(s.url, 'GET', url);
      expect(r.status, url).toBe(400);
    }
    expect((await call(s.url, 'GET', `/v1/documents/${d}/meta`)).json.path).toBe('ok.txt');
    expect((await call(s.url, 'GET', '/v1/stats')).json.documents).toBe(1);
  });

  it('a stored path with a control character (a file name kura add took) is read, listed and deleted as listed (it was 400 to read: a trial)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kura-cc-'));
    const store = await Store.init(join(dir, 'store'));
    try {
      await store.put(new TextEncoder().encode('x'), { path: 'notes/a\nb.md' });
      const s = await startServer({}, { store });
      const listed = (await call(s.url, 'GET', '/v1/documents?pathPrefix=notes/')).json.items.map((i: { path: string }) => i.path);
      expect(listed).toEqual(['notes/a\nb.md']);
      const read = await call(s.url, 'GET', `/v1/paths/${encodeURIComponent('notes/a\nb.md')}`);
      expect([read.status, read.body.toString()]).toEqual([200, 'x']);
      expect((await call(s.url, 'GET', `/v1/versions?path=${encodeURIComponent('notes/a\nb.md')}`)).json.versions).toHaveLength(1);
      // A new one is still refused (above), and reading never names a place outside: .. stays refused.
      expect((await call(s.url, 'GET', `/v1/entry?path=${encodeURIComponent('notes/../a\nb.md')}`)).status).toBe(400);
      expect((await call(s.url, 'DELETE', `/v1/entry?path=${encodeURIComponent('notes/a\nb.md')}`)).status).toBe(204);
      // No versions left, or never any: 404 as kura versions and MCP say (it was 200 []).
      for (const p of ['notes/a\nb.md', 'notes/never.md']) {
        const gone = await call(s.url, 'GET', `/v1/versions?path=${encodeURIComponent(p)}`);
        expect([gone.status, gone.json.error.code]).toEqual([404, 'NOT_FOUND']);
      }
      await s.close();
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lists with filters and cursor pagination, deletes, and updates metadata', async () => {
    const s = await startServer();
    const digests: string[] = [];
    for (let i = 0; i < 7; i++) {
      const r = await call(s.url, 'POST', `/v1/documents?path=dir/${i}.txt&tag=${i % 2 ? 'odd' : 'even'}`, { body: `doc ${i}`, headers: { 'content-type': 'text/plain' } });
      digests.push(r.json.digest);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const r = await call(s.url, 'GET', `/v1/documents?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      seen.push(...r.json.items.map((i: { digest: string }) => i.digest));
      cursor = r.json.nextCursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(digests);
    expect((await call(s.url, 'GET', '/v1/documents?tag=odd')).json.items).toHaveLength(3);
    expect((await call(s.url, 'GET', '/v1/documents?pathPrefix=dir/1')).json.items).toHaveLength(1);
    expect((await call(s.url, 'GET', '/v1/documents?type=text/plain&limit=1000')).json.items).toHaveLength(7);
    expect(errorCode(await call(s.url, 'GET', '/v1/documents?limit=0'))).toBe('INVALID_INPUT');
    expect(errorCode(await call(s.url, 'GET', '/v1/documents?cursor=abc'))).toBe('INVALID_INPUT');

    const patched = await call(s.url, 'PATCH', `/v1/documents/${digests[0]}/meta`, { json: { addTags: ['new'], meta: { a: '1' }, mediaType: 'text/markdown' } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ mediaType: 'text/markdown', meta: { a: '1' } });
    expect(patched.json.tags).toContain('new');

    const batch = await call(s.url, 'POST', '/v1/meta:batch', { json: { updates: digests.map((d, i) => ({ digest: d, meta: { n: String(i) } })) } });
    expect(batch.json).toEqual({ updated: 7 });
    // All or none: one unknown digest and nothing changes.
    const unknown = sha(textBytes(99, 10));
    const failed = await call(s.url, 'POST', '/v1/meta:batch', { json: { updates: [{ digest: digests[1], meta: { n: 'changed' } }, { digest: unknown, addTags: ['z'] }] } });
    expect(failed.status).toBe(404);
    expect((await call(s.url, 'GET', `/v1/documents/${digests[1]}/meta`)).json.meta.n).toBe('1');
    const tooMany = await call(s.url, 'POST', '/v1/meta:batch', { json: { updates: Array.from({ length: 1001 }, () => ({ digest: digests[0], addTags: ['q'] })) } });
    expect(errorCode(tooMany)).toBe('INVALID_INPUT');
    expect(errorCode(await call(s.url, 'POST', '/v1/meta:batch', { json: { updates: [{ digest: 'sha256:zz' }] } }))).toBe('INVALID_INPUT');

    expect((await call(s.url, 'DELETE', `/v1/documents/${digests[2]}`)).status).toBe(204);
    expect(errorCode(await call(s.url, 'DELETE', `/v1/documents/${digests[2]}`))).toBe('NOT_FOUND');
    expect(errorCode(await call(s.url, 'GET', `/v1/documents/${digests[2]}`))).toBe('NOT_FOUND');
    expect((await call(s.url, 'GET', '/v1/stats')).json.documents).toBe(6);
  });

  it('serves paths by latest version, ?version= and ?at=, and lists versions', async () => {
    const s = await startServer();
    const v1 = await call(s.url, 'POST', '/v1/documents?path=my@file/x.txt', { body: 'one' });
    await new Promise((r) => setTimeout(r, 5));
    const between = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    const v2 = await call(s.url, 'POST', '/v1/documents?path=my@file/x.txt', { body: 'two' });
    const latest = await call(s.url, 'GET', '/v1/paths/my@file/x.txt');
    expect(latest.body.toString()).toBe('two');
    expect(latest.headers['x-kura-version']).toBe('2');
    expect(latest.headers['content-location']).toBe(`/v1/documents/${v2.json.digest}`);
    expect((await call(s.url, 'GET', '/v1/paths/my@file/x.txt?version=1')).body.toString()).toBe('one');
    expect((await call(s.url, 'GET', `/v1/paths/my@file/x.txt?at=${encodeURIComponent(between)}`)).body.toString()).toBe('one');
    expect((await call(s.url, 'HEAD', '/v1/paths/my@file/x.txt')).headers['content-length']).toBe('3');
    expect(errorCode(await call(s.url, 'GET', '/v1/paths/my@file/x.txt?version=3'))).toBe('NOT_FOUND');
    expect(errorCode(await call(s.url, 'GET', '/v1/paths/my@file/x.txt?version=0'))).toBe('INVALID_INPUT');
    expect(errorCode(await call(s.url, 'GET', '/v1/paths/my@file/x.txt?version=1&at=2020-01-01T00:00:00Z'))).toBe('INVALID_INPUT');
    expect(errorCode(await call(s.url, 'GET', '/v1/paths/nothing'))).toBe('NOT_FOUND');
    const versions = (await call(s.url, 'GET', `/v1/versions?path=${encodeURIComponent('my@file/x.txt')}`)).json.versions;
    expect(versions.map((v: { digest: string }) => v.digest)).toEqual([v1.json.digest, v2.json.digest]);
  });

  it('searches with snippets; any query is answered, malformed syntax read as words and said; POST takes long ones', async () => {
    const s = await startServer();
    await call(s.url, 'POST', '/v1/documents?path=a.txt&tag=sea', { body: 'the harbour at dawn', headers: { 'content-type': 'text/plain' } });
    await call(s.url, 'POST', '/v1/documents?path=b.txt', { body: 'mountains and rivers', headers: { 'content-type': 'text/plain' } });
    const r = await call(s.url, 'GET', '/v1/search?q=harbour');
    expect(r.status).toBe(200);
    expect(r.json.hits).toHaveLength(1);
    expect(r.json.hits[0]).toMatchObject({ path: 'a.txt' });
    expect(r.json.hits[0].snippet).toContain('<mark>harbour</mark>');
    expect((await call(s.url, 'GET', '/v1/search?q=harbour&tag=none')).json.hits).toHaveLength(0);
    expect((await call(s.url, 'GET', '/v1/search?q=rivers&type=text/plain')).json.hits).toHaveLength(1);
    const malformed = await call(s.url, 'GET', '/v1/search?q=harbour%20AND%20(');
    expect(malformed.status).toBe(200);
    expect(malformed.json).toMatchObject({ hits: [{ path: 'a.txt' }], parsedAs: 'harbour', fallbacks: ['"AND" at the end was read as a word'] });
    expect((await call(s.url, 'GET', '/v1/search?q=what%20is%20(the)%20harbour%3F')).json).toMatchObject({ hits: [{ path: 'a.txt' }], parsedAs: 'harbour?' });
    const dangling = await call(s.url, 'GET', '/v1/search?q=harbour%20AND');
    expect(dangling.json).toMatchObject({ hits: [{ path: 'a.txt' }], parsedAs: 'harbour', fallbacks: ['"AND" at the end was read as a word'] });
    expect((await call(s.url, 'GET', '/v1/search?q=')).json).toEqual({ hits: [], mode: 'keyword', parsedAs: '' });
    expect(errorCode(await call(s.url, 'GET', '/v1/search'))).toBe('INVALID_INPUT');
    const long = `${'where is the harbour? '.repeat(600)}`;
    const posted = await call(s.url, 'POST', '/v1/search', { body: JSON.stringify({ q: long, tag: 'sea', limit: 5 }), headers: { 'content-type': 'application/json' } });
    expect(posted.status).toBe(200);
    expect(posted.json.hits.map((h: { path: string }) => h.path)).toEqual(['a.txt']);
    expect(errorCode(await call(s.url, 'POST', '/v1/search', { body: JSON.stringify({ q: 'x', limit: 'many' }), headers: { 'content-type': 'application/json' } }))).toBe('INVALID_INPUT');
    expect(errorCode(await call(s.url, 'GET', '/v1/search?q=x&limit=abc'))).toBe('INVALID_INPUT');
  });

  it('searches through versions (allVersions) and a snapshot (snapshot), by words', async () => {
    const s = await startServer();
    const put = (path: string, body: string) => call(s.url, 'POST', `/v1/documents?path=${path}`, { body, headers: { 'content-type': 'text/plain' } });
    await put('notes.md', 'the quokka plan');
    await put('notes.md', 'the plan, revised');
    expect((await call(s.url, 'GET', '/v1/search?q=quokka')).json.hits).toEqual([]);
    const all = await call(s.url, 'GET', '/v1/search?q=quokka&allVersions=true');
    expect(all.json.hits.map((h: { path: string; version: number }) => `${h.path}@${h.version}`)).toEqual(['notes.md@1']);
    const posted = await call(s.url, 'POST', '/v1/search', { body: JSON.stringify({ q: 'quokka', allVersions: true }), headers: { 'content-type': 'application/json' } });
    expect(posted.json.hits[0]).toMatchObject({ path: 'notes.md', version: 1, matched: ['keyword'] });
    expect((await call(s.url, 'GET', '/v1/search?q=quokka&snapshot=ffffffff')).status).toBe(404);
    // A malformed id is named by the parameter the client gave (it said `id`: a trial).
    expect((await call(s.url, 'GET', '/v1/search?q=quokka&snapshot=1')).json.error).toMatchObject({ code: 'INVALID_INPUT', field: 'snapshot' });
    expect((await call(s.url, 'GET', '/v1/search?q=quokka&allVersions=true&mode=semantic')).status).toBe(400);
  });

  it('finds uploaded PDF, DOCX and HTML by their text; GET /v1/index reports extraction and names failures', async () => {
    const s = await startServer();
    const pdf = makePdf(['An invoice for the echidnaviolin repair.']);
    const docx = await makeDocx(['Agenda: the quollpiano recital.']);
    await call(s.url, 'POST', '/v1/documents?path=invoice.pdf', { body: pdf, headers: { 'content-type': 'application/pdf' } });
    await call(s.url, 'POST', '/v1/documents?path=agenda.docx', { body: docx });
    await call(s.url, 'POST', '/v1/documents?path=page.html', { body: makeHtml('Notes', ['The wallabyoboe rehearsal.']), headers: { 'content-type': 'text/html' } });
    await call(s.url, 'POST', '/v1/documents?path=broken.pdf', { body: 'not a pdf at all', headers: { 'content-type': 'application/pdf' } });
    const status = await call(s.url, 'GET', '/v1/index?wait=true');
    expect(status.status).toBe(200);
    expect(status.json).toMatchObject({ queued: 0, extracted: { ok: 3, capped: 0, failed: 1 }, embedding: null }); // semantic search is off by default
    expect(status.json.problems).toEqual([expect.objectContaining({ path: 'broken.pdf', kind: 'pdf', status: 'failed' })]);
    for (const [word, path] of [['echidnaviolin', 'invoice.pdf'], ['quollpiano', 'agenda.docx'], ['wallabyoboe', 'page.html']]) {
      expect((await call(s.url, 'GET', `/v1/search?q=${word}`)).json.hits.map((h: { path: string }) => h.path)).toEqual([path]);
    }
    expect(errorCode(await call(s.url, 'GET', '/v1/index?wait=maybe'))).toBe('INVALID_INPUT');
  });

  it('with KURA_SEMANTIC on, answers a question by meaning (mode=semantic, and hybrid by default); without, 503 MODEL_UNAVAILABLE', { timeout: 60_000 }, async () => {
    const s = await startServer({ semantic: 'on' });
    await call(s.url, 'POST', '/v1/documents?path=cars/oil.txt', { body: 'Motor lubricant should be replaced every 8,000 kilometres; check the dipstick monthly.', headers: { 'content-type': 'text/plain' } });
    await call(s.url, 'POST', '/v1/documents?path=pets/cats.txt', { body: 'Felines need fresh water daily and a clean litter tray.', headers: { 'content-type': 'text/plain' } });
    const q = encodeURIComponent('How often does my automobile require servicing?');
    const semantic = await call(s.url, 'GET', `/v1/search?q=${q}&mode=semantic`);
    expect(semantic.status).toBe(200);
    expect(semantic.json.hits[0]).toMatchObject({ path: 'cars/oil.txt', semantic: { rank: 1 } });
    const hybrid = await call(s.url, 'GET', `/v1/search?q=${q}`);
    expect(hybrid.json.hits[0]).toMatchObject({ path: 'cars/oil.txt', semantic: { rank: 1 } });
    expect(hybrid.json.hits[0].keyword).toBeUndefined(); // no shared word
    const status = await call(s.url, 'GET', '/v1/index?wait=true');
    expect(status.json.embedding).toEqual({ model: 'all-MiniLM-L6-v2-int8@8199be6f', documents: 2, chunks: 2, pending: 0 });
    // A backlog (~4 s for the model here): a search waits waitMs (default 1 s) for it, then
    // answers from what is embedded and says how many documents it could not see.
    for (let i = 0; i < 200; i++) await call(s.url, 'POST', `/v1/documents?path=notes/${i}.txt`, { body: `Note ${i}: the engine was serviced and the oil replaced.`, headers: { 'content-type': 'text/plain' } });
    const partial = await call(s.url, 'GET', `/v1/search?q=${q}&waitMs=50`);
    expect(partial.status).toBe(200);
    expect(partial.json.notEmbedded).toBeGreaterThan(100);
    expect(partial.json.hits.length).toBeGreaterThan(0);
    expect(errorCode(await call(s.url, 'GET', `/v1/search?q=${q}&waitMs=soon`))).toBe('INVALID_INPUT');
    expect(errorCode(await call(s.url, 'GET', `/v1/search?q=${q}&waitMs=60000`))).toBe('INVALID_INPUT'); // past the connection's idle timeout
    const plain = await startServer();
    const r = await call(plain.url, 'GET', `/v1/search?q=${q}&mode=hybrid`);
    expect(r.status).toBe(503);
    expect(errorCode(r)).toBe('MODEL_UNAVAILABLE');
    expect((await call(plain.url, 'GET', '/v1/search?q=x&mode=vector')).status).toBe(400);
  });

  it('damaged data is reported, never served as good: 500 CORRUPT_DATA, or a cut stream', async () => {
    const s = await startServer();
    const small = randomBytes(30, 3000);
    const large = randomBytes(31, 3 << 20);
    const ds = (await call(s.url, 'POST', '/v1/documents', { body: small })).json.digest;
    const dl = (await call(s.url, 'POST', '/v1/documents', { body: large })).json.digest;
    const packs = join(s.dir, 'store', 'packs');
    const pack = readdirSync(packs, { recursive: true, withFileTypes: true }).find((f) => f.isFile() && f.name.endsWith('.pack'))!;
    const file = join(pack.parentPath, pack.name);
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.from('garbage!'), 0, 8, 200); // inside the small document's only chunk
    writeSync(fd, Buffer.from('garbage!'), 0, 8, statSync(file).size - 1000); // in the large one's last chunk
    closeSync(fd);

    const r = await call(s.url, 'GET', `/v1/documents/${ds}`);
    expect(r.status).toBe(500);
    expect(errorCode(r)).toBe('CORRUPT_DATA');
    // Not with the headers of the success it was preparing: a 500 cached for a year, with the
    // document's ETag, would outlive the repair.
    expect([r.headers.etag, r.headers['cache-control'], r.headers['accept-ranges']]).toEqual([undefined, undefined, undefined]);
    const ranged = await call(s.url, 'GET', `/v1/documents/${ds}`, { headers: { range: 'bytes=100-300' } });
    expect([ranged.status, ranged.headers['content-range'], ranged.headers.etag]).toEqual([500, undefined, undefined]);
    // HEAD answers as GET does (it was 200: a trial).
    for (const headers of [{}, { range: 'bytes=100-300' }]) expect((await call(s.url, 'HEAD', `/v1/documents/${ds}`, { headers })).status).toBe(500);
    // The large document streams: its status is sent before the damage is reached, so the
    // connection is cut and the client never gets a complete body.
    const res = await request(`${s.url}/v1/documents/${dl}`);
    expect(res.statusCode).toBe(200);
    let got = 0;
    await expect(
      (async () => {
        for await (const piece of res.body) got += piece.length;
      })(),
    ).rejects.toThrow();
    expect(got).toBeLessThan(large.length);
    // Verify reports both.
    const v = (await call(s.url, 'POST', '/v1/verify')).json;
    expect(v.ok).toBe(false);
    expect(v.damagedDocuments.map((d: { digest: string }) => d.digest).sort()).toEqual([ds, dl].sort());
    // The database is as its log makes it: compared, and clean (decision 0073).
    expect(v).toMatchObject({ catalogChecked: true, damagedCatalog: [] });
    expect(v.catalogRowsChecked).toBeGreaterThan(0);
  });

  it('a range of a damaged document of several chunks under 1 MiB is a 500 too, before any byte (it was a 206 cut mid-body)', async () => {
    const s = await startServer();
    const doc = randomBytes(32, 200_000);
    expect((await call(s.url, 'POST', '/v1/documents?path=c/small.bin', { body: doc })).status).toBe(201);
    const packs = join(s.dir, 'store', 'packs');
    const pack = readdirSync(packs, { recursive: true, withFileTypes: true }).find((f) => f.isFile() && f.name.endsWith('.pack'))!;
    const file = join(pack.parentPath, pack.name);
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.from('garbage!'), 0, 8, Math.floor(statSync(file).size / 2));
    closeSync(fd);
    await s.app.store.close().catch(() => undefined); // (no chunk kept in memory: read from the pack)
    const s2 = await startServer({ store: join(s.dir, 'store') });
    const r = await call(s2.url, 'GET', '/v1/paths/c/small.bin', { headers: { range: 'bytes=60000-140000' } });
    expect([r.status, errorCode(r), r.headers['content-range']]).toEqual([500, 'CORRUPT_DATA', undefined]);
    // Any range of it: the document is read whole and checked as one (docs/HTTP.md).
    const other = await call(s2.url, 'GET', '/v1/paths/c/small.bin', { headers: { range: 'bytes=0-99' } });
    expect([other.status, errorCode(other)]).toEqual([500, 'CORRUPT_DATA']);
  });
});

describe('paths are entries over HTTP (decision 0025)', () => {
  it('the same bytes at two paths list twice; tags go on one path; a digest that two paths show is 409 AMBIGUOUS', async () => {
    const s = await startServer();
    const body = textBytes(40, 500);
    const d = sha(body);
    for (const path of ['a/LICENSE', 'b/LICENSE']) expect((await call(s.url, 'POST', `/v1/documents?path=${path}`, { body })).status).toBe(201);
    const list = (await call(s.url, 'GET', '/v1/documents')).json;
    expect(list.items.map((e: { path: string; digest: string; version: number }) => [e.path, e.digest, e.version])).toEqual([
      ['a/LICENSE', d, 1],
      ['b/LICENSE', d, 1],
    ]);
    const json = { headers: { 'content-type': 'application/json' } };
    const patched = await call(s.url, 'PATCH', '/v1/entry?path=a/LICENSE', { ...json, body: JSON.stringify({ addTags: ['legal'], meta: { owner: 'ada' } }) });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ path: 'a/LICENSE', tags: ['legal'], meta: { owner: 'ada' } });
    expect((await call(s.url, 'GET', '/v1/entry?path=b/LICENSE')).json).toMatchObject({ path: 'b/LICENSE', tags: [], meta: {} });

    const ambiguous = await call(s.url, 'PATCH', `/v1/documents/${d}/meta`, { ...json, body: JSON.stringify({ addTags: ['x'] }) });
    expect(ambiguous.status).toBe(409);
    expect(errorCode(ambiguous)).toBe('AMBIGUOUS');
    expect(ambiguous.json.error.paths).toEqual(['a/LICENSE', 'b/LICENSE']);
    expect((await call(s.url, 'GET', `/v1/documents/${d}/meta`)).status).toBe(409);
    // A rename through PATCH (before schema 6) is no longer a change there is.
    expect((await call(s.url, 'PATCH', '/v1/entry?path=a/LICENSE', { ...json, body: JSON.stringify({ path: 'c' }) })).status).toBe(400);

    // Deleting one path leaves the other, and then the digest names one entry again.
    expect((await call(s.url, 'DELETE', '/v1/entry?path=a/LICENSE')).status).toBe(204);
    expect((await call(s.url, 'DELETE', '/v1/entry?path=a/LICENSE')).status).toBe(404);
    expect((await call(s.url, 'GET', `/v1/documents/${d}/meta`)).json).toMatchObject({ path: 'b/LICENSE' });
    expect((await call(s.url, 'GET', '/v1/paths/b/LICENSE')).status).toBe(200);
    const stats = (await call(s.url, 'GET', '/v1/stats')).json;
    expect(stats).toMatchObject({ entries: 1, documents: 1 });
  });

  it("a path is served with its own media type, whatever other entries with the same bytes say", async () => {
    const s = await startServer();
    const body = 'same bytes <b>here</b>';
    const typeAt = async (path: string) => {
      const r = await call(s.url, 'GET', `/v1/paths/${path}`);
      expect(r.status).toBe(200);
      return [r.headers['content-type'], r.headers['content-security-policy']];
    };
    expect((await call(s.url, 'POST', '/v1/documents?path=a/readme.txt', { body, headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    expect(await typeAt('a/readme.txt')).toEqual(['text/plain', undefined]);
    // The same bytes stored without a path as HTML, and at another path as HTML: a/readme.txt
    // stays text (it was served as the pathless entry's text/html, sandboxed).
    expect((await call(s.url, 'POST', '/v1/documents', { body, headers: { 'content-type': 'text/html' } })).status).toBe(201);
    expect((await call(s.url, 'POST', '/v1/documents?path=b/page.html', { body })).status).toBe(201);
    expect(await typeAt('a/readme.txt')).toEqual(['text/plain', undefined]);
    expect(await typeAt('b/page.html')).toEqual(['text/html', 'sandbox']);
    // A type changed on the entry is the type served.
    const json = { headers: { 'content-type': 'application/json' } };
    expect((await call(s.url, 'PATCH', '/v1/entry?path=b/page.html', { ...json, body: JSON.stringify({ mediaType: 'text/markdown' }) })).status).toBe(200);
    expect(await typeAt('b/page.html')).toEqual(['text/markdown', undefined]);
    expect((await call(s.url, 'GET', '/v1/paths/b/page.html?version=1')).headers['content-type']).toBe('text/markdown');
  });

  it("a put at a path answers the path's version: made, or the latest that had its bytes", async () => {
    const s = await startServer();
    const put = async (body: string) => (await call(s.url, 'POST', '/v1/documents?path=v/n.md', { body, headers: { 'content-type': 'text/markdown' } })).json;
    expect(await put('one')).toMatchObject({ version: 1, versionMade: true });
    expect(await put('two')).toMatchObject({ version: 2, versionMade: true });
    expect(await put('two')).toMatchObject({ version: 2, versionMade: false });
    expect(await call(s.url, 'POST', '/v1/documents', { body: 'no path' }).then((r) => r.json)).not.toHaveProperty('version');
  });

  it('a document read by its digest has the type its entries share (it was octet-stream for two .md paths: a trial), else none', async () => {
    const s = await startServer();
    const body = '# same notes\n';
    const put = async (path: string, type: string) => (await call(s.url, 'POST', `/v1/documents?path=${path}`, { body, headers: { 'content-type': type } })).json.digest as string;
    const digest = await put('a.md', 'text/markdown');
    const typeOf = async () => (await call(s.url, 'GET', `/v1/documents/${digest}`)).headers['content-type'];
    expect(await typeOf()).toBe('text/markdown');
    await put('docs/a.md', 'text/markdown');
    expect(await typeOf()).toBe('text/markdown');
    expect((await call(s.url, 'HEAD', `/v1/documents/${digest}`)).headers['content-type']).toBe('text/markdown');
    await put('b.txt', 'text/plain');
    expect(await typeOf()).toBe('application/octet-stream'); // two types: neither is the bytes'
  });
});

describe('media types of uploads (one detection with kura add)', () => {
  it("curl's default form type, octet-stream or none: detected from the path, then the bytes; a real type is kept", async () => {
    const s = await startServer();
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(41, 3000)]);
    const typeOf = async (path: string, body: Uint8Array, contentType?: string) => {
      const put = await call(s.url, 'POST', `/v1/documents${path ? `?path=${path}` : ''}`, { body, headers: contentType ? { 'content-type': contentType } : {} });
      expect(put.status).toBe(201);
      return (await call(s.url, 'GET', `/v1/documents/${put.json.digest}`)).headers['content-type'];
    };
    const form = 'application/x-www-form-urlencoded';
    expect(await typeOf('img/photo.jpg', randomBytes(42, 2000), form)).toBe('image/jpeg'); // by the path
    expect(await typeOf('', png, form)).toBe('image/png'); // by the bytes
    expect(await typeOf('', textBytes(43, 900), 'application/octet-stream')).toMatch(/^text\/plain/);
    expect(await typeOf('notes/a.md', textBytes(44, 900))).toMatch(/^text\/markdown/);
    expect(await typeOf('', randomBytes(45, 700), form)).toBe('application/octet-stream'); // nothing to tell
    expect(await typeOf('x.bin', textBytes(46, 900), 'text/csv')).toMatch(/^text\/csv/); // a type that says something is kept
    // A streamed body (no length) is detected from its first bytes and stored whole.
    async function* pieces() {
      yield png.subarray(0, 3);
      yield png.subarray(3, 700);
      yield png.subarray(700);
    }
    const streamed = await call(s.url, 'POST', '/v1/documents?path=upload', { body: pieces(), headers: { 'content-type': form } });
    expect(streamed.json.digest).toBe(sha(png));
    expect((await call(s.url, 'GET', '/v1/paths/upload')).headers['content-type']).toBe('image/png');
  });
});

describe('what an integrator meets (HTTP trial)', () => {
  it('a long path in a script UTF-8 writes in 3 bytes is read back by path (36 KiB of URL); tags agree in any order; a DELETE saying JSON with no body goes through', async () => {
    const s = await startServer();
    const path = `图/${'书'.repeat(4000)}`;
    const put = await call(s.url, 'POST', `/v1/documents?path=${encodeURIComponent(path)}`, { body: 'long path' });
    expect(put.status).toBe(201);
    const got = await call(s.url, 'GET', `/v1/paths/${path.split('/').map(encodeURIComponent).join('/')}`);
    expect([got.status, got.body.toString()]).toEqual([200, 'long path']);
    // At most 4,096 UTF-16 code units, as documented: 3,000 emoji are 6,000 (zod counted 3,000).
    const emoji = await call(s.url, 'POST', `/v1/documents?path=${encodeURIComponent('😀'.repeat(3000))}`, { body: 'x' });
    expect([emoji.status, errorCode(emoji)]).toEqual([400, 'INVALID_INPUT']);
    expect((await call(s.url, 'POST', `/v1/documents?path=${encodeURIComponent('😀'.repeat(2048))}`, { body: 'x' })).status).toBe(201);
    const tagged = await call(s.url, 'POST', '/v1/documents?path=both/5.txt&tag=a&tag=b', { body: 'x', headers: { 'x-kura-tags': 'b, a' } });
    expect(tagged.status).toBe(201);
    expect((await call(s.url, 'GET', '/v1/entry?path=both/5.txt')).json.tags.sort()).toEqual(['a', 'b']);
    const differ = await call(s.url, 'POST', '/v1/documents?path=both/6.txt&tag=a', { body: 'x', headers: { 'x-kura-tags': 'b' } });
    expect(errorCode(differ)).toBe('INVALID_INPUT');
    const del = await call(s.url, 'DELETE', '/v1/entry?path=both/5.txt', { headers: { 'content-type': 'application/json' } });
    expect(del.status).toBe(204);
  });

  it('a cursor no entry ever had is refused (it listed nothing, as if at the end); one whose entry was deleted goes on', async () => {
    const s = await startServer();
    for (let i = 0; i < 3; i++) await call(s.url, 'POST', `/v1/documents?path=c/${i}.txt`, { body: `c${i}` });
    const cursorOf = (id: number) => Buffer.from(`e${id}`).toString('base64url');
    for (const id of [999_999, 0]) expect(errorCode(await call(s.url, 'GET', `/v1/documents?limit=1&cursor=${cursorOf(id)}`))).toBe('INVALID_INPUT');
    const first = (await call(s.url, 'GET', '/v1/documents?limit=1')).json;
    await call(s.url, 'DELETE', `/v1/entry?path=${first.items[0].path}`);
    const rest = (await call(s.url, 'GET', `/v1/documents?cursor=${first.nextCursor}`)).json.items.map((d: { path: string }) => d.path);
    expect(rest).toEqual(['c/1.txt', 'c/2.txt']);
  });

  it('a document made of chunks is typed by its path as a POST is; XSL is sandboxed as XML is', async () => {
    const s = await startServer();
    const bytes = new TextEncoder().encode('# notes\n'); // (one chunk)
    const key = blake3(bytes);
    expect((await call(s.url, 'PUT', `/v1/chunks/${key}`, { body: bytes })).status).toBe(201);
    const made = await call(s.url, 'POST', '/v1/documents:commit', { json: { chunks: [key], path: 'sync/a.md' } });
    expect([made.status, made.json.mediaType ?? (await call(s.url, 'GET', '/v1/entry?path=sync/a.md')).json.mediaType]).toEqual([201, 'text/markdown']);
    await call(s.url, 'POST', '/v1/documents?path=x/style.xsl&type=text/xsl', { body: '<xsl:stylesheet/>' });
    const xsl = await call(s.url, 'GET', '/v1/paths/x/style.xsl');
    expect([xsl.headers['content-type'], xsl.headers['content-security-policy']]).toEqual(['text/xsl', 'sandbox']);
  });
});
