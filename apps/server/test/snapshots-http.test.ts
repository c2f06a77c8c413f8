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

  it('copies the tree field by field: nothing else the client sent reaches the log', () => {
    const tree = treeOf({ type: 'dir', name: '', mode: 0o755, extra: 'x', entries: [{ type: 'symlink', name: 'l', target: 't', also: { big: 'y' } }] });
    expect(tree).toEqual({ type: 'dir', name: '', mode: 0o755, entries: [{ type: 'symlink', name: 'l', target: 't' }] });
  });
});
