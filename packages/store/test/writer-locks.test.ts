/**
 * Writer liveness (node/lock.ts, FORMAT.md §5) while writers come and go: a GC or a new writer
 * looks at every lock file, and a writer takes or removes its own meanwhile. A trial saw both
 * sides fail beside a GC in a loop: `kura add` with a raw SQLITE_BUSY (its new lock file held
 * for a moment by the look) and GC with IO_ERROR (SQLITE_IOERR_FSTAT, a file removed under the
 * look).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { liveWriters, registerWriter, writerAlive } from '../src/node/lock.js';
import { tempDir } from './helpers/store.js';

const CHURN = fileURLToPath(new URL('./fixtures/writer-churn.mjs', import.meta.url));
const LOCK_JS = fileURLToPath(new URL('../dist/node/lock.js', import.meta.url));

describe('writer locks', () => {
  it('a held lock is alive, a released one is not', () => {
    const dir = tempDir();
    const lock = registerWriter(dir, '00000000000000aa');
    expect(liveWriters(dir)).toEqual(['00000000000000aa']);
    lock.release();
    expect(writerAlive(dir, '00000000000000aa')).toBe(false);
    expect(liveWriters(dir)).toEqual([]);
  });

  it('looks at writers while another process takes and releases locks: neither side fails', { timeout: 30_000 }, async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [CHURN, LOCK_JS, dir, '5000'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    let looks = 0;
    const failures: string[] = [];
    let done = false;
    void exited.then(() => (done = true));
    while (!done) {
      for (let i = 0; i < 100; i++) {
        looks++;
        try {
          liveWriters(dir);
        } catch (e) {
          failures.push(`${(e as { code?: string }).code}: ${(e as Error).message}`);
        }
      }
      await new Promise((r) => setImmediate(r));
    }
    const churn = JSON.parse(out) as { taken: number; failed?: string };
    expect(churn.failed).toBeUndefined();
    expect(failures).toEqual([]);
    expect(churn.taken).toBeGreaterThan(100);
    expect(looks).toBeGreaterThan(1000);
  });
});
