/**
 * The `kura` command runs from its bundle (scripts/bundle.mjs, decision 0022). Copied on its
 * own into an empty folder whose node_modules holds only better-sqlite3 (the one native
 * dependency left outside), it still stores, snapshots, reads and verifies: so the bundle
 * carries all its JavaScript, and its worker threads and kura_core.wasm are where the bundled
 * code looks for them. A missing piece fails here rather than on a user's machine.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe } from './helpers/serve.js';

const cli = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(cli, 'bin/kura.js');
let root: string;
let bin: string;

function kura(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, '--store', join(root, 'store'), ...args], { cwd: root, maxBuffer: 64 << 20 });
  return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString(), out: r.stdout };
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kura-bundle-'));
  const app = join(root, 'app');
  for (const part of ['bin', 'dist/bundle', 'dist/wasm']) cpSync(join(cli, part), join(app, part), { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ type: 'module' }));
  // better-sqlite3 as an installed dependency: its folder, found from @kura/store's.
  const sqlite = dirname(createRequire(createRequire(join(cli, 'package.json')).resolve('@kura/store')).resolve('better-sqlite3/package.json'));
  mkdirSync(join(app, 'node_modules'));
  symlinkSync(sqlite, join(app, 'node_modules/better-sqlite3'), 'dir');
  bin = join(app, 'bin/kura.js');
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the bundled kura command', () => {
  it('runs on its own: init, add (small and large files), snapshot, get, verify', () => {
    expect(kura('init').code).toBe(0);
    const tree = join(root, 'tree');
    mkdirSync(join(tree, 'sub'), { recursive: true });
    const small = Buffer.from('small text, read whole by a worker\n'.repeat(20));
    const large = randomBytes(3 << 20); // streamed through a worker in chunks, several frames
    writeFileSync(join(tree, 'a.txt'), small);
    writeFileSync(join(tree, 'sub/large.bin'), large);

    const added = kura('add', tree, '--json');
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const digests = added.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { digest: string }).digest).sort();
    const expected = [small, large].map((b) => `sha256:${createHash('sha256').update(b).digest('hex')}`).sort();
    expect(digests).toEqual(expected);

    const snap = kura('snapshot', tree, '--json');
    expect(snap.code).toBe(0);
    const id = (JSON.parse(snap.stdout) as { id: string }).id;
    const out = join(root, 'restored');
    expect(kura('restore', id, out).code).toBe(0);
    expect(readFileSync(join(out, 'sub/large.bin')).equals(large)).toBe(true);

    const got = kura('get', `sha256:${createHash('sha256').update(large).digest('hex')}`);
    expect(got.code).toBe(0);
    expect(got.out.equals(large)).toBe(true);
    const verify = kura('verify');
    expect(verify.stderr).toBe('');
    expect(verify.code).toBe(0);
  });

  it('types its errors (exit codes and codes as the unbundled command)', () => {
    const missing = kura('get', `sha256:${'0'.repeat(64)}`);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^kura: .*\[NOT_FOUND\]\n$/);
    const bad = spawnSync(process.execPath, [bin, '--store', join(root, 'nowhere'), 'ls']);
    expect(bad.status).toBe(1);
    expect(bad.stderr.toString()).toMatch(/\[NOT_FOUND\]/);
  });
});

describe('kura serve from the bundle (the server loaded as it is, with its own copy of the store)', () => {
  it('serves the store; a rebuild while it runs, or a server on a folder that is not a store, fails with a typed one-line error', async () => {
    const store = join(root, 'served');
    const { server, url, log } = await startServe(BIN, store);
    try {
      const res = await fetch(`${url}/v1/stats`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ documents: 0 });
      // A store made where there was none is said (on a bucket, a mistyped prefix made one silently: a trial).
      expect(log()).toContain(`no store was at ${store}: a new, empty one was made there`);

      // The store's lock error comes from the bundle's copy of @kura/core: still a KuraError
      // to the command (isKuraError), so one line with its code and exit status 1. (Writers
      // share a store since the commit log; rebuilding its database needs it to itself.)
      const second = spawnSync(process.execPath, [BIN, '--store', store, 'rebuild']);
      expect(second.status).toBe(1);
      expect(second.stderr.toString()).toMatch(/^kura: .*\[STORE_LOCKED\]\n$/);
      // A value the user gave that the server's store refused is usage (2), as everywhere.
      const taken = join(root, 'taken');
      mkdirSync(taken);
      writeFileSync(join(taken, 'notes.txt'), 'not a store');
      const refused = spawnSync(process.execPath, [BIN, '--store', taken, 'serve', '--no-auth', '--port', '0']);
      expect(refused.stderr.toString()).toMatch(/^kura: .*\[INVALID_INPUT\]\n$/);
      expect(refused.status).toBe(2);
    } finally {
      server.kill('SIGTERM');
      if (server.exitCode === null) await once(server, 'exit');
    }
  });
});
