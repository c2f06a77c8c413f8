/**
 * `kura token` (decision 0060): a token made by one process is accepted by a `kura serve` of the
 * same store at once, within its scopes and prefixes; listed without its secret; revoked by
 * another process and refused from the next request; kept through a rebuild from the log.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

  it("the request token add shows works for the token it made (GET /v1/documents was shown to a write-only token: 403, a trial)", { timeout: 60_000 }, async () => {
    const store = join(root, 'store-try');
    const kura = (...args: string[]) => spawnSync(process.execPath, [BIN, '--store', store, ...args], { encoding: 'utf8' });
    expect(kura('init').status).toBe(0);
    const made = [
      ['w', '--scope', 'write', '--prefix', 'builds/'],
      ['r', '--scope', 'read', '--prefix', 'builds/'],
      ['d', '--scope', 'delete', '--prefix', 'builds/'],
      ['a', '--scope', 'admin'],
    ].map(([name, ...rest]) => {
      const out = kura('token', 'add', name!, ...rest).stdout;
      return { secret: /^ {4}(kura_\S+)$/m.exec(out)![1]!, curl: /^ {2}(curl .*)$/m.exec(out)![1]! };
    });
    writeFileSync(join(root, 'notes.md'), '# notes\n');
    const { server, url } = await startServe(BIN, store, [], { auth: true });
    try {
      for (const { secret, curl } of made) {
        const command = `${curl.replace('<secret>', secret).replace('http://127.0.0.1:8787', url)} -s -o /dev/null -w '%{http_code}'`;
        const r = spawnSync('sh', ['-c', command], { cwd: root, encoding: 'utf8' });
        expect([curl, r.stdout]).toEqual([curl, expect.stringMatching(/^(200|201|204|404)$/)]);
      }
    } finally {
      server.kill('SIGTERM');
      if (server.exitCode === null) await once(server, 'exit');
    }
  });

  it('--prefix takes prefixes separated by commas, as --scope and KURA_TOKENS do, and repeated; list shows each quoted', { timeout: 60_000 }, async () => {
    const store = join(root, 'prefixes');
    const kura = (...args: string[]) => spawnSync(process.execPath, [BIN, '--store', store, ...args], { encoding: 'utf8' });
    expect(kura('init').status).toBe(0);
    // It was kept as the one prefix "team/,hr/", which reaches nothing (a trial).
    const made = kura('token', 'add', 'teams', '--scope', 'read', '--prefix', 'team/,hr/', '--json');
    expect(made.status, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout).token).toMatchObject({ prefixes: ['hr/', 'team/'] });
    const human = kura('token', 'add', 'more', '--scope', 'read', '--prefix', 'a/,b/', '--prefix', 'c/');
    expect(human.status, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^token more: read under "a\/" "b\/" "c\/"\n/);
    const empty = kura('token', 'add', 'empty', '--scope', 'read', '--prefix', 'team/,');
    expect([empty.status, empty.stderr]).toEqual([2, 'kura: --prefix team/,: an empty prefix (prefixes are separated by commas; leave --prefix out for every path) [INVALID_INPUT]\n']);
    // Listed unambiguously: two prefixes are two quoted strings, never "team/,hr/".
    const list = kura('token', 'list');
    expect(list.stdout).toMatch(/^teams\tread\t"hr\/" "team\/"\t\d{4}-/m);
    expect(list.stdout).toMatch(/^more\tread\t"a\/" "b\/" "c\/"\t/m);
    expect(list.stdout).not.toMatch(/^empty/m);

    // The server reaches both prefixes with it, and nothing else.
    const { secret } = JSON.parse(made.stdout) as { secret: string };
    const file = join(root, 'a.txt');
    writeFileSync(file, 'a\n');
    for (const path of ['team/a.txt', 'hr/a.txt', 'src/a.txt']) expect(kura('add', file, '--path', path).status).toBe(0);
    const { server, url } = await startServe(BIN, store, [], { auth: true });
    try {
      const auth = { authorization: `Bearer ${secret}` };
      const status = async (path: string) => (await fetch(`${url}/v1/entry?path=${path}`, { headers: auth })).status;
      expect([await status('team/a.txt'), await status('hr/a.txt'), await status('src/a.txt')]).toEqual([200, 200, 403]);
    } finally {
      server.kill('SIGTERM');
      if (server.exitCode === null) await once(server, 'exit');
    }
  });
});
