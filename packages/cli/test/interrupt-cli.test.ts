/**
 * Ctrl-C during `kura restore` and `kura get -o` (interrupt.ts): the process stops at once, of
 * the signal, and leaves no temporary file and no partial file behind — killed mid-write, both
 * left theirs (`.kura-restore-*`, `FILE.tmp-PID`: a trial). Files restored before stay whole.
 * During `kura snapshot`: it stops and says that nothing was recorded.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'kura-interrupt-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const store = join(root, 'store');

function kura(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args, '--store', store], { maxBuffer: 64 << 20 });
  return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** Whether the store at `at` has its first pack file (a put has begun writing). */
function packMade(at: string): boolean {
  try {
    return readdirSync(join(at, 'packs'), { recursive: true }).some((n) => String(n).endsWith('.pack'));
  } catch {
    return false;
  }
}

/** Starts `kura ARGS`, sends SIGINT once `seen()` holds (polled), and answers how it ended. */
async function interrupted(args: string[], seen: () => boolean, at = store): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; sent: boolean }> {
  const child = spawn(process.execPath, [BIN, ...args, '--store', at], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  let sent = false;
  let done = false;
  void exited.then(() => (done = true));
  while (!done) {
    if (!sent && seen()) {
      child.kill('SIGINT');
      sent = true;
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  return { ...(await exited), stderr, sent };
}

describe('Ctrl-C while writing files', () => {
  const tree = join(root, 'tree');
  let snapshot = '';
  let digest = '';
  beforeAll(() => {
    mkdirSync(tree);
    spawnSync('sh', ['-c', `printf 'first\\n' > ${join(tree, 'a.txt')}`]);
    // Large and incompressible: the restore is still writing it when the signal comes.
    const fd = openSync(join(tree, 'big.bin'), 'w');
    for (let i = 0; i < 256; i++) writeSync(fd, randomBytes(1 << 20));
    closeSync(fd);
    expect(kura(['init']).code).toBe(0);
    const snap = kura(['snapshot', tree, '--json']);
    expect(snap.code).toBe(0);
    snapshot = JSON.parse(snap.stdout).id;
    const add = kura(['add', join(tree, 'big.bin'), '--path', 'big.bin', '--json']);
    expect(add.code).toBe(0);
    digest = JSON.parse(add.stdout.trim().split('\n')[0]!).digest;
  }, 120_000);

  it('restore stops, of the signal: the file being written goes, the one written stays', async () => {
    const target = join(root, 'restored');
    const temp = () => {
      try {
        return readdirSync(target).some((n) => n.startsWith('.kura-restore-'));
      } catch {
        return false;
      }
    };
    const r = await interrupted(['restore', snapshot, target], temp);
    expect(r.sent, 'the restore ended before its temporary file was seen').toBe(true);
    expect(r.signal ?? r.code).toBe(r.signal ? 'SIGINT' : 130);
    expect(r.stderr).toContain('stopped (SIGINT)');
    expect(readdirSync(target).sort()).toEqual(['a.txt']);
    expect(readFileSync(join(target, 'a.txt'), 'utf8')).toBe('first\n');
  }, 60_000);

  it('snapshot stops, of the signal, says so and records nothing (it ended with 130 and not a word)', async () => {
    // A store of its own: its first pack appears as the snapshot puts big.bin.
    const fresh = join(root, 'store-snapshot');
    expect(spawnSync(process.execPath, [BIN, 'init', '--store', fresh]).status).toBe(0);
    const putting = () => packMade(fresh);
    const r = await interrupted(['snapshot', tree, '--json'], putting, fresh);
    expect(r.sent, 'the snapshot ended before it put a file').toBe(true);
    expect(r.signal ?? r.code).toBe(r.signal ? 'SIGINT' : 130);
    expect(r.stderr).toBe('kura: stopped (SIGINT); nothing was recorded\n');
    expect(spawnSync(process.execPath, [BIN, 'snapshots', '--store', fresh]).stdout.toString()).toBe('');
  }, 60_000);

  it('add stops, of the signal, and says what it leaves: the files listed are stored, the others not (it said nothing: a trial)', async () => {
    const fresh = join(root, 'add-store');
    expect(spawnSync(process.execPath, [BIN, 'init', '--store', fresh]).status).toBe(0);
    const putting = () => packMade(fresh);
    const r = await interrupted(['add', join(tree, 'a.txt'), join(tree, 'big.bin')], putting, fresh);
    expect(r.sent, 'the add ended before it put a file').toBe(true);
    expect(r.signal ?? r.code).toBe(r.signal ? 'SIGINT' : 130);
    expect(r.stderr).toBe('kura: stopped (SIGINT); the files listed above are stored; the others are not (add again: nothing is stored twice)\n');
    // What is there is whole: each path listed reads back.
    const listed = spawnSync(process.execPath, [BIN, 'ls', '--store', fresh]).stdout.toString();
    for (const line of listed.trim().split('\n').filter(Boolean)) {
      const digest = line.split(/\s+/)[0]!;
      expect(spawnSync(process.execPath, [BIN, 'get', digest, '--store', fresh, '-o', '/dev/null']).status).toBe(0);
    }
  }, 60_000);

  it('get -o stops, of the signal, and leaves neither the file nor its temporary', async () => {
    const out = join(root, 'out');
    mkdirSync(out);
    const r = await interrupted(['get', digest, '-o', join(out, 'big.bin')], () => readdirSync(out).some((n) => n.startsWith('big.bin.tmp-')));
    expect(r.sent, 'get ended before its temporary file was seen').toBe(true);
    expect(r.signal ?? r.code).toBe(r.signal ? 'SIGINT' : 130);
    expect(readdirSync(out)).toEqual([]);
  }, 60_000);
});
