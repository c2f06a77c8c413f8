import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, truncateSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const SHARED = fileURLToPath(new URL('../../../../shared/test-vectors/', import.meta.url));
const IMAGE = join(SHARED, 'SekienAkashita.jpg');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function kura(args: string[], input?: Uint8Array) {
  const r = spawnSync(process.execPath, [BIN, ...args], { input, maxBuffer: 64 << 20 });
  return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** A one-line message, no stack trace. */
function expectOneLineError(stderr: string, pattern: RegExp) {
  expect(stderr).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at /);
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kura-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kura hash', () => {
  it('prints exactly what sha256sum prints, with the sha256: prefix', () => {
    const empty = join(dir, 'empty');
    const spaced = join(dir, 'with space.txt');
    writeFileSync(empty, '');
    writeFileSync(spaced, 'hello\n');
    const files = [IMAGE, empty, spaced];
    const expected = execFileSync('sha256sum', files).toString().replace(/^/gm, 'sha256:').replace(/sha256:$/, '');
    const r = kura(['hash', ...files]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(expected);
  });

  it("escapes names with a newline or backslash as sha256sum does: the README's check passes", () => {
    const names = ['new\nline.txt', 'back\\slash.txt', 'plain.txt'].map((n) => join(dir, n));
    names.forEach((n, i) => writeFileSync(n, `file ${i}\n`));
    const r = kura(['hash', ...names]);
    // Line for line what sha256sum prints (it split a name's newline into a line of its own).
    expect(r.stdout).toBe(execFileSync('sha256sum', names).toString().replace(/^(\\?)/gm, '$1sha256:').replace(/sha256:$/, ''));
    // And the README's pipeline checks them (sha256sum -c, exit 0).
    const check = spawnSync('bash', ['-c', `sed -E 's/^(\\\\?)sha256:/\\1/' | sha256sum -c`], { input: r.stdout });
    expect([check.status, check.stdout.toString().match(/: OK$/gm)?.length]).toEqual([0, 3]);
  });

  it('hashes standard input and BLAKE3 on request', () => {
    const data = readFileSync(IMAGE);
    const r = kura(['hash', '--algo', 'blake3', '-'], data);
    expect(r.stdout).toBe(`blake3:${hex(nobleBlake3(data))}  -\n`);
  });

  it('reports an unreadable file in one line, exit 1, and still hashes the rest', () => {
    const r = kura(['hash', join(dir, 'missing'), IMAGE, dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^sha256:d9e749d9367fc908876749d6502eb212fee88c9a94892fb07da5ef3ba8bc39ed {2}/);
    expectOneLineError(r.stderr, /kura: .*missing: no such file or directory \[ENOENT\]\nkura: .*: is a directory \[EISDIR\]\n$/);
  });

  it('rejects an unknown algorithm as a usage error', () => {
    const r = kura(['hash', '--algo', 'md5', IMAGE]);
    expect(r.code).toBe(2);
    expectOneLineError(r.stderr, /--algo must be one of sha256, blake3/);
  });
});

describe('kura chunks', () => {
  const vectors = JSON.parse(readFileSync(join(SHARED, 'fastcdc2020.json'), 'utf8'));
  const image = readFileSync(IMAGE);

  it.each(vectors.cases.map((c: any) => [c.seed, c]))('--json reproduces the known answers (seed %s)', (_s, c: any) => {
    const r = kura(['chunks', '--json', '--avg', String(c.avg), '--seed', String(c.seed), IMAGE]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.offset, l.length])).toEqual(c.chunks.map((x: any) => [x.offset, x.length]));
    for (const l of lines) expect(l.key).toBe(hex(nobleBlake3(image.subarray(l.offset, l.offset + l.length))));
    expect(r.stderr).toMatch(/^6 chunks, 109466 bytes, sha256:d9e749d9/);
  });

  it('plain output is offset, length and key separated by tabs; stdin works', () => {
    const r = kura(['chunks', '-'], image);
    expect(r.stdout.split('\n')[0]).toMatch(/^0\t19186\t[0-9a-f]{64}$/);
  });

  it.each([
    [['chunks', '--avg', '1000', IMAGE], /power of two/],
    [['chunks', '--avg', '16384', '--max', '65534', IMAGE], /max must equal 4 \* avg/],
    [['chunks', '--seed', '-1', IMAGE], /--seed must be/],
    [['chunks', '--avg', '16k', IMAGE], /--avg must be a whole number/],
    [['chunks', '--bogus', IMAGE], /unknown option/],
    [['chunks'], /missing required argument/],
    [['frobnicate'], /unknown command/],
  ])('%o is a usage error (exit 2)', (args, message) => {
    const r = kura(args as string[]);
    expect(r.code).toBe(2);
    expectOneLineError(r.stderr, message);
  });

  it('a missing file is an error (exit 1)', () => {
    const r = kura(['chunks', join(dir, 'nope')]);
    expect(r.code).toBe(1);
    expectOneLineError(r.stderr, /no such file or directory/);
  });

  it('streams a 1 GiB file in bounded memory', async () => {
    const big = join(dir, 'big.sparse');
    closeSync(openSync(big, 'w'));
    truncateSync(big, 1 << 30); // zeros: every chunk is max-sized (64 KiB)
    const child = spawn(process.execPath, [BIN, 'chunks', '--json', big], { stdio: ['ignore', 'pipe', 'pipe'] });
    let lines = 0;
    let peakKiB = 0;
    child.stdout.on('data', (d: Buffer) => {
      for (const b of d) if (b === 10) lines++;
    });
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) peakKiB = Math.max(peakKiB, Number(m[1]));
      } catch {
        // the process has exited
      }
    }, 25);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearInterval(poll);
    expect(code).toBe(0);
    expect(lines).toBe((1 << 30) / 65536);
    expect(peakKiB).toBeGreaterThan(0);
    expect(peakKiB / 1024).toBeLessThan(200); // MB, for a 1024 MB input
  });

  it('exits quietly when the reader closes the pipe', () => {
    const big = join(dir, 'big2.sparse');
    closeSync(openSync(big, 'w'));
    truncateSync(big, 256 << 20);
    const r = spawnSync('sh', ['-c', `"${process.execPath}" "${BIN}" chunks "${big}" | head -n 1`]);
    expect(r.status).toBe(0);
    expect(r.stdout.toString()).toMatch(/^0\t65536\t/);
    expect(r.stderr.toString()).not.toMatch(/EPIPE|Error/);
  });
});
