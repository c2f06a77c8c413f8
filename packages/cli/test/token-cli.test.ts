/**
 * `kura token` (decision 0060): a token made by one process is accepted by a `kura serve` of the
 * same store at once, within its scopes and prefixes; listed without its secret; revoked by
 * another process and refused from the next request; kept through a rebuild from the log.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startServe } from './helpers/serve.js';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'kura-token-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Every file under `dir`, recursively. */
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

describe('kura token', () => {
  it('add, list, serve accepts it within its limits, revoke from another process, rebuild keeps them', { timeout: 60_000 }, async () => {
    const store = join(root, 'store');
    const kura = (...args: string[]) => spawnSync(process.execPath, [BIN, '--store', store, ...args], { encoding: 'utf8' });
    expect(kura('init').status).toBe(0);
    const bad = kura('token', 'add', 'x', '--scope', 'root');
    expect([bad.status, bad.stderr]).toEqual([2, expect.stringMatching(/scopes are read, write, delete, admin/)]);
    expect(kura('token', 'add', 'x').status).toBe(2);
    // Admin actions are all store-wide: a limited admin token could do nothing (made silently: a trial).
    const limitedAdmin = kura('token', 'add', 'padmin', '--scope', 'admin', '--prefix', 'public/');
    expect([limitedAdmin.status, limitedAdmin.stderr]).toEqual([2, expect.stringMatching(/admin actions are store-wide.*\[INVALID_INPUT\]/)]);

    const made = kura('token', 'add', 'ci', '--scope', 'read,write', '--prefix', 'builds/', '--json');
    expect(made.status, made.stderr).toBe(0);
    const { secret, token } = JSON.parse(made.stdout) as { secret: string; token: object };
    expect(token).toMatchObject({ name: 'ci', scopes: ['read', 'write'], prefixes: ['builds/'] });
    const human = kura('token', 'add', 'ops', '--scope', 'admin');
    expect(human.stdout).toMatch(/token ops: admin\n\n {4}kura_[A-Za-z0-9_-]{43}\n/);
    const taken = kura('token', 'add', 'ci', '--scope', 'read');
    expect([taken.status, taken.stderr]).toEqual([2, expect.stringMatching(/\[INVALID_INPUT\]/)]);

    const listed = kura('token', 'list', '--json');
    expect(listed.stdout.trim().split('\n').map((l) => JSON.parse(l).name)).toEqual(['ci', 'ops']);
    expect(listed.stdout).not.toContain(secret.slice(5));
    // Only hashes at rest: the secret is in no file of the store.
    for (const f of files(store)) expect(readFileSync(f).includes(secret.slice(5)), f).toBe(false);

    // A server with no configured tokens: the store's are the ones; it generates none.
    const { server, url } = await startServe(BIN, store, [], { auth: true });
    let stderr = '';
    server.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      const put = await fetch(`${url}/v1/documents?path=builds/1.log`, { method: 'POST', headers: { authorization: `Bearer ${secret}` }, body: 'built' });
      expect(put.status).toBe(201);
      expect((await fetch(`${url}/v1/documents?path=src/x`, { method: 'POST', headers: { authorization: `Bearer ${secret}` }, body: 'no' })).status).toBe(403);
      expect((await fetch(`${url}/v1/entry?path=builds/1.log`, { method: 'DELETE', headers: { authorization: `Bearer ${secret}` } })).status).toBe(403);
      // Revoked by another process: refused from the next request.
      expect(kura('token', 'revoke', 'ci').status).toBe(0);
      expect((await fetch(`${url}/v1/documents`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(401);
      expect(kura('token', 'revoke', 'ci').status).toBe(1); // NOT_FOUND
    } finally {
      server.kill('SIGTERM');
      if (server.exitCode === null) await once(server, 'exit');
    }
    expect(stderr).not.toMatch(/admin token is/);

    // The database rebuilt from the log keeps the tokens (and the revocation).
    expect(kura('rebuild').status).toBe(0);
    expect(kura('token', 'list').stdout).toMatch(/^ops\tadmin\t\*\t/);
    expect(kura('token', 'list').stdout).not.toMatch(/^ci/m);
  });
});
