/**
 * Retrieval quality on collections nobody here wrote (issue 48, SEARCH-QUALITY.md): CISI's
 * 1,460 abstracts and 76 judged questions, scored in keyword, semantic and hybrid mode
 * (nDCG@10, recall@10, MRR@10, questions refused), beside a peer BM25 computed in the same run
 * by a well-kept library (bm25s with its Snowball stemmer and English stop words, PyPI:
 * peers/bm25s-rank.py) and the references computed outside the project (plain SQLite FTS5,
 * the question's words OR-ed: 0.283 unicode61, 0.314 porter).
 *
 * Embedding 1,460 abstracts takes the local model about a minute on one core: the embedded
 * store is kept between runs in bench/.cache/cisi-<collection and model>/ (not committed) and opened again
 * by the build being measured (its migrations bring an older store's index up to date;
 * queries always run through the current code).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Store } from '@kura/store';
import { CISI_DIR, loadCisi, meanScores, scoreRanking } from '../../lib/cisi.mjs';

const CACHE = fileURLToPath(new URL('../../.cache/', import.meta.url));
const PEER = fileURLToPath(new URL('../../peers/bm25s-rank.py', import.meta.url));
const MODES = ['keyword', 'semantic', 'hybrid'];

/** References computed outside the project (SEARCH-QUALITY.md), nDCG@10. */
export const CISI_REFERENCES = { unicode61: 0.283, porter: 0.314 };

function peerRankings(docs, questions) {
  const job = JSON.stringify({ docs: docs.map((d) => ({ id: d.path, text: d.text })), questions: questions.map((q) => ({ id: String(q.id), text: q.text })), k: 10 });
  const started = performance.now();
  const r = spawnSync('python3', [PEER], { input: job, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error((r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n').at(-1));
  const out = JSON.parse(r.stdout);
  return { rankings: out.rankings, version: out.version, seconds: (performance.now() - started) / 1000 };
}

/** The CISI store with every abstract embedded by `model` (kept between runs: see above). */
async function cisiStore(docs, model, log) {
  const id = createHash('sha256').update(readFileSync(join(CISI_DIR, 'CISI.ALL'))).update(model?.model ?? 'keyword').digest('hex').slice(0, 12);
  const dir = join(CACHE, `cisi-${id}`);
  if (existsSync(join(dir, 'kura-store.json'))) {
    try {
      const store = await Store.open(dir);
      if (model) store.useEmbedder(model);
      return store;
    } catch (e) {
      log(`the kept CISI store could not be opened (${e.message}): made again`);
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const store = await Store.init(dir);
  const enc = new TextEncoder();
  for (const d of docs) await store.put(enc.encode(d.text), { path: d.path, mediaType: 'text/plain' });
  if (model) store.useEmbedder(model);
  return store;
}

export async function collections(model, log) {
  let cisi;
  try {
    cisi = loadCisi();
  } catch (e) {
    return [{ family: 'collections', group: 'CISI', impl: 'kura', size: 0, unavailable: e.message }];
  }
  const { docs, questions } = cisi;
  const rows = [];
  const store = await cisiStore(docs, model, log);
  try {
    if (model) {
      const started = performance.now();
      await store.indexStatus({ wait: true });
      const s = (performance.now() - started) / 1000;
      if (s > 1) log(`CISI: embedded ${docs.length} abstracts in ${s.toFixed(0)} s`);
    }
    for (const mode of model ? MODES : ['keyword']) {
      const scores = [];
      let refused = 0;
      const started = performance.now();
      for (const q of questions) {
        try {
          const hits = await store.search(q.text, { mode, limit: 10 });
          scores.push(scoreRanking(hits.map((h) => h.path), q.relevant));
        } catch {
          refused++;
          scores.push({ ndcg: 0, recall: 0, mrr: 0 });
        }
      }
      const ms = (performance.now() - started) / questions.length;
      rows.push({ family: 'collections', group: 'CISI', impl: `kura ${mode}`, mode, name: `CISI ${mode}`, size: 0, questions: questions.length, refused, msPerQuery: ms, ...meanScores(scores) });
    }
  } finally {
    await store.close();
  }
  try {
    const peer = peerRankings(docs, questions);
    const scores = questions.map((q) => scoreRanking(peer.rankings[String(q.id)] ?? [], q.relevant));
    rows.push({ family: 'collections', group: 'CISI', impl: `bm25s ${peer.version} (peer)`, mode: 'peer', name: 'CISI bm25s', size: 0, questions: questions.length, refused: 0, msPerQuery: (peer.seconds * 1000) / questions.length, ...meanScores(scores) });
  } catch (e) {
    rows.push({ family: 'collections', group: 'CISI', impl: 'bm25s (peer)', mode: 'peer', size: 0, unavailable: `pip install bm25s PyStemmer (scripts/bootstrap.sh does): ${e.message}` });
  }
  for (const [name, ndcg] of Object.entries(CISI_REFERENCES)) {
    rows.push({ family: 'collections', group: 'CISI', impl: `FTS5 ${name}, words OR-ed (reference, SEARCH-QUALITY.md)`, mode: `reference-${name}`, size: 0, questions: questions.length, ndcg, reference: true });
  }
  return rows;
}

const f3 = (x) => (x === undefined ? '' : x.toFixed(3));

export const collectionsFamily = {
  title: 'retrieval quality on CISI (1,460 abstracts, 76 judged questions; ../shared/collections/cisi), beside a peer BM25 run in the same run and the references computed outside the project',
  ratio: () => undefined,
  extra: [
    { header: 'questions', value: (r) => r.questions },
    { header: 'refused', value: (r) => r.refused ?? '' },
    { header: 'nDCG@10', value: (r) => f3(r.ndcg) },
    { header: 'recall@10', value: (r) => f3(r.recall) },
    { header: 'MRR@10', value: (r) => f3(r.mrr) },
    { header: 'ms/query', value: (r) => (r.msPerQuery === undefined ? '' : r.msPerQuery.toFixed(1)) },
  ],
};
