/**
 * `kura watch` as a process: killed with SIGKILL in the middle of a burst, it has lost nothing
 * it reported stored (every path and digest it printed is in the store afterwards); stopped
 * with SIGTERM it ends cleanly, and started again it catches up with what it missed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Store } from '@kura/store';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
/** Permissions are tested as nobody: root reads every directory. */
const NOBODY = 65534;
const canDrop = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0;
const roots: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  roots.splice(0).forEach((r) => rmSync(r, { recursive: true, force: true }));
});

interface Stored {
  type: string;
  path?: string;
  digest?: string;
}

/** Starts `kura watch --json`; `events` fills with each complete line it prints. */
function watch(store: string, dir: string, extra: string[] = [], as?: 'nobody'): { child: ChildProcess; events: Stored[]; exited: Promise<number | null>; until(pred: (e: Stored[]) => boolean, ms?: number): Promise<void> } {
  const argv = [BIN, 'watch', dir, '--store', store, '--json', ...extra];
  const child = as ? spawn('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] }) : spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const events: Stored[] = [];
  let buffered = '';
  child.stdout!.on('data', (d: Buffer) => {
    buffered += d.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!; // a line cut by a kill is not a report
    for (const l of lines) if (l) events.push(JSON.parse(l) as Stored);
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const until = async (pred: (e: Stored[]) => boolean, ms = 30_000) => {
    const start = Date.now();
    while (!pred(events)) {
      if (Date.now() - start > ms) throw new Error(`kura watch: timed out; stderr: ${err}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { child, events, exited, until };
}

describe('kura watch (a process)', () => {
  it('killed with SIGKILL mid-burst, it lost nothing it reported stored; SIGTERM ends it cleanly; a restart catches up', { timeout: 120_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-watch-cli-'));
    roots.push(root);
    const store = join(root, 'store');
    const dir = join(root, 'inbox');
    mkdirSync(dir);
    expect(spawnSync(process.execPath, [BIN, 'init', '--store', store]).status).toBe(0);

    const first = watch(store, dir);
    await first.until((e) => e.some((x) => x.type === 'ready'));
    // A burst of 3,000 files, written while the watch stores them; killed once 300 are reported.
    let written = 0;
    const writing = (async () => {
      for (let d = 0; d < 30; d++) {
        mkdirSync(join(dir, `b${d}`));
        for (let f = 0; f < 100; f++) writeFileSync(join(dir, `b${d}`, `f${f}.txt`), `burst ${d} ${f}`), written++;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await first.until((e) => e.filter((x) => x.type === 'stored').length >= 300);
    first.child.kill('SIGKILL');
    await first.exited;
    await writing;
    const reported = first.events.filter((e) => e.type === 'stored');
    expect(reported.length).toBeGreaterThanOrEqual(300);
    expect(written).toBe(3000);

    const s = await Store.open(store);
    try {
      for (const e of reported) {
        const versions = await s.versions(e.path!);
        expect(versions.map((v) => v.digest), e.path).toContain(e.digest);
      }
    } finally {
      await s.close();
    }

    // Started again: it catches up with every file, then SIGTERM ends it with exit 0.
    const second = watch(store, dir);
    await second.until((e) => e.some((x) => x.type === 'ready'), 60_000);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    const after = await Store.open(store, { readonly: true });
    try {
      expect((await after.stats()).entries).toBe(3000);
    } finally {
      await after.close();
    }
  });

  it('two watches and a writer on one store at once: every file of both folders and every add is there, and verify passes', { timeout: 120_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-watch-two-'));
    roots.push(root);
    const store = join(root, 'store');
    expect(spawnSync(process.execPath, [BIN, 'init', '--store', store]).status).toBe(0);
    const dirs = ['left', 'right'].map((n) => join(root, n));
    for (const d of dirs) mkdirSync(d);
    const watches = dirs.map((d) => watch(store, d));
    await Promise.all(watches.map((w) => w.until((e) => e.some((x) => x.type === 'ready'))));
    const adds: Promise<number | null>[] = [];
    for (let i = 0; i < 200; i++) {
      for (const d of dirs) writeFileSync(join(d, `n${i}.txt`), `${d} ${i}`);
      if (i % 50 === 0) {
        writeFileSync(join(root, `added${i}.txt`), `added ${i}`);
        adds.push(new Promise((r) => spawn(process.execPath, [BIN, 'add', join(root, `added${i}.txt`), '--as', 'added', '--store', store]).on('exit', (c) => r(c))));
      }
    }
    expect(await Promise.all(adds)).toEqual([0, 0, 0, 0]);
    await Promise.all(watches.map((w) => w.until((e) => e.filter((x) => x.type === 'stored').length >= 200, 60_000)));
    for (const w of watches) w.child.kill('SIGTERM');
    expect(await Promise.all(watches.map((w) => w.exited))).toEqual([0, 0]);
    const s = await Store.open(store, { readonly: true });
    try {
      expect((await s.stats()).entries).toBe(404);
      expect(new TextDecoder().decode(await s.getBytes(await s.resolve('right/n199.txt')))).toBe(`${dirs[1]} 199`);
      expect((await s.verify()).ok).toBe(true);
    } finally {
      await s.close();
    }
  });

  it('refuses a prefix that would own the whole store or that no put may make, before touching the store', () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-watch-prefix-'));
    roots.push(root);
    const store = join(root, 'store');
    const dir = join(root, 'share');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.md'), 'a\n');
    expect(spawnSync(process.execPath, [BIN, 'init', '--store', store]).status).toBe(0);
    expect(spawnSync(process.execPath, [BIN, 'add', '--store', store, '--path', 'work/important.txt', join(dir, 'a.md')]).status).toBe(0);
    for (const prefix of ['', '/', '../up/', 'a//b/']) {
      const r = spawnSync(process.execPath, [BIN, 'watch', '--store', store, '--prefix', prefix, dir], { encoding: 'utf8', timeout: 20_000 });
      expect(r.status, `--prefix "${prefix}": ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(prefix === '' ? /own every path/ : /prefix/);
    }
    const ls = spawnSync(process.execPath, [BIN, 'ls', '--store', store], { encoding: 'utf8' });
    expect(ls.stdout).toContain('work/important.txt'); // (an empty prefix deleted it: a trial)
    // The periodic check's period: seconds, 0 for never; and beside listening, not with --poll.
    for (const [args, said] of [[['--rescan', '-1'], /--rescan takes seconds/], [['--rescan', '0.5'], /--rescan takes seconds/], [['--rescan', 'hourly'], /--rescan takes seconds/], [['--rescan', '60', '--poll', '5'], /give one/]] as const) {
      const r = spawnSync(process.execPath, [BIN, 'watch', '--store', store, ...args, dir], { encoding: 'utf8', timeout: 20_000 });
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(said);
    }
  });

  it.runIf(canDrop)('a directory made unreadable while watched is that directory alone: the rest is still heard at once, and it again once readable (the whole tree was scanned every 30 s, for good: a trial)', { timeout: 60_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-watch-perm-'));
    roots.push(root);
    chmodSync(root, 0o755);
    const store = join(root, 'store');
    const dir = join(root, 'p');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    writeFileSync(join(dir, 'sub', 'b.md'), 'b\n');
    const asNobody = (args: string[]) => spawnSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, BIN, ...args], { encoding: 'utf8' });
    spawnSync('chown', ['-R', String(NOBODY), root]);
    expect(asNobody(['init', '--store', store]).status).toBe(0);
    const w = watch(store, dir, [], 'nobody');
    await w.until((e) => e.some((x) => x.type === 'ready'));
    // A tool run as root leaves `sub` unreadable to the watch's user.
    chmodSync(join(dir, 'sub'), 0o700);
    spawnSync('chown', ['0:0', join(dir, 'sub')]);
    await new Promise((r) => setTimeout(r, 500));
    writeFileSync(join(dir, 'two.md'), 'two\n');
    const t0 = Date.now();
    await w.until((e) => e.some((x) => x.type === 'stored' && x.path === 'p/two.md'), 10_000);
    expect(Date.now() - t0).toBeLessThan(5_000); // (heard, not found by a scan 30 s on)
    expect(w.events.filter((x) => x.type === 'scanning')).toEqual([]);
    // Readable again: its files are heard too.
    spawnSync('chown', [`${NOBODY}:${NOBODY}`, join(dir, 'sub')]);
    chmodSync(join(dir, 'sub'), 0o755);
    await new Promise((r) => setTimeout(r, 500));
    writeFileSync(join(dir, 'sub', 'c.md'), 'c\n');
    await w.until((e) => e.some((x) => x.type === 'stored' && x.path === 'p/sub/c.md'), 10_000);
    w.child.kill('SIGTERM');
    expect(await w.exited).toBe(0);
  });

  it('--poll keeps running and scanning until SIGTERM (it ended 0.4 s after "watching", exit 13)', { timeout: 60_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-watch-poll-'));
    roots.push(root);
    const store = join(root, 'store');
    const dir = join(root, 'share');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.md'), 'a\n');
    expect(spawnSync(process.execPath, [BIN, 'init', '--store', store]).status).toBe(0);
    const w = watch(store, dir, ['--poll', '1']);
    await w.until((e) => e.some((x) => x.type === 'ready'));
    let code: number | null | undefined;
    void w.exited.then((c) => (code = c));
    await new Promise((r) => setTimeout(r, 2500));
    expect(code).toBeUndefined(); // still running
    writeFileSync(join(dir, 'b.md'), 'b\n');
    await w.until((e) => e.some((x) => x.type === 'stored' && x.path === 'share/b.md'), 15_000);
    w.child.kill('SIGTERM');
    expect(await w.exited).toBe(0);
  });
});
