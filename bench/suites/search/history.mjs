/**
 * Search through history (decision 0056) against the latest-only search, in the same store and
 * run (issue 48: `--all-versions` p99 < 2x the latest-only search at 10,000 documents x 10
 * versions; quick runs 1,000 x 10): each path put ten times with a few words changed, then
 * the same queries asked both ways, in turns. The history index is filled before timing (the
 * first search through history fills it; that one is reported on its own).
 */
import { join } from 'node:path';
import { Store } from '@kura/store';
import { textLike } from '../../lib/data.mjs';

const VERSIONS = 10;

export async function historyLatency(root, full, log) {
  const paths = full ? 10_000 : 1_000;
  const store = await Store.init(join(root, 'history'));
  const rows = [];
  try {
    const corpus = textLike(paths * 2048 + 4096, 31, 4096);
    const decoder = new TextDecoder();
    const enc = new TextEncoder();
    const started = performance.now();
    for (let v = 1; v <= VERSIONS; v++) {
      for (let i = 0; i < paths; i++) {
        const base = decoder.decode(corpus.subarray(i * 2048, i * 2048 + 2048));
        await store.put(enc.encode(`${base}\nrevision r${v}x${i % 97} of ${v === 1 ? 'the first draft' : 'a later draft'}\n`), { path: `docs/${i}.txt`, mediaType: 'text/plain' });
      }
    }
    await store.search('warmup');
    log(`history: ${paths * VERSIONS} versions put and indexed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    let t0 = performance.now();
    await store.search('first', { allVersions: true });
    const fillMs = performance.now() - t0;
    log(`history: the first search through history indexed ${paths * (VERSIONS - 1)} older versions in ${(fillMs / 1000).toFixed(1)} s`);
    const queries = ['draft', 'first draft', 'r3x5', 'revision later'];
    const times = { latest: [], all: [] };
    for (let round = 0; round < (full ? 60 : 20); round++) {
      for (const q of queries) {
        t0 = performance.now();
        await store.search(q, { mode: 'keyword', limit: 20 });
        times.latest.push(performance.now() - t0);
        t0 = performance.now();
        await store.search(q, { allVersions: true, limit: 20 });
        times.all.push(performance.now() - t0);
      }
    }
    const pct = (a, p) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(p * a.length))];
    for (const [impl, t] of Object.entries(times)) {
      rows.push({ family: 'history', group: `${paths.toLocaleString('en')} paths x ${VERSIONS} versions`, impl: impl === 'all' ? 'allVersions' : 'latest only', size: 0, p50: pct(t, 0.5), p99: pct(t, 0.99), samples: t.length, fillMs, opsPerSec: 1000 / (t.reduce((a, b) => a + b, 0) / t.length) });
    }
  } finally {
    await store.close();
  }
  return rows;
}

export const historyFamily = {
  title: 'search through history: every version against the latest only, the same queries in turns (20 hits)',
  ratio: () => undefined,
  extra: [
    { header: 'p50 ms', value: (r) => r.p50.toFixed(2) },
    { header: 'p99 ms', value: (r) => r.p99.toFixed(2) },
    { header: 'first fill s', value: (r) => (r.impl === 'allVersions' ? (r.fillMs / 1000).toFixed(1) : '') },
  ],
};
