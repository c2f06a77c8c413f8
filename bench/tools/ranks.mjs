/**
 * One labelled collection's questions one by one, to see where ranking goes wrong: for each
 * question, the rank of its first relevant document in Kura's answer (and in the peer BM25's,
 * with --peer), and Kura's top three. The search suite gives the means; this gives the cases.
 *
 * Usage (from the tree's root): node bench/tools/ranks.mjs NAME [--mode keyword|semantic|hybrid]
 *   [--kind KIND] [--peer] [--worst N]
 * NAME a collection of lib/collections.mjs ("CISI", "man pages", ...); the kept store of the
 * search suite is used (made when absent; semantic and hybrid embed it first, once).
 */
import { parseArgs } from 'node:util';
import { loadMiniLmOnWorker } from '@kura/store';
import { COLLECTIONS, meanScores, scoreRanking } from '../lib/collections.mjs';
import { keptStore, peerRankings } from '../suites/search/collections.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { mode: { type: 'string', default: 'keyword' }, kind: { type: 'string' }, peer: { type: 'boolean', default: false }, worst: { type: 'string' } },
});
const c = COLLECTIONS.find((x) => x.name.toLowerCase() === (positionals[0] ?? '').toLowerCase());
if (!c) {
  console.error(`usage: ranks.mjs NAME [--mode M] [--kind K] [--peer] [--worst N]; NAME one of ${COLLECTIONS.map((x) => JSON.stringify(x.name)).join(', ')}`);
  process.exit(2);
}
if (c.prepare) await c.prepare({ log: console.error });
const { docs, questions: all } = c.load();
const questions = values.kind ? all.filter((q) => q.kind === values.kind) : all;
const model = values.mode === 'keyword' ? undefined : await loadMiniLmOnWorker();
const store = await keptStore(c, docs, model, console.error);
const peer = values.peer ? peerRankings(docs, questions).rankings : undefined;
const firstRank = (ranked, relevant) => {
  const i = ranked.findIndex((p) => relevant.has(p));
  return i < 0 ? '-' : String(i + 1);
};
const rows = [];
try {
  await store.indexStatus({ wait: true });
  for (const q of questions) {
    const ranked = (await store.search(q.text, { mode: values.mode, limit: 10 })).map((h) => h.path);
    rows.push({ q, ranked, score: scoreRanking(ranked, q.relevant), peer: peer && (peer[String(q.id)] ?? []) });
  }
} finally {
  await store.close();
  await model?.close();
}
const shown = values.worst ? [...rows].sort((a, b) => a.score.ndcg - b.score.ndcg).slice(0, Number(values.worst)) : rows;
for (const r of shown) {
  const ranks = `kura ${firstRank(r.ranked, r.q.relevant).padStart(2)}${r.peer ? `  peer ${firstRank(r.peer, r.q.relevant).padStart(2)}` : ''}`;
  console.log(`${ranks}  ${String(r.q.id).padStart(3)} ${r.q.kind ? `[${r.q.kind}] ` : ''}${r.q.text.slice(0, 70)}`);
  const want = [...r.q.relevant];
  console.log(`         want ${want.slice(0, 4).join(' ')}${want.length > 4 ? ` (+${want.length - 4})` : ''}; got ${r.ranked.slice(0, 3).join(' ')}`);
}
const m = meanScores(rows.map((r) => r.score));
const p = peer && meanScores(rows.map((r) => scoreRanking(r.peer, r.q.relevant)));
console.log(`\n${rows.length} questions, ${values.mode}: nDCG@10 ${m.ndcg.toFixed(3)}, MRR@10 ${m.mrr.toFixed(3)}, recall@10 ${m.recall.toFixed(3)}${p ? `; peer nDCG@10 ${p.ndcg.toFixed(3)}, MRR@10 ${p.mrr.toFixed(3)}` : ''}`);
