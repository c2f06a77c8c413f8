/** Snapshots over HTTP: a tree of files already put, recorded, listed, deleted; hostile trees refused with 400. */
import { afterAll, describe, expect, it } from 'vitest';
import { call, closeAll, errorCode, startServer } from './helpers/server.js';
import { treeOf } from '../src/routes/snapshots.js';

afterAll(closeAll);

describe('snapshots over HTTP', () => {
  it('records a tree of stored files, lists it, refuses what it cannot hold, deletes it', async () => {
    const s = await startServer();
    const a = (await call(s.url, 'POST', '/v1/documents?path=src/a.txt', { body: 'alpha\n' })).json;
    const b = (await call(s.url, 'POST', '/v1/documents?path=src/b.txt', { body: 'beta beta\n' })).json;
    const root = {
      type: 'dir',
      name: '',
      mode: 0o755,
      entries: [
        { type: 'file', name: 'a.txt', mode: 0o644, size: a.size, digest: a.digest, mtime: 1_700_000_000_000 },
        { type: 'dir', name: 'sub', mode: 0o755, entries: [{ type: 'file', name: 'b.txt', mode: 0o600, size: b.size, digest: b.digest }] },
        { type: 'symlink', name: 'link', target: 'a.txt' },
      ],
    };
    const made = await call(s.url, 'POST', '/v1/snapshots', { json: { label: 'first', root } });
    expect(made.status, made.body.toString()).toBe(201);
    expect(made.json).toMatchObject({ label: 'first', files: 2, bytes: a.size + b.size });
    expect(made.json.id).toMatch(/^[0-9a-f]{32}$/);
    // The store walks it as the CLI's snapshots are walked.
    const entries = [];
    for await (const e of s.app.store.snapshotEntries(made.json.id)) entries.push(e.path);
    expect(entries.sort()).toEqual(['a.txt', 'link', 'sub', 'sub/b.txt']);
    const listed = await call(s.url, 'GET', '/v1/snapshots');
    expect(listed.json.snapshots.map((x: { id: string }) => x.id)).toEqual([made.json.id]);

    // A file the store lacks: 404, nothing recorded.
    const missing = { ...root, entries: [{ type: 'file', name: 'x', mode: 0o644, size: 1, digest: `sha256:${'ab'.repeat(32)}` }] };
    expect(errorCode(await call(s.url, 'POST', '/v1/snapshots', { json: { root: missing } }))).toBe('NOT_FOUND');
    // Malformed trees: 400 naming where; a tree nested 20,000 deep too (no stack overflow).
    for (const bad of [
      { type: 'file' },
      { ...root, entries: [{ type: 'file', name: 'x', mode: 0o644, size: -1, digest: a.digest }] },
      { ...root, entries: [{ type: 'fifo', name: 'x' }] },
      { ...root, entries: [{ type: 'file', name: 'x/y', mode: 0o644, size: a.size, digest: a.digest }] },
      { ...root, mode: 0o10000 },
    ]) {
      const r = await call(s.url, 'POST', '/v1/snapshots', { json: { root: bad } });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(errorCode(r)).toBe('INVALID_INPUT');
    }
    const depth = 20_000; // (as text: JSON.stringify itself overflows at this depth)
    const open = '{"type":"dir","name":"d","mode":493,"entries":[';
    const deepBody = `{"root":{"type":"dir","name":"","mode":493,"entries":[${open.repeat(depth)}${']}'.repeat(depth)}]}}`;
    const deepRes = await call(s.url, 'POST', '/v1/snapshots', { body: deepBody, headers: { 'content-type': 'application/json' } });
    expect(deepRes.status).toBe(400);
    expect(deepRes.json.error.message).toContain('nest at most');
    expect((await call(s.url, 'GET', '/v1/snapshots')).json.snapshots).toHaveLength(1);

    expect((await call(s.url, 'DELETE', `/v1/snapshots/${made.json.id.slice(0, 8)}`)).status).toBe(204);
    expect(errorCode(await call(s.url, 'DELETE', `/v1/snapshots/${made.json.id}`))).toBe('NOT_FOUND');
    expect((await call(s.url, 'GET', '/v1/snapshots')).json.snapshots).toEqual([]);
  });

  it("a snapshot search's hit is read at /v1/snapshots/{id}/files/{path}, also when only the snapshot keeps it; a prefix-limited token may not", async () => {
    const admin = 'a'.repeat(32);
    const limited = 'l'.repeat(32);
    const s = await startServer({ noAuth: false, tokens: [{ token: admin, scopes: ['admin'] }, { token: limited, scopes: ['read'], prefixes: ['snaponly/'] }] });
    const q = (await call(s.url, 'POST', '/v1/documents?path=snaponly/q.txt', { body: 'a quokka lives here\n', token: admin })).json;
    const root = { type: 'dir', name: '', mode: 0o755, entries: [{ type: 'dir', name: 'notes', mode: 0o755, entries: [{ type: 'file', name: 'q.txt', mode: 0o644, size: q.size, digest: q.digest }] }] };
    const snap = (await call(s.url, 'POST', '/v1/snapshots', { json: { root }, token: admin })).json;
    expect((await call(s.url, 'DELETE', '/v1/entry?path=snaponly/q.txt', { token: admin })).status).toBe(204);
    // Kept by the snapshot alone: not a listed document any more.
    expect((await call(s.url, 'GET', `/v1/documents/${q.digest}`, { token: admin })).status).toBe(404);
    const hits = (await call(s.url, 'GET', `/v1/search?q=quokka&mode=keyword&snapshot=${snap.id}`, { token: admin })).json.hits;
    expect(hits).toMatchObject([{ path: 'notes/q.txt', digest: q.digest }]);
    const read = await call(s.url, 'GET', `/v1/snapshots/${snap.id.slice(0, 8)}/files/notes/q.txt`, { token: admin });
    expect([read.status, read.body.toString(), read.headers.etag]).toEqual([200, 'a quokka lives here\n', `"${q.digest}"`]);
    expect((await call(s.url, 'HEAD', `/v1/snapshots/${snap.id}/files/notes/q.txt`, { token: admin })).headers['content-length']).toBe(String(q.size));
    expect(errorCode(await call(s.url, 'GET', `/v1/snapshots/${snap.id}/files/notes`, { token: admin }))).toBe('NOT_FOUND');
    expect(errorCode(await call(s.url, 'GET', `/v1/snapshots/${snap.id}/files/notes/none.txt`, { token: admin }))).toBe('NOT_FOUND');
    expect(errorCode(await call(s.url, 'GET', `/v1/snapshots/${snap.id}/files/..%2Fx`, { token: admin }))).toBe('INVALID_INPUT');
    expect((await call(s.url, 'GET', `/v1/snapshots/${snap.id}/files/notes/q.txt`, { token: limited })).status).toBe(403);
  });

  it('a body key POST /v1/snapshots does not know is refused: `lable` dropped the label, and a retention tag with it (a trial)', async () => {
    const s = await startServer();
    const r = await call(s.url, 'POST', '/v1/snapshots', { json: { lable: 'release-1', root: { type: 'dir', name: '', mode: 0o755, entries: [] } } });
    expect([r.status, errorCode(r)]).toEqual([400, 'INVALID_INPUT']);
    expect((await call(s.url, 'GET', '/v1/snapshots')).json.snapshots).toEqual([]);
  });

  it('copies the tree field by field, and refuses a key the format has not (it was dropped without a word: a trial)', () => {
    const tree = treeOf({ type: 'dir', name: '', mode: 0o755, entries: [{ type: 'symlink', name: 'l', target: 't' }] });
    expect(tree).toEqual({ type: 'dir', name: '', mode: 0o755, entries: [{ type: 'symlink', name: 'l', target: 't' }] });
    expect(() => treeOf({ type: 'dir', name: '', mode: 0o755, extra: 'x', entries: [] })).toThrow(/no "extra"/);
    expect(() => treeOf({ type: 'dir', name: '', mode: 0o755, entries: [{ type: 'symlink', name: 'l', target: 't', mode: 0o777 }] })).toThrow(/entries\[0\]: a symlink entry has no "mode"/);
    expect(() => treeOf({ type: 'dir', name: '', mode: 0o755, entries: [{ type: 'file', name: 'f', mode: 0o644, size: 0, digest: `sha256:${'0'.repeat(64)}`, owner: 'root' }] })).toThrow(/no "owner"/);
  });
});
