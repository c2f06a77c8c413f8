/**
 * The `search` suite: full-text queries over 10,000 text documents (about 2 KiB each, from a
 * shared vocabulary, so common words match thousands of documents and rare ones a few).
 * Queries run one at a time; each figure is queries/s with per-query latency percentiles.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '@kura/store';
import { textLike } from '../lib/data.mjs';
import { closedLoop } from '../lib/loop.mjs';
import { find, target } from '../lib/report.mjs';

const DOCS = 10_000;
const log = (msg) => process.stderr.write(`[search] ${msg}\n`);

/** Words of the corpus by how many documents contain them, to pick common and rare terms. */
function wordsByFrequency(texts) {
  const df = new Map();
  for (const t of texts) for (const w of new Set(t.match(/[a-z]{4,}/g) ?? [])) df.set(w, (df.get(w) ?? 0) + 1);
  return [...df].sort((a, b) => b[1] - a[1]);
}

export async function run({ full = false } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'kura-bench-search-'));
  try {
    const store = await Store.init(join(root, 's'));
    const corpus = textLike(DOCS * 2048 + 4096, 99, 4096);
    const decoder = new TextDecoder();
    const texts = [];
    const started = performance.now();
    for (let i = 0; i < DOCS; i++) {
      const bytes = corpus.subarray(i * 2048, i * 2048 + 2048);
      texts.push(decoder.decode(bytes));
      await store.put(bytes, { path: `docs/${i % 100}/doc-${i}.txt`, mediaType: 'text/plain', tags: [`t${i % 10}`] });
    }
    await store.search('warmup'); // the index is brought up to date before the first query
    log(`indexed ${DOCS} documents in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const ranked = wordsByFrequency(texts).filter(([w]) => w.length >= 5);
    const common = ranked[0][0];
    const mid = ranked[Math.floor(ranked.length / 4)][0];
    const rare = ranked.findLast(([, n]) => n >= 2)[0];
    const queries = [
      ['common word', common],
      ['mid word', mid],
      ['rare word', rare],
      ['two words', `${common} ${mid}`],
      ['phrase', `"${texts[7].match(/(?<![A-Za-z])[a-z]{4,} [a-z]{4,}(?![A-Za-z])/)[0]}"`],
      ['prefix', `${mid.slice(0, 3)}*`],
      ['word + tag filter', common, { tag: 't3' }],
    ];
    const rows = [];
    for (const [group, q, filter = {}] of queries) {
      const hits = (await store.search(q, { limit: 20, ...filter })).length;
      rows.push({
        ...(await closedLoop({ family: 'search', group, impl: 'kura', size: 0 }, { op: () => store.search(q, { limit: 20, ...filter }), count: full ? 2000 : 300, warmup: 20 })),
        query: q,
        hits,
      });
    }
    await store.close();
    return rows;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

export const families = {
  search: {
    title: `search over ${DOCS.toLocaleString('en')} documents (~2 KiB text each), 20 hits per query, one query at a time`,
    extra: [
      { header: 'query', value: (r) => r.query },
      { header: 'hits', value: (r) => r.hits },
    ],
  },
};

export function targets(rows) {
  return rows.map((r) => target(`search p99 < 10 ms: ${r.group}`, r.p99 === undefined ? undefined : 10 / r.p99, 1, {
    detail: `p99 ${r.p99.toFixed(2)} ms, p50 ${r.p50.toFixed(2)} ms`,
  }));
}
