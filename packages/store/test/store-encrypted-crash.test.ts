/**
 * An encrypted store (FORMAT.md §17) killed at steps of a commit: writer processes on one
 * encrypted store directory (fixtures/child.mjs, mode `crash`, KURA_PASSWORD, each with a cache
 * of its own) SIGKILL themselves at a named point — a commit object created before the database
 * applies it (`published`), applied before its caller is told (`committed`), a sealed pack
 * uploaded with its sealed index (`pack-sealing`), a sealed checkpoint written, records moved
 * (re-sealed) by GC. Once alone, once beside a second writer. After each round the killed
 * writer reopens on its own cache and a new one on an empty cache (rebuilt from the sealed
 * objects alone): both pass verify, hold every acknowledged put, delete and metadata batch, and
 * agree row for row. The encrypted twin of store-s3-crash-points.test.ts, on a directory.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CRASH_POINTS, type CrashPoint } from '../src/crash-points.js';
import { Store } from '../src/node/index.js';
import { canonicalDump } from './helpers/dump.js';
import { Ledger, awaitCrash, checkLedgers, expectSameDump, startChild } from './helpers/crash-children.js';

const ROUNDS = Number(process.env.KURA_CRASH_POINT_ROUNDS ?? 2);
const PASSWORD = 'crash test password';
const FAST = { memoryKib: 64, passes: 1, lanes: 1 };
const NTH: Partial<Record<CrashPoint, number>> = { published: 10, committed: 12, 'pack-sealing': 5, 'checkpoint-written': 1, 'records-moved': 1 };
const nth = (point: CrashPoint, round: number) => NTH[point]! + (point === 'records-moved' ? 0 : round);

const root = mkdtempSync(join(tmpdir(), 'kura-enc-crash-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Where a child with KURA_CACHE=`base` keeps an encrypted directory store's cache (defaultCacheDir). */
const cacheOf = (base: string, dir: string) => join(base, 'stores', createHash('sha256').update(dir).digest('hex').slice(0, 16));

describe('an encrypted store killed at steps of a commit', () => {
  for (const point of Object.keys(NTH) as CrashPoint[]) {
    it(`${point}: nothing acknowledged is lost, alone and beside another writer (${ROUNDS} rounds)`, { timeout: 300_000 }, async () => {
      expect(CRASH_POINTS).toContain(point);
      const dir = join(root, `store-${point}`);
      await (await Store.init(dir, { encryption: { kdf: FAST }, password: PASSWORD, cacheDir: mkdtempSync(join(root, 'init-')), chunking: { avg: 4096 }, compression: false })).close();
      const cacheA = mkdtempSync(join(root, 'a-'));
      const cacheB = mkdtempSync(join(root, 'b-'));
      const crashed = new Ledger();
      const other = new Ledger();
      other.next = 10_000_000;
      for (let round = 0; round < ROUNDS; round++) {
        const beside = round % 2 === 1;
        const env = { KURA_PASSWORD: PASSWORD };
        const a = startChild(dir, crashed.next, join(root, `journal-${point}-a-${round}`), `${point}:${nth(point, round)}`, { ...env, KURA_CACHE: cacheA });
        const b = beside ? startChild(dir, other.next, join(root, `journal-${point}-b-${round}`), undefined, { ...env, KURA_CACHE: cacheB }) : undefined;
        await awaitCrash({ a, b, point, n: round }, crashed, other);
        const restarted = await Store.open(dir, { password: PASSWORD, cacheDir: cacheOf(cacheA, dir) });
        const freshDir = mkdtempSync(join(root, 'fresh-'));
        const fresh = await Store.open(dir, { password: PASSWORD, cacheDir: freshDir });
        try {
          const what = `after a crash at ${point}, round ${round}`;
          await checkLedgers(restarted, [crashed, other], `${what} (restarted)`);
          await checkLedgers(fresh, [crashed, other], `${what} (new cache)`);
          expect((await restarted.refresh()).seq, what).toBe((await fresh.refresh()).seq);
        } finally {
          await restarted.close();
          await fresh.close();
        }
        expectSameDump(canonicalDump(join(cacheOf(cacheA, dir), 'kura.db')), canonicalDump(join(freshDir, 'kura.db')));
      }
      expect(crashed.acks).toBeGreaterThan(0);
      const seqs = readdirSync(join(dir, 'log')).map(Number).sort((x, y) => x - y);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    });
  }
});
