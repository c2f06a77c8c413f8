/**
 * openForWriting (decision 0059, amended): a file this process or a child holds open for
 * writing is named; one open only for reading, or closed, is not; on Linux /proc answers.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openForWriting } from '../src/node/open-files.js';

const dir = mkdtempSync(join(tmpdir(), 'kura-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('openForWriting', () => {
  it.runIf(process.platform === 'linux')('names files open for writing here or in another process, and no others', async () => {
    const [w, rw, r, closed, child] = ['w', 'rw', 'r', 'closed', 'child'].map((n) => join(dir, n));
    for (const p of [w!, rw!, r!, closed!, child!]) writeFileSync(p, 'x');
    const fds = [openSync(w!, 'a'), openSync(rw!, 'r+'), openSync(r!, 'r')];
    closeSync(openSync(closed!, 'w'));
    // Another process holding one open for writing until told to stop.
    const holder = spawn(process.execPath, ['-e', `require('fs').openSync(${JSON.stringify(child)}, 'a'); process.stdout.write('open'); setTimeout(() => {}, 60000)`], { stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise((resolve) => holder.stdout!.once('data', resolve));
    try {
      const all = new Set([w!, rw!, r!, closed!, child!, join(dir, 'absent')]);
      expect([...openForWriting(all)!].sort()).toEqual([child!, rw!, w!].sort());
      for (const fd of fds) closeSync(fd);
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('exit', resolve));
      expect([...openForWriting(all)!]).toEqual([]);
    } finally {
      holder.kill('SIGKILL');
    }
  });
});
