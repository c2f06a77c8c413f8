/**
 * `kura add` of a file that is being written: what is stored is a state the file had, never a
 * mix of its old and new bytes. A trial's `kura add` of a 40 MB file written at two places
 * while it was read stored a version holding the second write and not the first, and said
 * nothing. Now a read that saw the file change is given up before it commits and read again
 * (three reads at most); a file that keeps changing is not stored, and the exit says so.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'kura-add-changing-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function kura(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { maxBuffer: 256 << 20, cwd: root });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr.toString() };
}

/** Runs `kura ARGS` while `file` is written at a new place every few ms, until it exits. */
async function addWhileWritten(args: string[], file: string): Promise<{ code: number | null; stdout: string; stderr: string; writes: number }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  let code: number | null | undefined;
  child.on('exit', (c) => (code = c));
  const fd = openSync(file, 'r+');
  let writes = 0;
  try {
    const deadline = Date.now() + 60_000;
    while (code === undefined && Date.now() < deadline) {
      writeSync(fd, Buffer.from(`W${writes}`), 0, undefined, (writes * 7919 * 4096) % (38 << 20));
      writes++;
      await new Promise((r) => setTimeout(r, 3));
    }
  } finally {
    closeSync(fd);
  }
  while (code === undefined) await new Promise((r) => setTimeout(r, 10));
  return { code, stdout, stderr, writes };
}

describe('kura add of a file being written', () => {
  const store = join(root, 'store');
  expect(kura(['init', '--store', store]).code).toBe(0);

  it('a file that keeps changing while it is read is not stored, on this thread and through the workers', { timeout: 180_000 }, async () => {
    writeFileSync(join(root, 'busy.txt'), Buffer.alloc(40 << 20, 'a'));
    writeFileSync(join(root, 'still.txt'), 'a file nobody writes\n');
    // One file: read on this thread.
    const one = await addWhileWritten(['add', '--store', store, 'busy.txt'], join(root, 'busy.txt'));
    expect(one.writes).toBeGreaterThan(10);
    expect(one.code).toBe(1);
    expect(one.stderr).toMatch(/busy\.txt: changed while it was read, 3 times: not stored .*\[INVALID_INPUT\]/);
    expect(kura(['ls', '--store', store]).stdout.toString()).toBe('');
    // Several: read by the workers, then again here; the file nobody writes is stored.
    const many = await addWhileWritten(['add', '--store', store, 'busy.txt', 'still.txt'], join(root, 'busy.txt'));
    expect(many.code).toBe(1);
    expect(many.stderr).toMatch(/busy\.txt: changed while it was read, 3 times/);
    expect(kura(['ls', '--store', store]).stdout.toString()).toMatch(/^sha256:\S+\s+\S+ B\s+still\.txt\n$/);
  });

  it('a file written only for a while is stored as it was once still, never as a mix', { timeout: 180_000 }, async () => {
    const file = join(root, 'settles.txt');
    writeFileSync(file, Buffer.alloc(40 << 20, 'b'));
    const child = spawn(process.execPath, [BIN, 'add', '--store', store, 'settles.txt', '--json'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', r));
    // Writes for the first 300 ms (into the first read), then none.
    const fd = openSync(file, 'r+');
    const until = Date.now() + 300;
    for (let i = 0; Date.now() < until; i++) {
      writeSync(fd, Buffer.from(`S${i}`), 0, undefined, (i * 104_729) % (38 << 20));
      await new Promise((r) => setTimeout(r, 3));
    }
    closeSync(fd);
    expect(await exited).toBe(0);
    const { digest } = JSON.parse(out.trim());
    const stored = kura(['get', '--store', store, digest]).stdout;
    expect(Buffer.compare(stored, readFileSync(file))).toBe(0);
  });
});
