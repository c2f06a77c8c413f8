/**
 * Randomized corruption trials: a byte flipped, a file truncated or deleted at a random place in
 * the packs or the database of a copy of a populated store. Whatever happens, a read returns the
 * document's exact bytes or fails; in the packs, every failed read is one verify reports.
 * KURA_CORRUPTION_TRIALS (default 40 in CI; `pnpm test:corruption` runs 400).
 */
import { createHash } from 'node:crypto';
import { cpSync, openSync, readSync, readdirSync, rmSync, statSync, truncateSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import { concatBytes, randomBytes, textBytes } from '../../core/test/helpers/data.js';
import { recordReliability } from './helpers/reliability.js';
import { tempDir } from './helpers/store.js';

const TRIALS = Number(process.env.KURA_CORRUPTION_TRIALS ?? 40);
const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** A small deterministic generator, so a failing trial can be replayed from its number. */
function rng(seed: number) {
  let x = seed * 2654435761 + 1;
  return (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

async function populate(dir: string): Promise<Map<string, number>> {
  const store = await Store.init(dir, { chunking: { avg: 4096 } });
  const docs = new Map<string, number>();
  const shared = randomBytes(1, 40_000);
  for (let i = 0; i < 24; i++) {
    const bytes = i % 3 === 0 ? concatBytes([shared, textBytes(100 + i, 5000)]) : i % 3 === 1 ? textBytes(200 + i, 30_000) : randomBytes(300 + i, 20_000);
    const r = await store.put(bytes, { path: `doc-${i}.bin` });
    docs.set(r.digest, bytes.length);
  }
  await store.close();
  return docs;
}

function files(dir: string, under: string): string[] {
  return readdirSync(join(dir, under), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

function damage(file: string, pick: (n: number) => number): string {
  const size = statSync(file).size;
  const how = pick(10);
  if (how < 7 && size > 0) {
    const at = pick(size);
    const fd = openSync(file, 'r+');
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, at);
    b[0] = b[0]! ^ (1 + pick(255));
    writeSync(fd, b, 0, 1, at);
    closeSync(fd);
    return `flip @${at}`;
  }
  if (how < 9) {
    const at = pick(Math.max(1, size));
    truncateSync(file, at);
    return `truncate to ${at}`;
  }
  rmSync(file);
  return 'delete';
}

describe('corruption trials', () => {
  it(`damage in packs: reads return exact bytes or fail, and verify names every failure (${TRIALS} trials)`, { timeout: 30_000 + TRIALS * 2000 }, async () => {
    const pristine = join(tempDir(), 'store');
    const docs = await populate(pristine);
    let detected = 0;
    let failedReads = 0;
    let exactReads = 0;
    let harmless = 0;
    for (let t = 0; t < TRIALS; t++) {
      const pick = rng(t + 1);
      const dir = join(tempDir(), 'store');
      cpSync(pristine, dir, { recursive: true });
      const packs = files(dir, 'packs');
      const target = packs[pick(packs.length)]!;
      const what = damage(target, pick);
      const store = await Store.open(dir);
      const report = await store.verify();
      const flagged = new Set(report.damagedDocuments.map((d) => d.digest));
      for (const [digest] of docs) {
        const got = await store.getBytes(digest).then(
          (b) => b,
          (e: { code?: string }) => e,
        );
        if (got instanceof Uint8Array) {
          expect(sha(got), `trial ${t} (${what}): ${digest}`).toBe(digest);
          exactReads++;
        } else {
          expect((got as { code?: string }).code, `trial ${t} (${what})`).toBe('CORRUPT_DATA');
          expect(flagged.has(digest), `trial ${t} (${what}): a failed read verify did not report`).toBe(true);
          failedReads++;
        }
      }
      if (!report.ok) detected++;
      else harmless++; // the damage hit nothing live (every read above was exact)
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
    expect(detected).toBeGreaterThan(TRIALS / 2); // most damage lands in live records
    recordReliability('corruption-packs', 'bytes flipped, packs truncated or deleted', {
      'damages injected': TRIALS,
      'detected by verify': detected,
      'hit nothing live (every read exact, verify clean)': harmless,
      'reads refused with CORRUPT_DATA (each reported by verify)': failedReads,
      'reads with exact bytes': exactReads,
      'reads that returned wrong bytes': 0,
    });
  });

  it(`damage in the database: a read never returns wrong bytes (${TRIALS} trials)`, { timeout: 30_000 + TRIALS * 2000 }, async () => {
    const pristine = join(tempDir(), 'store');
    const docs = await populate(pristine);
    let opened = 0;
    let reads = 0;
    let refused = 0;
    for (let t = 0; t < TRIALS; t++) {
      const pick = rng(1000 + t);
      const dir = join(tempDir(), 'store');
      cpSync(pristine, dir, { recursive: true });
      const what = damage(join(dir, 'kura.db'), (n) => (n === 10 ? pick(9) : pick(n))); // flips and truncations
      let store: Store;
      try {
        store = await Store.open(dir);
      } catch {
        rmSync(dir, { recursive: true, force: true });
        continue; // refusing to open a damaged database is a right answer
      }
      opened++;
      for (const [digest] of docs) {
        const got = await store.getBytes(digest).catch(() => undefined);
        if (got) {
          expect(sha(got), `trial ${t} (${what}): ${digest}`).toBe(digest);
          reads++;
        } else refused++;
      }
      await store.verify().catch(() => undefined); // may report or throw; must not return wrong bytes above
      await store.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
    expect(opened).toBeGreaterThan(0); // the trials reached reads, not only refusals to open
    recordReliability('corruption-db', 'bytes flipped or the database truncated', {
      'damages injected': TRIALS,
      'stores that refused to open': TRIALS - opened,
      'reads with exact bytes': reads,
      'reads refused': refused,
      'reads that returned wrong bytes': 0,
    });
  });
});
