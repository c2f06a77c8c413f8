/**
 * Retention over HTTP (decision 0058): snapshots recorded as of given times with tags, a
 * policy's dry run and its run, pins that survive it, versions forgotten under a prefix with
 * each path's newest and pinned versions kept, and the refusals (no rules, both kinds, a bad
 * duration) that change nothing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { call, closeAll, errorCode, startServer } from './helpers/server.js';

afterAll(closeAll);

const root = { type: 'dir', name: '', mode: 493, entries: [] };

describe('POST /v1/forget and pins', () => {
  it('forgets snapshots by restic’s rules and versions by count, keeping what is pinned', async () => {
    const s = await startServer();
    const ids: string[] = [];
    for (let d = 1; d <= 6; d++) {
      const r = await call(s.url, 'POST', '/v1/snapshots', { json: { root, time: `2024-05-0${d}T08:00:00Z`, tags: d === 2 ? ['release'] : [] } });
      expect(r.status).toBe(201);
      expect(r.json).toMatchObject({ createdAt: `2024-05-0${d}T08:00:00.000Z`, pinned: false });
      ids.push(r.json.id);
    }
    expect((await call(s.url, 'PUT', `/v1/snapshots/${ids[0]!.slice(0, 6)}/pin`)).status).toBe(204);
    const policy = { snapshots: { last: 2, tags: [['release']] } };
    const dry = await call(s.url, 'POST', '/v1/forget', { json: { ...policy, dryRun: true } });
    expect(dry.status).toBe(200);
    expect(dry.json.keep.map((k: { id: string; reasons: string[] }) => [ids.indexOf(k.id) + 1, k.reasons])).toEqual([
      [6, ['last snapshot']],
      [5, ['last snapshot']],
      [2, ['has tags [release]']],
      [1, ['pinned']],
    ]);
    expect((await call(s.url, 'GET', '/v1/snapshots')).json.snapshots).toHaveLength(6);
    const done = await call(s.url, 'POST', '/v1/forget', { json: policy });
    expect(done.json).toEqual(dry.json);
    const left = (await call(s.url, 'GET', '/v1/snapshots')).json.snapshots;
    expect(left.map((x: { id: string }) => ids.indexOf(x.id) + 1).sort()).toEqual([1, 2, 5, 6]);
    expect(left.find((x: { id: string }) => x.id === ids[0])).toMatchObject({ pinned: true });
    expect(left.find((x: { id: string }) => x.id === ids[1])).toMatchObject({ tags: ['release'] });

    for (let i = 1; i <= 4; i++) await call(s.url, 'POST', '/v1/documents?path=notes/a.md', { body: `draft ${i}`, headers: { 'content-type': 'text/markdown' } });
    expect((await call(s.url, 'PUT', '/v1/versions/pin?path=notes/a.md&version=1')).status).toBe(204);
    const v = await call(s.url, 'POST', '/v1/forget', { json: { versions: { keep: 2, prefix: 'notes/' } } });
    expect(v.status).toBe(200);
    expect(v.json.remove).toEqual([{ path: 'notes/a.md', version: 2, time: expect.any(String) }]);
    const versions = (await call(s.url, 'GET', '/v1/versions?path=notes/a.md')).json.versions;
    expect(versions.map((x: { version: number; pinned: boolean }) => [x.version, x.pinned])).toEqual([
      [1, true],
      [3, false],
      [4, false],
    ]);
    expect((await call(s.url, 'DELETE', '/v1/versions/pin?path=notes/a.md&version=1')).status).toBe(204);
    expect(errorCode(await call(s.url, 'PUT', '/v1/versions/pin?path=notes/a.md&version=2'))).toBe('NOT_FOUND');
    expect(errorCode(await call(s.url, 'PUT', '/v1/snapshots/ffff/pin'))).toBe('NOT_FOUND');
  });

  it('keeps policies in the store; POST /v1/gc and the schedule apply them', { timeout: 30_000 }, async () => {
    const s = await startServer({ retentionIntervalMs: 300 });
    for (let i = 1; i <= 4; i++) await call(s.url, 'POST', '/v1/documents?path=logs/day.txt', { body: `day ${i}`, headers: { 'content-type': 'text/plain' } });
    for (let i = 1; i <= 4; i++) await call(s.url, 'POST', '/v1/documents?path=keep/all.txt', { body: `all ${i}`, headers: { 'content-type': 'text/plain' } });
    const put = await call(s.url, 'PUT', '/v1/policies', { json: { kind: 'versions', prefix: 'logs/', keep: 2 } });
    expect(put.status).toBe(200);
    expect(errorCode(await call(s.url, 'PUT', '/v1/policies', { json: { kind: 'versions', prefix: 'x/', within: 'soon' } }))).toBe('INVALID_INPUT');
    expect((await call(s.url, 'GET', '/v1/policies')).json.policies).toEqual([{ kind: 'versions', prefix: 'logs/', keep: 2 }]);
    // The schedule (every 300 ms here) applies it, then GC.
    const deadline = Date.now() + 15_000;
    let versions: unknown[] = [];
    while (Date.now() < deadline) {
      versions = (await call(s.url, 'GET', '/v1/versions?path=logs/day.txt')).json.versions;
      if (versions.length === 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(versions).toHaveLength(2);
    expect((await call(s.url, 'GET', '/v1/versions?path=keep/all.txt')).json.versions).toHaveLength(4);
    // POST /v1/gc applies policies first, and says what they removed.
    await call(s.url, 'PUT', '/v1/policies', { json: { kind: 'versions', prefix: 'keep/', keep: 1 } });
    const dry = await call(s.url, 'POST', '/v1/policies:apply', { json: { dryRun: true } });
    expect(dry.json.applied.map((a: { report: { remove: unknown[] } }) => a.report.remove.length)).toEqual([3, 0]);
    const gc = await call(s.url, 'POST', '/v1/gc');
    expect(gc.status).toBe(200);
    expect(gc.json.forgotten).toEqual({ snapshots: 0, versions: 3 });
    expect((await call(s.url, 'DELETE', '/v1/policies?kind=versions&prefix=keep/')).status).toBe(204);
    expect(errorCode(await call(s.url, 'DELETE', '/v1/policies?kind=versions&prefix=keep/'))).toBe('NOT_FOUND');
  });

  it('refuses a request without rules, with both kinds, or with a bad duration, and changes nothing', async () => {
    const s = await startServer();
    await call(s.url, 'POST', '/v1/snapshots', { json: { root, time: '2024-05-01T08:00:00Z' } });
    for (const body of [{}, { snapshots: {} }, { snapshots: { last: 1 }, versions: { keep: 1 } }, { snapshots: { within: '2w' } }, { versions: { keep: 0 } }, { snapshots: { bogus: 1 } }]) {
      const r = await call(s.url, 'POST', '/v1/forget', { json: body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(errorCode(r)).toBe('INVALID_INPUT');
    }
    expect((await call(s.url, 'GET', '/v1/snapshots')).json.snapshots).toHaveLength(1);
    expect(errorCode(await call(s.url, 'POST', '/v1/snapshots', { json: { root, time: 'last tuesday' } }))).toBe('INVALID_INPUT');
  });
});
