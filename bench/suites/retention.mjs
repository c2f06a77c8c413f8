/**
 * The `retention` suite (decision 0058): a store of 1,000 paths with 10 versions each (2 KiB
 * of text-like bytes apiece: 10,000 versions), then `forgetVersions({ keep: 2 })` — 8,000
 * versions removed through the log, 1,000 removals a commit — and the GC that reclaims their
 * chunks; beside it, in the same run, deleting the same 8,000 versions one call each (what a
 * script without retention would do).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '@kura/store';
import { textLike } from '../lib/data.mjs';

const PATHS = 1000;
const VERSIONS = 10;
const log = (msg) => process.stderr.write(`[retention] ${msg}\n`);

async function filled(dir) {
  const store = await Store.init(dir);
  const corpus = textLike(PATHS * VERSIONS * 2048 + 4096, 17, 4096);
  let at = 0;
  for (let v = 1; v <= VERSIONS; v++) for (let p = 0; p < PATHS; p++, at += 2048) await store.put(corpus.subarray(at, at + 2048), { path: `docs/${p}.txt` });
  return store;
}

export async function run() {
  const root = mkdtempSync(join(tmpdir(), 'kura-bench-retention-'));
  const rows = [];
  try {
    const store = await filled(join(root, 'a'));
    let t0 = performance.now();
    const r = await store.forgetVersions({ keep: 2 });
    const forgetMs = performance.now() - t0;
    t0 = performance.now();
    const gc = await store.gc();
    const gcMs = performance.now() - t0;
    await store.close();
    rows.push({ family: 'retention', group: `${(PATHS * VERSIONS).toLocaleString('en')} versions, keep 2`, impl: 'forgetVersions', size: 0, ms: forgetMs, removed: r.remove.length, opsPerSec: r.remove.length / (forgetMs / 1000) });
    rows.push({ family: 'retention', group: `${(PATHS * VERSIONS).toLocaleString('en')} versions, keep 2`, impl: 'gc after it', size: 0, ms: gcMs, freed: gc.bytesFreed, chunks: gc.chunksRemoved });
    log(`forget: ${r.remove.length} versions in ${forgetMs.toFixed(0)} ms; gc: ${gc.chunksRemoved} chunks, ${(gc.bytesFreed / 1e6).toFixed(1)} MB in ${gcMs.toFixed(0)} ms`);
    const peer = await filled(join(root, 'b'));
    t0 = performance.now();
    for (let p = 0; p < PATHS; p++) for (let v = 1; v <= VERSIONS - 2; v++) await peer.deleteVersion(`docs/${p}.txt`, v);
    const oneByOne = performance.now() - t0;
    await peer.close();
    rows.push({ family: 'retention', group: `${(PATHS * VERSIONS).toLocaleString('en')} versions, keep 2`, impl: 'deleteVersion, one call each', size: 0, ms: oneByOne, removed: PATHS * (VERSIONS - 2), opsPerSec: (PATHS * (VERSIONS - 2)) / (oneByOne / 1000) });
    log(`deleteVersion one by one: ${(oneByOne / 1000).toFixed(1)} s`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return rows;
}

export const families = {
  retention: {
    title: 'forgetting versions: a policy through the log (1,000 removals a commit) and the GC after it, beside deleting the same versions one call each',
    ratio: () => undefined,
    extra: [
      { header: 'ms', value: (r) => r.ms?.toFixed(0) },
      { header: 'removed', value: (r) => r.removed?.toLocaleString('en') ?? '' },
      { header: 'freed', value: (r) => (r.freed === undefined ? '' : `${(r.freed / 1e6).toFixed(1)} MB (${r.chunks} chunks)`) },
    ],
  },
};

export function targets() {
  return [];
}
