import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { newStore, tempDir } from './helpers/store.js';

const RACE = fileURLToPath(new URL('./fixtures/wal-race.mjs', import.meta.url));

describe('the WAL under sustained writes', () => {
  it('stays bounded: the checkpointer truncates it once it passes its limit', { timeout: 120_000 }, async () => {
    const { store, dir } = await newStore();
    const body = new Uint8Array(900);
    let peak = 0;
    // One put at a time: every put its own transaction, the worst case for WAL growth
    // (about 30 KB of pages each; 20,000 of them made a 630 MB WAL before the fix).
    for (let i = 0; i < 40_000; i++) {
      body[0] = i & 255;
      body[1] = (i >> 8) & 255;
      body[2] = i >> 16;
      await store.put(body);
      if (i % 500 === 0) {
        try {
          peak = Math.max(peak, statSync(join(dir, 'kura.db-wal')).size);
        } catch {
          /* truncated away */
        }
      }
    }
    expect(peak).toBeLessThan(450 * 2 ** 20); // the limit (256 MiB) and a few intervals' growth
    expect((await store.stats()).documents).toBe(40_000);
  });

  it('metadata updates keep working while the checkpointer truncates the WAL under them', { timeout: 120_000 }, async () => {
    // A deferred transaction that read and then wrote failed with SQLITE_BUSY ("database is
    // locked") when a TRUNCATE checkpoint reset the WAL between its read and its write.
    const { store } = await newStore();
    const digests: string[] = [];
    for (let i = 0; i < 200; i++) digests.push((await store.put(new TextEncoder().encode(`doc ${i}`))).digest);
    for (let i = 0; i < 40_000; i++) await store.setMeta(digests[i % 200]!, { n: String(i) });
    expect((await store.stat(digests[199]!)).meta.n).toBe('39999');
  });

  it('a write transaction waits out a long TRUNCATE checkpoint even when signals cut its sleeps short', { timeout: 60_000 }, () => {
    // SQLite's busy timeout adds up the sleeps it planned, not the time that passed; under the
    // V8 profiler (a SIGPROF every millisecond interrupts each sleep) BEGIN IMMEDIATE gave up
    // with SQLITE_BUSY after ~80 ms behind a TRUNCATE, and a put failed: "database is locked".
    const dir = tempDir();
    const r = spawnSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${join(dir, 'prof')}`, RACE, join(dir, 'race.db'), '4'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toMatch(/^ok \d+$/);
  });
});
