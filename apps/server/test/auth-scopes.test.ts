/**
 * Every endpoint needs the right scope, and no token ever reaches the log.
 *
 * Scopes: one table below says which scope each endpoint needs (the routes declare it as
 * `config: { scope }`, apps/server/src/routes/*.ts and plugins/metrics.ts). The table must name
 * exactly the endpoints the OpenAPI document lists, so a new endpoint without an entry fails
 * here; then every endpoint (and the HEAD of every GET) is called with each kind of token: one
 * lacking the scope gets 403 FORBIDDEN naming it, one holding it never gets 401 or 403.
 *
 * Logs: kura-server as a process at the most verbose level, sent tokens in every place a client
 * might put one — odd spellings of the Authorization header, other headers, query strings,
 * paths, the request id, JSON bodies — and then no token, nor 12 characters of one, appears in
 * anything it wrote, as written, JSON-decoded or percent-decoded.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { recordReliability } from '../../../packages/store/test/helpers/reliability.js';
import { spawnServer, stopAll } from './helpers/process.js';
import { call, closeAll, errorCode, startServer, type Res } from './helpers/server.js';

type Scope = 'read' | 'write' | 'delete' | 'admin';

/** The authoritative table: method and OpenAPI path -> the scope the endpoint needs. */
const SCOPES: Record<string, Scope> = {
  'POST /v1/snapshots': 'write',
  'GET /v1/snapshots': 'read',
  'DELETE /v1/snapshots/{id}': 'delete',
  'GET /v1/snapshots/{id}/files/{path}': 'read',
  'PUT /v1/snapshots/{id}/pin': 'write',
  'DELETE /v1/snapshots/{id}/pin': 'delete',
  'POST /v1/forget': 'delete',
  'GET /v1/policies': 'read',
  'PUT /v1/policies': 'admin',
  'DELETE /v1/policies': 'admin',
  'POST /v1/policies:apply': 'admin',
  'PUT /v1/versions/pin': 'write',
  'DELETE /v1/versions/pin': 'delete',
  'POST /v1/documents': 'write',
  'GET /v1/documents': 'read',
  'GET /v1/documents/{digest}': 'read',
  'DELETE /v1/documents/{digest}': 'delete',
  'GET /v1/documents/{digest}/meta': 'read',
  'PATCH /v1/documents/{digest}/meta': 'write',
  'POST /v1/meta:batch': 'write',
  'GET /v1/paths/{path}': 'read',
  'GET /v1/versions': 'read',
  'GET /v1/entry': 'read',
  'PATCH /v1/entry': 'write',
  'DELETE /v1/entry': 'delete',
  'GET /v1/search': 'read',
  'POST /v1/search': 'read',
  'GET /v1/grep': 'read',
  'GET /v1/index': 'read',
  'POST /v1/chunks:missing': 'write',
  'PUT /v1/chunks/{key}': 'write',
  'POST /v1/documents:commit': 'write',
  'POST /v1/uploads': 'write',
  'GET /v1/uploads/{id}': 'write',
  'DELETE /v1/uploads/{id}': 'write',
  'PATCH /v1/uploads/{id}': 'write',
  'PUT /v1/uploads/{id}': 'write',
  'GET /v1/stats': 'read',
  'GET /v1/config': 'read',
  'POST /v1/refresh': 'read',
  'POST /v1/gc': 'admin',
  'POST /v1/verify': 'admin',
  'GET /v1/tokens': 'admin',
  'POST /v1/tokens': 'admin',
  'DELETE /v1/tokens/{name}': 'admin',
};
/** Scoped, but hidden from the OpenAPI document. */
const HIDDEN: Record<string, Scope | 'any'> = { 'GET /metrics': 'read', 'POST /mcp': 'any', 'GET /mcp': 'any', 'DELETE /mcp': 'any' };

/**
 * Each kind of token and the scopes it holds (admin includes the others, docs/HTTP.md): `write`
 * adds and never removes, `delete` removes (decision 0060).
 */
const KINDS = {
  'read-only': { scopes: ['read'], holds: ['read'] },
  'write-only': { scopes: ['write'], holds: ['write'] },
  'delete-only': { scopes: ['delete'], holds: ['delete'] },
  'read+write': { scopes: ['read', 'write'], holds: ['read', 'write'] },
  'read+write+delete': { scopes: ['read', 'write', 'delete'], holds: ['read', 'write', 'delete'] },
  admin: { scopes: ['admin'], holds: ['read', 'write', 'delete', 'admin'] },
} as const satisfies Record<string, { scopes: Scope[]; holds: Scope[] }>;
type Kind = keyof typeof KINDS;

/** The first test's figures, recorded with the second's (one source, `auth`) when both pass. */
let recordScopes: Record<string, number> | undefined;

const secret = (label: string) => `${label}-${randomBytes(18).toString('base64url')}`;

afterAll(async () => {
  await closeAll();
  await stopAll();
});

describe('auth scopes', () => {
  it('every endpoint answers 403 to a token lacking its scope and never 401/403 to one holding it', async () => {
    const tokens = Object.fromEntries(Object.keys(KINDS).map((k) => [k, secret(k)])) as Record<Kind, string>;
    const s = await startServer({
      noAuth: false,
      tokens: Object.entries(KINDS).map(([k, v]) => ({ token: tokens[k as Kind], scopes: [...v.scopes], name: k })),
    });

    // The table names exactly the endpoints the OpenAPI document lists.
    const doc = (await call(s.url, 'GET', '/docs/json')).json;
    const listed = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(listed.sort()).toEqual(Object.keys(SCOPES).sort());

    // A document for the routes that take a digest (so an allowed GET is a 200, not a 404).
    const put = await call(s.url, 'POST', '/v1/documents?path=a/b', { body: 'scoped', token: tokens.admin });
    expect(put.status).toBe(201);
    const fill = (path: string) =>
      path.replace('{digest}', put.json.digest).replace('{key}', '0'.repeat(64)).replace('{id}', '0'.repeat(32)).replace('{path}', 'a/b').replace('{name}', 'nobody');
    // Every GET also answers HEAD, under the same scope.
    const endpoints = Object.entries({ ...SCOPES, ...HIDDEN }).flatMap(([e, scope]) => (e.startsWith('GET ') ? [[e, scope], [`HEAD ${e.slice(4)}`, scope]] : [[e, scope]])) as [string, Scope | 'any'][];

    const send = async (endpoint: string, token?: string): Promise<Res> => {
      const [method, path] = endpoint.split(' ') as [string, string];
      const body = ['POST', 'PUT', 'PATCH'].includes(method) ? { body: '{}', headers: { 'content-type': 'application/json' } } : {};
      return call(s.url, method, `${fill(path)}${path === '/v1/search' ? '?q=scoped' : path === '/v1/grep' ? '?pattern=scoped' : path === '/v1/versions' || path === '/v1/entry' ? '?path=a/b' : ''}`, { ...body, ...(token ? { token } : {}) });
    };

    let scopeChecks = 0;
    let refused403 = 0;
    let refused401 = 0;
    for (const [endpoint, scope] of endpoints) {
      const none = await send(endpoint);
      expect(none.status, `${endpoint} without a token`).toBe(401);
      refused401++;
      for (const [kind, { holds }] of Object.entries(KINDS)) {
        const r = await send(endpoint, tokens[kind as Kind]);
        const what = `${endpoint} with a ${kind} token (needs ${scope}): ${r.status} ${r.body.toString().slice(0, 200)}`;
        if (scope === 'any' || (holds as readonly Scope[]).includes(scope)) {
          expect([401, 403], what).not.toContain(r.status);
          expect(r.status, what).toBeLessThan(500);
        } else {
          expect(r.status, what).toBe(403);
          if (!endpoint.startsWith('HEAD ')) {
            expect(errorCode(r), what).toBe('FORBIDDEN');
            expect(r.json.error.scope, what).toBe(scope);
          }
          refused403++;
        }
        scopeChecks++;
      }
    }
    expect(scopeChecks).toBe(endpoints.length * Object.keys(KINDS).length);

    // Open endpoints stay open.
    for (const path of ['/healthz', '/docs/json']) expect((await call(s.url, 'GET', path)).status, path).toBe(200);

    // A change of metadata answers the updated entry only to a token that may read it: a
    // write-only token (an append-only client) learns nothing of the entry (found in review).
    const json = { body: '{}', headers: { 'content-type': 'application/json' } };
    const fresh = await call(s.url, 'POST', '/v1/documents?path=c/d', { body: 'metadata only', token: tokens.admin });
    expect(fresh.status).toBe(201);
    expect(fresh.json).toMatchObject({ version: 1, versionMade: true }); // the path's version, to a token that may read
    // A put's answer to a write-only token says nothing of the path's versions.
    const appended = await call(s.url, 'POST', '/v1/documents?path=c/e', { body: 'appended', token: tokens['write-only'] });
    expect(appended.status).toBe(201);
    expect(appended.json).not.toHaveProperty('version');
    expect(appended.json).not.toHaveProperty('versionMade');
    for (const url of ['/v1/entry?path=c/d', `/v1/documents/${fresh.json.digest}/meta`]) {
      const blind = await call(s.url, 'PATCH', url, { ...json, token: tokens['write-only'] });
      expect([blind.status, blind.body.length], url).toEqual([204, 0]);
      const seen = await call(s.url, 'PATCH', url, { ...json, token: tokens['read+write'] });
      expect(seen.status, url).toBe(200);
      expect(seen.json).toMatchObject({ path: 'c/d', digest: fresh.json.digest });
    }

    // What forget keeps and removes names paths, versions and snapshots: a delete-only token
    // (it may remove, not read) gets 204 — it listed the whole store with a dry run (a trial).
    const forget = { json: { versions: { keep: 1000 }, dryRun: true } };
    const removedBlind = await call(s.url, 'POST', '/v1/forget', { ...forget, token: tokens['delete-only'] });
    expect([removedBlind.status, removedBlind.body.length]).toEqual([204, 0]);
    expect((await call(s.url, 'POST', '/v1/forget', { json: { snapshots: { last: 100 }, dryRun: true }, token: tokens['delete-only'] })).status).toBe(204);
    const forgetSeen = await call(s.url, 'POST', '/v1/forget', { ...forget, token: tokens['read+write+delete'] });
    expect(forgetSeen.status).toBe(200);
    expect(forgetSeen.json.keep).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'c/d' })]));

    recordScopes = { 'endpoints checked': endpoints.length, 'scope checks': scopeChecks, 'wrong-scope requests refused with 403': refused403, 'requests without a token refused with 401': refused401 };
  });

  it('no token or secret is ever logged, wherever a client puts it', { timeout: 60_000 }, async () => {
    // Random tokens; one with characters that get escaped in JSON and in URLs between two
    // plain runs, so a leak in an escaped form still shows as a plain 12-character stretch.
    const reader = secret('reader');
    const writer = secret('writer');
    const admin = `${randomBytes(12).toString('base64url')}"\\%/?#&+${randomBytes(12).toString('base64url')}`;
    // A secret of the form tokens kept in the store have, which this server was never told.
    const unknownKept = `kura_${randomBytes(32).toString('base64url')}`;
    const wrong = [secret('wrong'), secret('revoked'), reader.slice(0, -1), `${writer}x`, writer.toUpperCase(), unknownKept];
    const server = await spawnServer({
      KURA_LOG_LEVEL: 'trace',
      KURA_TOKENS: `reader=${reader}:read; writer=${writer}:read,write; ops=${admin}:admin`,
    });

    let sent = 0;
    const send = async (method: string, path: string, headers: Record<string, string> = {}, body?: string) => {
      const r = await request(`${server.url}${path}`, { method: method as 'GET', headers, body: body ?? null });
      await r.body.dump();
      expect(r.statusCode, `${method} ${path}`).toBeLessThan(500);
      sent++;
      return r.statusCode;
    };
    const auth = (t: string) => ({ authorization: `Bearer ${t}` });
    // A token kept in the store (its hash only): the server redacts it by its form.
    const made = await request(`${server.url}/v1/tokens`, { method: 'POST', headers: { ...auth(admin), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'kept', scopes: ['read', 'write'] }) });
    expect(made.statusCode).toBe(201);
    const kept = ((await made.body.json()) as { secret: string }).secret;
    const valid = [reader, writer, admin, kept];
    const json = { 'content-type': 'application/json', ...auth(writer) };
    const put = await request(`${server.url}/v1/documents?path=x`, { method: 'POST', headers: auth(writer), body: 'logged?' });
    const digest = ((await put.body.json()) as { digest: string }).digest;

    for (const t of valid) {
      const e = encodeURIComponent(t);
      // Odd spellings of the header, and other headers a client might use.
      for (const authorization of [`Bearer ${t}`, `bearer ${t}`, `BEARER ${t}`, `Bearer  ${t}`, `Bearer ${t} `, `Token ${t}`, t, `Basic ${Buffer.from(`u:${t}`).toString('base64')}`, `Bearer "${t}"`]) {
        await send('GET', '/v1/stats', { authorization });
        await send('POST', '/v1/gc', { authorization });
      }
      for (const h of ['x-api-key', 'x-auth-token', 'proxy-authorization', 'x-kura-token']) await send('GET', '/v1/stats', { [h]: t });
      await send('GET', '/v1/stats', { cookie: `token=${t}` });
      await send('GET', '/v1/stats', { 'x-request-id': t, ...auth(t) });
      // In query strings: as a credential, and as plain values the server logs in its URL.
      await send('GET', `/v1/stats?token=${e}`);
      await send('GET', `/v1/stats?access_token=${e}`, auth(reader));
      await send('GET', `/v1/search?q=${e}`, auth(t));
      await send('GET', `/v1/search?q=${e}&access_token=${e}`, auth(reader));
      await send('GET', `/v1/versions?path=${e}`, auth(reader));
      await send('GET', `/v1/documents?pathPrefix=${e}&tag=${e}`, auth(reader));
      await send('POST', `/v1/documents?path=p/${e}&tag=${e}&meta=${encodeURIComponent(JSON.stringify({ k: t }))}`, auth(writer), 'body');
      // In paths.
      for (const p of [`/v1/documents/${e}`, `/v1/documents/sha256:${e}`, `/v1/documents/${e}/meta`, `/v1/paths/${e}`, `/v1/uploads/${e}`, `/v1/${e}`, `/${e}`]) await send('GET', p, auth(reader));
      await send('PUT', `/v1/chunks/${e}`, auth(writer), 'chunk');
      await send('DELETE', `/v1/documents/${e}`, auth(writer));
      // In JSON bodies, where a refusal may echo the value.
      await send('POST', '/v1/meta:batch', json, JSON.stringify({ updates: [{ digest: t, meta: { k: t } }] }));
      await send('POST', '/v1/documents:commit', json, JSON.stringify({ chunks: [t], digest: t, path: t }));
      await send('POST', '/v1/chunks:missing', json, JSON.stringify({ keys: [t] }));
      await send('PATCH', `/v1/documents/${digest}/meta`, json, JSON.stringify({ meta: { token: t }, addTags: [t] }));
      await send('PATCH', `/v1/documents/${digest}/meta`, json, `{"meta": {"token": "${t}"`); // malformed
    }
    for (const t of wrong) {
      for (const authorization of [`Bearer ${t}`, `bearer ${t}`, `Token ${t}`, t]) await send('GET', '/v1/stats', { authorization });
      for (const q of ['token', 'access_token', 'api_key', 'apiKey', 'secret']) await send('GET', `/v1/stats?${q}=${encodeURIComponent(t)}`, auth(reader));
    }
    expect(await server.stop()).toBe(0); // everything flushed

    const output = server.output();
    const lines = output.split('\n').filter(Boolean);
    // The scan is only worth something if the requests were logged at all.
    expect(lines.filter((l) => l.includes('"incoming request"')).length).toBeGreaterThanOrEqual(sent);

    // Every string in every line, as written, JSON-decoded, and percent-decoded.
    const texts: string[] = [output];
    const strings = (v: unknown): void => {
      if (typeof v === 'string') {
        texts.push(v);
        try {
          texts.push(decodeURIComponent(v));
        } catch {
          // not percent-encoded
        }
      } else if (v && typeof v === 'object') for (const x of Object.values(v)) strings(x);
    };
    for (const l of lines) {
      try {
        strings(JSON.parse(l));
      } catch {
        texts.push(l);
      }
    }
    const haystack = texts.join('\n');
    const found = [...valid, ...wrong].filter((t) => {
      for (let i = 0; i + 12 <= t.length; i++) if (haystack.includes(t.slice(i, i + 12))) return true;
      return false;
    });
    expect(found.map((t) => `${t} found near: ${haystack.slice(Math.max(0, haystack.indexOf(t.slice(0, 12)) - 100), haystack.indexOf(t.slice(0, 12)) + 60)}`)).toEqual([]);

    if (recordScopes) recordReliability('auth', 'every endpoint against each kind of token; tokens sent everywhere and looked for in every log line', {
      ...recordScopes,
      'requests with tokens in odd places': sent,
      'log lines scanned': lines.length,
      'secrets found in logs': found.length,
    });
  });
});
