/**
 * What a put's inputs may say: a value given both in the query and in a header must agree
 * (an expected digest given twice, differently, was dropped without a word, its check with
 * it); raw UTF-8 in x-kura-path is read as UTF-8, not stored as mojibake; a document made of
 * uploaded chunks is held to the server's document limit as an upload is.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { blake3 } from '@kura/core';
import { afterAll, describe, expect, it } from 'vitest';
import { call, closeAll, startServer } from './helpers/server.js';

afterAll(closeAll);
const sha = (b: Uint8Array | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const code = (r: { json: any }) => r.json?.error?.code;

describe('put inputs', () => {
  it('the query and a header must agree where both give a value; nothing is stored when they do not', async () => {
    const s = await startServer();
    const body = 'the body';
    const wrong = await call(s.url, 'POST', `/v1/documents?path=a.txt&digest=${sha(body)}`, { body, headers: { 'x-kura-sha256': sha('') } });
    expect([wrong.status, code(wrong)]).toEqual([400, 'INVALID_INPUT']);
    expect(wrong.json.error.message).toMatch(/digest is given twice/);
    for (const [query, headers] of [
      ['path=a.txt', { 'x-kura-path': 'b.txt' }],
      ['path=a.txt&tag=fromq', { 'x-kura-tags': 'fromhdr' }],
      ['path=a.txt&meta=%7B%22k%22%3A%22v%22%7D', { 'x-kura-meta': '{"k":"w"}' }],
      ['path=a.txt&type=text/plain', { 'content-type': 'image/png' }], // (the header was dropped)
    ] as const) {
      expect((await call(s.url, 'POST', `/v1/documents?${query}`, { body, headers })).status).toBe(400);
    }
    expect((await call(s.url, 'GET', '/v1/documents')).json.items).toEqual([]);
    // The same value twice is fine.
    const same = await call(s.url, 'POST', `/v1/documents?path=a.txt&digest=${sha(body)}&tag=t&type=text/plain`, { body, headers: { 'x-kura-sha256': sha(body).slice(7).toUpperCase(), 'x-kura-path': 'a.txt', 'x-kura-tags': 't', 'content-type': 'Text/Plain; charset=utf-8' } });
    expect(same.status).toBe(201);
    // A Content-Type that says nothing of the bytes is no second value.
    expect((await call(s.url, 'POST', '/v1/documents?path=b.txt&type=text/markdown', { body, headers: { 'content-type': 'application/octet-stream' } })).status).toBe(201);
    expect((await call(s.url, 'GET', '/v1/entry?path=b.txt')).json.mediaType).toBe('text/markdown');
  });

  it('a "__proto__" metadata key is refused, named, wherever it comes from (it was dropped, or called invalid JSON)', async () => {
    const s = await startServer();
    const body = 'x';
    for (const [query, headers] of [
      [`path=p.txt&meta=${encodeURIComponent('{"__proto__":"y","k":"v"}')}`, {}],
      ['path=p.txt', { 'x-kura-meta': '{"__proto__":"y","k":"v"}' }],
    ] as const) {
      const r = await call(s.url, 'POST', `/v1/documents?${query}`, { body, headers });
      expect([r.status, code(r)]).toEqual([400, 'INVALID_INPUT']);
      expect(r.json.error.message).toMatch(/"__proto__" is not accepted/);
    }
    expect((await call(s.url, 'GET', '/v1/documents')).json.items).toEqual([]);
    expect((await call(s.url, 'POST', '/v1/documents?path=p.txt', { body })).status).toBe(201);
    const patched = await call(s.url, 'PATCH', '/v1/entry?path=p.txt', { body: '{"meta":{"__proto__":"y"}}', headers: { 'content-type': 'application/json' } });
    expect([patched.status, code(patched)]).toEqual([400, 'INVALID_INPUT']);
    expect(patched.json.error.message).toMatch(/__proto__/);
    // A wrong field of one change is named as the field, not as "updates[0]." of a batch the client never sent.
    const bad = await call(s.url, 'PATCH', '/v1/entry?path=p.txt', { body: JSON.stringify({ mediaType: 'text/plain,text/html' }), headers: { 'content-type': 'application/json' } });
    expect(bad.json.error.message).toMatch(/^mediaType: /);
  });

  it('a query escape that is not UTF-8 percent-encoding is refused; a % escaped as %25 is a %', async () => {
    const s = await startServer();
    for (const q of ['path=%FF%FE.txt', 'path=%ZZ.txt', 'path=a%2.txt']) {
      const r = await call(s.url, 'POST', `/v1/documents?${q}`, { body: 'x' });
      expect([q, r.status, code(r)]).toEqual([q, 400, 'INVALID_INPUT']);
    }
    expect((await call(s.url, 'GET', '/v1/documents')).json.items).toEqual([]);
    expect((await call(s.url, 'POST', '/v1/documents?path=%25ZZ%20%C3%A9.txt', { body: 'x' })).status).toBe(201);
    expect((await call(s.url, 'GET', '/v1/documents')).json.items.map((i: { path: string }) => i.path)).toEqual(['%ZZ é.txt']);
  });

  it('x-kura-path in raw UTF-8 is read as UTF-8; bytes that are not UTF-8 are refused', async () => {
    const s = await startServer();
    const raw = Buffer.from('hé/raw.txt', 'utf8').toString('latin1'); // what a client sending raw UTF-8 puts on the wire
    expect((await call(s.url, 'POST', '/v1/documents', { body: 'x', headers: { 'x-kura-path': raw } })).status).toBe(201);
    expect((await call(s.url, 'GET', '/v1/documents')).json.items.map((i: { path: string }) => i.path)).toEqual(['hé/raw.txt']);
    const latin1 = await call(s.url, 'POST', '/v1/documents', { body: 'y', headers: { 'x-kura-path': 'caf\u00e9.txt' } });
    expect([latin1.status, code(latin1)]).toEqual([400, 'INVALID_INPUT']);
    expect(latin1.json.error.message).toMatch(/percent-encode its text/);
    // x-kura-meta is not percent-decoded: its advice is another (it said to percent-encode: a trial).
    const meta = await call(s.url, 'POST', '/v1/documents', { body: 'z', headers: { 'x-kura-meta': '{"k":"\u00ff"}' } });
    expect([meta.status, meta.json.error.message]).toEqual([400, expect.stringMatching(/send its JSON as UTF-8, or write characters past ASCII as \\u escapes/)]);
  });

  it('an append past the document limit says the limit and what the upload holds (it said "a limit of 0 bytes")', async () => {
    const s = await startServer({ maxDocumentSize: 1000 });
    const loc = (await call(s.url, 'POST', '/v1/uploads')).headers.location as string;
    expect((await call(s.url, 'PATCH', loc, { body: new Uint8Array(1000) })).status).toBe(202);
    const over = await call(s.url, 'PATCH', loc, { body: new Uint8Array(1) });
    expect([over.status, code(over)]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    expect(over.json.error.message).toMatch(/document limit of 1000 bytes \(1000 received so far\)/);
  });

  it('a document committed from uploaded chunks over maxDocumentSize is 413, and nothing is stored', async () => {
    const s = await startServer({ maxDocumentSize: 1000 });
    const chunk = new Uint8Array(600).fill(7);
    const key = blake3(chunk); // (hex)
    expect((await call(s.url, 'PUT', `/v1/chunks/${key}`, { body: chunk })).status).toBe(201);
    const over = await call(s.url, 'POST', '/v1/documents:commit', { json: { chunks: [key, key], path: 'x/commit' } });
    expect([over.status, code(over)]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    expect((await call(s.url, 'GET', '/v1/documents')).json.items).toEqual([]);
    const under = await call(s.url, 'POST', '/v1/documents:commit', { json: { chunks: [key], path: 'x/one' } });
    expect(under.status).toBe(201);
  });
});

describe('what a header cannot carry, nor UTF-8 hold', () => {
  it('a media type with parameters past printable ASCII is refused when written, and one stored before is served as bytes, never a 500', async () => {
    const s = await startServer();
    // (`text/plain; x=一`: every read of it answered 500 — Node refuses such a header: a trial.)
    const refused = await call(s.url, 'POST', `/v1/documents?path=mt/cjk&type=${encodeURIComponent('text/plain; x=一')}`, { body: 'zz' });
    expect([refused.status, refused.json.error.code]).toEqual([400, 'INVALID_INPUT']);
    expect((await call(s.url, 'GET', '/v1/entry?path=mt/cjk')).status).toBe(404);
    expect((await call(s.url, 'POST', '/v1/documents?path=mt/ok', { body: 'zz' })).status).toBe(201);
    const patched = await call(s.url, 'PATCH', '/v1/entry?path=mt/ok', { json: { mediaType: 'text/plain; x=\u007f' } });
    expect(patched.status).toBe(400);
    // One stored by an older Kura: served, typed as bytes.
    const Database = createRequire(new URL('../../../packages/store/package.json', import.meta.url))('better-sqlite3');
    // Tried again between turns of the event loop: the server in this process may hold the
    // write lock over an await (its indexer, a commit), and better-sqlite3's own busy wait
    // blocks the loop that would let it go — 5 s, then "database is locked".
    const db = new Database(join(s.dir, 'store', 'kura.db'), { timeout: 0 });
    for (;;) {
      try {
        db.prepare("UPDATE entries SET media_type = 'text/plain; x=一' WHERE path = 'mt/ok'").run();
        break;
      } catch (e) {
        if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e;
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    db.close();
    for (const method of ['GET', 'HEAD'] as const) {
      const r = await call(s.url, method, '/v1/paths/mt/ok');
      expect([r.status, r.headers['content-type']], method).toEqual([200, 'application/octet-stream']);
    }
  });

  it('tags and metadata with a lone surrogate are refused: they were stored as U+FFFD, two tags made one', async () => {
    const s = await startServer();
    expect((await call(s.url, 'POST', '/v1/documents?path=sur/x', { body: 's' })).status).toBe(201);
    const r = await call(s.url, 'PATCH', '/v1/entry?path=sur/x', { body: '{"meta":{"k":"a\\ud800"},"addTags":["t\\ud83d","t\\ud83e"]}', headers: { 'content-type': 'application/json' } });
    expect([r.status, r.body.toString()]).toEqual([400, expect.stringMatching(/INVALID_INPUT.*well-formed Unicode/)]);
    expect((await call(s.url, 'GET', '/v1/entry?path=sur/x')).json).toMatchObject({ tags: [], meta: {} });
  });
});
