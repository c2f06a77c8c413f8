/**
 * `kura copy` (issue 50, item 2; decision 0061): local → local → S3 (versitygw) → local again
 * gives the same paths, versions (with their times), media types, tags, metadata, entries
 * without a path, snapshots (ids, labels, times, tags, trees), pins and bytes; a second run
 * sends nothing; a copy killed with SIGKILL part way, run again, completes; prefixes and
 * snapshots select; the destination is made with the source's chunking.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultProxy } from '../../store/test/helpers/fault-proxy.js';
import { startS3Server, type S3Server } from '../../store/test/helpers/s3-servers.js';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'kura-copy-'));

let s3: S3Server;
beforeAll(async () => {
  s3 = await startS3Server('versitygw');
}, 120_000);
afterAll(async () => {
  await s3?.stop();
  rmSync(root, { recursive: true, force: true });
});

function env(endpoint = s3.endpoint): NodeJS.ProcessEnv {
  return {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('KURA_') && !k.startsWith('AWS_'))),
    KURA_CACHE: join(root, 'cache'),
    AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
    AWS_ENDPOINT_URL_S3: endpoint,
    KURA_SEMANTIC: 'off',
  };
}

/** `kura ARGS` (the store given with --store when `store`). */
function kura(store: string | undefined, ...args: string[]) {
  return run({}, store, ...args);
}

/** `kura ARGS` with `input` on stdin; `endpointFlag`: the S3 server named by --endpoint, not by the environment. */
function run(o: { input?: string; endpointFlag?: boolean }, store: string | undefined, ...args: string[]) {
  const { AWS_ENDPOINT_URL_S3: _, ...noEndpoint } = env();
  const r = spawnSync(process.execPath, [BIN, ...args, ...(store ? ['--store', store] : []), ...(o.endpointFlag ? ['--endpoint', s3.endpoint] : [])], {
    cwd: root,
    env: o.endpointFlag ? noEndpoint : env(),
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    ...(o.input !== undefined ? { input: o.input } : {}),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `kura ARGS` with its S3 requests sent to `endpoint` (a proxy in this process: so not spawnSync, which would stop it). */
function runVia(endpoint: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: root, env: env(endpoint), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const ok = (r: { code: number | null; stderr: string; stdout: string }) => {
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
};

/**
 * Everything a user sees of a store, in one string: entries (latest digest and version, media
 * type, tags, metadata, times) and snapshots; `deep`: each path's versions and bytes too (two
 * processes per path: for small stores).
 */
function state(store: string, deep = true): string {
  const entries = ok(kura(store, 'ls', '--json')).trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const paths = entries.filter((e) => e.path !== null).map((e) => e.path).sort();
  const versions = deep ? paths.map((p) => ok(kura(store, 'versions', p, '--json'))) : [];
  const bytes = deep ? entries.map((e) => `${e.path ?? e.digest} ${ok(kura(store, 'get', e.path ?? e.digest)).length}`) : [];
  // A snapshot's tree digest names its every file, directory, mode and link.
  const snapshots = ok(kura(store, 'snapshots', '--json'));
  return JSON.stringify({ entries: entries.sort((a, b) => String(a.path ?? a.digest).localeCompare(String(b.path ?? b.digest))), versions, bytes: bytes.sort(), snapshots });
}

describe('kura copy', () => {
  it('local → local → S3 → local keeps everything; run again it sends nothing', { timeout: 300_000 }, async () => {
    const a = join(root, 'a');
    ok(kura(a, 'init', '--avg', '4096', '--seed', '7'));
    // A store onto itself, however spelled, is a usage error (it reported every entry present).
    const self = run({}, undefined, 'copy', a, `${a}/../a`);
    expect([self.code, self.stderr]).toEqual([2, expect.stringContaining('are the same store')]);
    const work = join(root, 'work');
    mkdirSync(join(work, 'tree/sub'), { recursive: true });
    const file = (name: string, text: string) => {
      writeFileSync(join(work, name), text);
      return join(work, name);
    };
    // Versions of a path, with tags, metadata and a media type; a pin on the first version.
    for (let v = 1; v <= 3; v++) ok(kura(a, 'add', file('plan.md', `# plan v${v}\n${'step\n'.repeat(200 * v)}`), '--path', 'notes/plan.md'));
    ok(kura(a, 'tag', 'notes/plan.md', '-a', 'draft', '-a', 'team'));
    ok(kura(a, 'add', file('r.txt', 'revenue table\n'.repeat(500)), '--path', 'reports/q3.txt', '--tag', 'finance', '--meta', 'owner=ana'));
    ok(kura(a, 'add', file('dup.txt', 'revenue table\n'.repeat(500)), '--path', 'reports/copy-of-q3.txt'));
    ok(run({ input: 'no path here'.repeat(99) }, a, 'add', '-', '--tag', 'loose')); // an entry without a path
    ok(kura(a, 'pin', 'notes/plan.md@1'));
    // A snapshot of a tree (its files are not paths), labelled, tagged, pinned, as of a time.
    for (let i = 0; i < 20; i++) file(`tree/${i % 3 ? 'sub/' : ''}f${i}.txt`, `tree file ${i}\n`.repeat(40 + i));
    const snap = JSON.parse(ok(kura(a, 'snapshot', join(work, 'tree'), '--label', 'home', '--tag', 'weekly', '--time', '2026-01-02 03:04:05', '--json')));
    ok(kura(a, 'pin', snap.id));
    const before = state(a);

    // a → b (made with a's chunking), b → S3, S3 → c: every one the same.
    const b = join(root, 'b');
    const first = JSON.parse(ok(kura(undefined, 'copy', a, b, '--json')));
    expect(first).toMatchObject({ created: true, versionsCopied: 6, snapshotsCopied: 1, pins: 2, errors: [] });
    expect(first.documentsLinked).toBe(1); // reports/copy-of-q3.txt: the same bytes as q3
    expect(state(b)).toBe(before);
    expect(JSON.parse(ok(kura(b, 'stats', '--json')))).toMatchObject({ documents: expect.any(Number) });
    const bucket = `s3://${s3.bucket}/copied`;
    ok(kura(undefined, 'copy', b, bucket));
    const c = join(root, 'c');
    ok(run({ endpointFlag: true }, undefined, 'copy', bucket, c));
    expect(state(c)).toBe(before);
    expect(state(bucket)).toBe(before);
    expect(ok(kura(c, 'verify'))).toBeDefined();

    // Again, through a proxy that counts the bucket's requests: everything present, nothing
    // sent, and nothing written to the bucket — no pack, no commit.
    const proxy = await startFaultProxy(s3.endpoint);
    const written: string[] = [];
    proxy.add({ match: (r) => (r.method !== 'GET' && r.method !== 'HEAD' && written.push(`${r.method} ${r.url}`), false), action: 'reset' });
    const again = JSON.parse(ok(await runVia(proxy.endpoint, 'copy', b, bucket, '--json')));
    console.log(`second copy to S3: requests ${JSON.stringify(Object.fromEntries(proxy.counts))}: ${written.join(', ')}`);
    await proxy.stop();
    expect(proxy.counts.get('GET')).toBeGreaterThan(0); // it did go through the proxy
    // Opening a bucket for writing probes it (objects/probe.ts: one key created twice, the second
    // refused, then deleted); nothing else is written.
    expect(written.filter((w) => !w.includes('/probe/'))).toEqual([]);
    expect(again).toMatchObject({ created: false, versionsCopied: 0, documentsSent: 0, bytesSent: 0, documentsLinked: 0, entriesUpdated: 0, snapshotsCopied: 0, snapshotsPresent: 1, pins: 0 });
    expect(again.versionsPresent).toBe(6);

    // What changed since is all a third run copies: a new version, a changed tag, a new snapshot.
    ok(kura(a, 'add', file('plan.md', '# plan v4\n'), '--path', 'notes/plan.md'));
    ok(kura(a, 'tag', 'reports/q3.txt', '-r', 'finance'));
    const later = JSON.parse(ok(kura(undefined, 'copy', a, b, '--json')));
    expect(later).toMatchObject({ versionsCopied: 1, documentsSent: 1, entriesUpdated: 1, snapshotsCopied: 0 });
    expect(state(b)).toBe(state(a));
  });

  it('--prefix and --snapshot select; a copy killed part way completes when run again', { timeout: 300_000 }, async () => {
    const a = join(root, 'many');
    ok(kura(a, 'init'));
    const dir = join(root, 'many-files');
    mkdirSync(join(dir, 'keep'), { recursive: true });
    mkdirSync(join(dir, 'skip'), { recursive: true });
    for (let i = 0; i < 2000; i++) writeFileSync(join(dir, i % 4 ? 'keep' : 'skip', `n${i}.txt`), `note ${i} ${'x'.repeat(500 + i)}\n`);
    ok(kura(a, 'add', dir, '--as', 'many'));
    const snap = JSON.parse(ok(kura(a, 'snapshot', join(dir, 'skip'), '--json')));

    const only = join(root, 'only');
    const selected = JSON.parse(ok(kura(undefined, 'copy', a, only, '--prefix', 'many/keep/', '--json')));
    expect(selected).toMatchObject({ entries: 1500, versionsCopied: 1500, snapshotsCopied: 0 });
    expect(ok(kura(only, 'ls')).includes('many/skip/')).toBe(false);
    const snapOnly = JSON.parse(ok(kura(undefined, 'copy', a, only, '--snapshot', snap.id.slice(0, 8), '--json')));
    expect(snapOnly).toMatchObject({ entries: 0, snapshotsCopied: 1 });
    // A snapshot the source lacks (a typo) is said before any destination is made.
    const typo = kura(undefined, 'copy', a, join(root, 'typo'), '--snapshot', 'ffff0000');
    expect([typo.code, typo.stderr]).toEqual([1, expect.stringMatching(/no snapshot ffff0000 \[NOT_FOUND\]/)]);
    expect(existsSync(join(root, 'typo'))).toBe(false);

    // Killed part way (after some commits), then run again: the same as the source.
    const killed = join(root, 'killed');
    ok(kura(killed, 'init'));
    const logBytes = () => readdirSync(join(killed, 'log')).reduce((n, f) => n + statSync(join(killed, 'log', f)).size, 0);
    const initial = logBytes();
    const child = spawn(process.execPath, [BIN, 'copy', a, killed], { cwd: root, env: env(), stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    // Killed once its first commits (a few dozen puts' worth) reach the log.
    while (logBytes() < initial + 16_384 && child.exitCode === null) await new Promise((r) => setTimeout(r, 5));
    child.kill('SIGKILL');
    await exited;
    const partial = ok(kura(killed, 'ls')).trim().split('\n').filter(Boolean).length;
    expect(partial).toBeLessThan(2000); // killed part way, not after
    const finished = JSON.parse(ok(kura(undefined, 'copy', a, killed, '--json')));
    expect(finished.errors).toEqual([]);
    expect(finished.versionsPresent + finished.versionsCopied).toBe(2000);
    expect(state(killed, false)).toBe(state(a, false));
    expect(ok(kura(killed, 'verify'))).toBeDefined();
    console.log(`copy killed after ${partial} of 2000 entries; the second run copied ${finished.versionsCopied}`);
  });
});
