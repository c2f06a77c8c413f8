/**
 * Several writers on one store, as a user meets them (issue 20): `kura serve` takes uploads
 * while two shells run `kura add` and a third `kura snapshot`, all real processes on one store.
 * Every command succeeds, the server sees every path the others added (its next read), and the
 * store verifies clean.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startServe } from './helpers/serve.js';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'kura-writers-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function kura(args: string[], cwd = root): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A tree of `files` small and a few larger files, some shared with the other trees. */
function tree(name: string, files: number): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'sub'), { recursive: true });
  for (let i = 0; i < files; i++) writeFileSync(join(dir, i % 2 ? 'sub' : '', `f${i}.txt`), `${name} file ${i}\n`.repeat(20 + i));
  writeFileSync(join(dir, 'LICENSE'), 'MIT License\nthe same bytes in every tree\n');
  writeFileSync(join(dir, 'big.bin'), randomBytes(300_000));
  return dir;
}

describe('kura serve, two kura add and a kura snapshot on one store at once', () => {
  it('all commit; the server serves what the others added; verify is clean', { timeout: 120_000 }, async () => {
    const store = join(root, 'store');
    expect((await kura(['init', '--store', store])).code).toBe(0);
    const { server, url } = await startServe(BIN, store, ['--log-format', 'json']);
    try {
      const a = tree('a', 40);
      const b = tree('b', 40);
      const c = tree('c', 30);
      const uploads = Array.from({ length: 40 }, (_, i) => new TextEncoder().encode(`uploaded over HTTP ${i}\n`.repeat(10)));
      const upload = async () => {
        for (const [i, body] of uploads.entries()) {
          const sha = createHash('sha256').update(body).digest('hex');
          const res = await fetch(`${url}/v1/documents?path=http/u${i}.txt`, { method: 'POST', body, headers: { 'x-kura-sha256': sha } });
          expect(res.status, await res.clone().text()).toBeLessThan(300);
        }
      };
      const [addA, addB, snap] = await Promise.all([
        kura(['add', 'a', '--store', store]),
        kura(['add', 'b', '--store', store]),
        kura(['snapshot', c, '--json', '--store', store]),
        upload(),
      ]);
      for (const r of [addA, addB, snap]) expect(r.code, r.stderr).toBe(0);

      // The server's next read sees every path the others added, and their snapshot.
      const paths: string[] = [];
      for (let cursor: string | undefined, page = 0; page < 20; page++) {
        const res = await fetch(`${url}/v1/documents?limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
        const body = (await res.json()) as { items: { path: string | null }[]; nextCursor?: string };
        paths.push(...body.items.map((i) => i.path!));
        if (!(cursor = body.nextCursor)) break;
      }
      expect(paths.filter((p) => p.startsWith('a/')).length).toBe(42);
      expect(paths.filter((p) => p.startsWith('b/')).length).toBe(42);
      expect(paths.filter((p) => p.startsWith('http/')).length).toBe(40);
      const snapshots = await kura(['snapshots', '--json', '--store', store]);
      expect(snapshots.stdout).toContain(`"id":${JSON.stringify(JSON.parse(snap.stdout).id)}`);
      const lic = await fetch(`${url}/v1/paths/b/LICENSE`);
      expect(await lic.text()).toBe('MIT License\nthe same bytes in every tree\n');
      const v = await kura(['verify', '--store', store]);
      expect(v.code, v.stdout + v.stderr).toBe(0);
    } finally {
      server.kill('SIGTERM');
      await new Promise((r) => server.once('close', r));
    }
  });
});
