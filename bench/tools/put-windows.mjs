/**
 * The store suite's 1 KB rows in the suite's shape — 3,000 puts one at a time into a first
 * store, then, in the same process, 50 warm-up puts and N puts at 32 in flight into a second
 * store — with the second phase's throughput given per window of 3,000 puts. The suite's x32
 * row is the first window alone; the later windows show the same puts once V8 has compiled
 * them for the second store (the first window pays for that: decision 0057).
 *
 * Usage: `node bench/tools/put-windows.mjs [TREE] [N]`, TREE a built Kura tree (default: this
 * one), N the x32 phase's puts (default 30,000). To compare two builds, alternate runs of each
 * in one hour: the machine's speed moves 1.5-2x within one.
 * Prints one JSON line: `{ x1: MB/s, x32: MB/s over all N, windows: [MB/s per 3,000] }`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { documents } from '../lib/documents.mjs';

const tree = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '../..'));
const N = Number(process.argv[3] ?? 30_000);
const WINDOW = 3_000;
const SIZE = 1024;
const { Store } = await import(pathToFileURL(join(tree, 'packages/store/dist/node/index.js')).href);

const mbPerSec = (puts, ms) => +((puts * SIZE) / 1e6 / (ms / 1000)).toFixed(2);

/** `count` puts at `inFlight` into a new store after 50 warm-up puts; the ms at which each finished. */
async function phase(dir, count, inFlight) {
  const docs = documents(count + 50, SIZE, SIZE);
  const store = await Store.init(dir);
  for (let i = 0; i < 50; i++) await store.put(docs[count + i]);
  const finished = new Float64Array(count);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    for (let i = next++; i < count; i = next++) {
      await store.put(docs[i]);
      finished[i] = performance.now() - t0;
    }
  }));
  const total = performance.now() - t0;
  await store.close();
  return { total, finished: finished.sort() };
}

const root = mkdtempSync(join(tmpdir(), 'kura-put-windows-'));
try {
  const x1 = await phase(join(root, 'first'), WINDOW, 1);
  const x32 = await phase(join(root, 'second'), N, 32);
  const windows = [];
  for (let s = 0; s + WINDOW <= N; s += WINDOW) {
    windows.push(mbPerSec(WINDOW, x32.finished[s + WINDOW - 1] - (s ? x32.finished[s - 1] : 0)));
  }
  console.log(JSON.stringify({ x1: mbPerSec(WINDOW, x1.total), x32: mbPerSec(N, x32.total), windows }));
} finally {
  rmSync(root, { recursive: true, force: true });
}
