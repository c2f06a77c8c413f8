/**
 * The `kura` command on a store in S3 (issue 21), as a user meets it: `--store s3://bucket/prefix
 * --endpoint URL` with the AWS environment's credentials, against a real versitygw. A second
 * machine (another cache directory) sees everything the first added, and so does `kura serve`
 * on the same bucket; credentials never appear in what the command prints.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3Server, type S3Server } from '../../store/test/helpers/s3-servers.js';
import { startServe } from './helpers/serve.js';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'kura-s3cli-'));

describe('kura on an s3:// store', () => {
  let s3: S3Server;
  beforeAll(async () => {
    s3 = await startS3Server('versitygw');
  });
  afterAll(async () => {
    await s3?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  /** `kura ARGS` as machine `machine` (its own cache directory), with the S3 credentials in its environment. */
  function kura(machine: string, args: string[], secret?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('KURA_') && !k.startsWith('AWS_'))),
      KURA_CACHE: join(root, `cache-${machine}`),
      AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: secret ?? s3.credentials.secretAccessKey,
      KURA_STORE: `s3://${s3.bucket}/team`,
      KURA_SEMANTIC: 'off',
    };
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args, '--endpoint', s3.endpoint], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  it('init, add and stats on one machine; ls and get on another; serve on a third; wrong credentials refused without showing them', { timeout: 120_000 }, async () => {
    const init = await kura('one', ['init']);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(`s3://${s3.bucket}/team`);
    mkdirSync(join(root, 'notes/sub'), { recursive: true });
    for (let i = 0; i < 12; i++) writeFileSync(join(root, 'notes', i % 2 ? 'sub' : '', `n${i}.md`), `note ${i}\n`.repeat(30));
    const add = await kura('one', ['add', 'notes', '--tag', 'team']);
    expect(add.code, add.stderr).toBe(0);
    const stats = await kura('one', ['stats', '--json']);
    expect(stats.code, stats.stderr).toBe(0);
    expect(JSON.parse(stats.stdout).entries).toBe(12);
    expect(stats.stdout + stats.stderr).not.toContain(s3.credentials.secretAccessKey);

    const ls = await kura('two', ['ls']);
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout.trim().split('\n')).toHaveLength(12);
    expect(ls.stdout).toContain('notes/sub/n1.md');
    const get = await kura('two', ['get', 'notes/sub/n3.md']);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toBe('note 3\n'.repeat(30));

    const env = { AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey, KURA_CACHE: join(root, 'cache-three'), AWS_ENDPOINT_URL_S3: s3.endpoint };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    const { server, url } = await startServe(BIN, `s3://${s3.bucket}/team`).finally(() => {
      for (const k of Object.keys(env)) if (saved[k] === undefined) delete process.env[k];
      Object.assign(process.env, saved);
    });
    try {
      const listed = (await (await fetch(`${url}/v1/documents?limit=100`)).json()) as { items: { path: string }[] };
      expect(listed.items.map((i) => i.path)).toContain('notes/n0.md');
      const body = new TextEncoder().encode('uploaded through the server\n');
      const res = await fetch(`${url}/v1/documents?path=http/up.txt`, { method: 'POST', body });
      expect(res.status, await res.clone().text()).toBeLessThan(300);
    } finally {
      server.kill('SIGTERM');
      await new Promise((r) => server.once('exit', r));
    }
    const again = await kura('one', ['get', 'http/up.txt']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe('uploaded through the server\n');

    // verify: placement by default on a bucket, every byte with --read-data (the report says which).
    const placement = await kura('two', ['verify']);
    expect(placement.code, placement.stderr).toBe(0);
    expect(placement.stdout).toContain('placement only');
    const read = await kura('two', ['verify', '--read-data', '--json']);
    expect(read.code, read.stderr).toBe(0);
    expect(JSON.parse(read.stdout)).toMatchObject({ ok: true, dataRead: true, documentsChecked: 13 });
    // rebuild on a bucket: the machine's cache database made again from the log (it looked
    // for a directory named s3:: a trial).
    const rebuilt = await kura('two', ['rebuild', '--json']);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(JSON.parse(rebuilt.stdout)).toMatchObject({ seq: expect.any(Number) });
    expect((await kura('two', ['ls'])).stdout.trim().split('\n')).toHaveLength(13);

    const wrong = await kura('four', ['ls'], 'not-the-secret-0123456789');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('STORAGE_UNAVAILABLE');
    expect(wrong.stderr).not.toContain('not-the-secret-0123456789');
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1);

    // No credentials on this machine: nothing was sent — not "did not answer" (a trial).
    const bare = spawnSync(process.execPath, [BIN, 'ls', '--endpoint', s3.endpoint], {
      cwd: root,
      encoding: 'utf8',
      env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('KURA_') && !k.startsWith('AWS_'))), HOME: join(root, 'no-home'), KURA_CACHE: join(root, 'cache-five'), KURA_STORE: `s3://${s3.bucket}/team` },
    });
    expect([bare.status, bare.stderr]).toEqual([1, expect.stringMatching(/^kura: no credentials for the object store on this machine .*\[STORAGE_UNAVAILABLE\]\n$/)]);
    // An endpoint that is no S3 server: one line saying so (it was the SDK's two, blaming the credentials).
    const web = createServer((_q, r) => r.writeHead(404, { 'content-type': 'text/html' }).end('<html><head><meta charset="utf-8"></head><body>Not Found</body></html>'));
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    try {
      const other = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, 'ls', '--endpoint', `http://127.0.0.1:${(web.address() as { port: number }).port}`], {
          cwd: root,
          env: { ...process.env, AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey, KURA_CACHE: join(root, 'cache-six'), KURA_STORE: `s3://${s3.bucket}/team` },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => resolve({ code, stderr }));
      });
      expect(other.code).toBe(1);
      expect(other.stderr).toMatch(/^kura: the endpoint answered, but not as an S3 object store .*\[STORAGE_UNAVAILABLE\]\n$/);
    } finally {
      web.close();
    }
  });
});
