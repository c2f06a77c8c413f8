/**
 * Retrieval quality on collections nobody here wrote (issue 48, SEARCH-QUALITY.md): CISI (76
 * judged questions over 1,460 abstracts), and Cranfield and CACM where they are kept outside the
 * project (lib/collections.mjs), each scored in keyword, semantic and hybrid mode (nDCG@10,
 * recall@10, MRR@10, questions refused), beside a peer BM25 computed in the same run by a
 * well-kept library (bm25s with its Snowball stemmer and English stop words, PyPI:
 * peers/bm25s-rank.py), the plain SQLite FTS5 reference computed in the same run (the
 * question's words OR-ed, unicode61 and porter), and for CISI the figures SEARCH-QUALITY.md
 * gives (0.283 unicode61, 0.314 porter).
 *
 * Embedding a collection takes the local model a minute or so: each embedded store is kept
 * between runs in bench/.cache/<collection>-<source and model>/ (not committed) and opened again
 * by the build being measured (its migrations bring an older store's index up to date;
 * queries always run through the current code).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Store } from '@kura/store';
import { COLLECTIONS, meanScores, scoreRanking } from '../../lib/collections.mjs';

const CACHE = fileURLToPath(new URL('../../.cache/', import.meta.url));
const PEER = fileURLToPath(new URL('../../peers/bm25s-rank.py', import.meta.url));
const MODES = ['keyword', 'semantic', 'hybrid'];

/** CISI's references computed outside the project (SEARCH-QUALITY.md), nDCG@10. */
export const CISI_REFERENCES = { unicode61: 0.283, porter: 0.314 };
const TOKENIZERS = { unicode61: 'unicode61 remove_diacritics 2', porter: 'porter unicode61 remove_diacritics 2' };

export function peerRankings(docs, questions) {
  const job = JSON.stringify({ docs: docs.map((d) => ({ id: d.path, text: d.text })), questions: questions.map((q) => ({ id: String(q.id), text: q.text })), k: 10 });
  const started = performance.now();
  const r = spawnSync('python3', [PEER], { input: job, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error((r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n').at(-1));
  const out = JSON.parse(r.stdout);
  return { rankings: out.rankings, version: out.version, seconds: (performance.now() - started) / 1000 };
}

/**
 * The plain reference, in the same run: SQLite FTS5 over each document's text in one column,
 * the question's words (runs of letters and digits) OR-ed as quoted terms, ranked by bm25().
 */
function ftsReference(docs, questions, tokenize) {
  const Database = createRequire(import.meta.url)('better-sqlite3');
  const db = new Database(':memory:');
  try {
    db.exec(`CREATE VIRTUAL TABLE t USING fts5(path UNINDEXED, body, tokenize = '${tokenize}')`);
    const add = db.prepare('INSERT INTO t(path, body) VALUES (?, ?)');
    db.transaction(() => docs.forEach((d) => add.run(d.path, d.text)))();
    const top = db.prepare('SELECT path FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10');
    return questions.map((q) => {
      const words = q.text.match(/[\p{L}\p{N}]+/gu) ?? [];
      return scoreRanking(words.length ? top.all(words.map((w) => `"${w}"`).join(' OR ')).map((r) => r.path) : [], q.relevant);
    });
  } finally {
    db.close();
  }
}

/** The collection's store with every document embedded by `model` (kept between runs: see above). */
export async function keptStore(c, docs, model, log) {
  const named = createHash('sha256');
  if (c.source) named.update(readFileSync(c.source()));
  else for (const d of docs) named.update(`${d.path}\0${d.text}\0`);
  const id = named.update(model?.model ?? 'keyword').digest('hex').slice(0, 12);
  const dir = join(CACHE, `${c.name.toLowerCase().replace(/\W+/g, '-')}-${id}`);
  if (existsSync(join(dir, 'kura-store.json'))) {
    try {
      const store = await Store.open(dir);
      if (model) store.useEmbedder(model);
      return store;
    } catch (e) {
      log(`the kept ${c.name} store could not be opened (${e.message}): made again`);
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const store = await Store.init(dir);
  const enc = new TextEncoder();
  for (const d of docs) await store.put(enc.encode(d.text), { path: d.path, mediaType: 'text/plain' });
  if (model) store.useEmbedder(model);
  return store;
}

async function scoreCollection(c, model, log) {
  let loaded;
  try {
    if (c.prepare) {
      const started = performance.now();
      const made = await c.prepare({ log });
      if (made) log(`${c.name}: ${made} documents made in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
    loaded = c.load();
  } catch (e) {
    return [{ family: 'collections', group: c.name, impl: 'kura', size: 0, unavailable: e.message }];
  }
  const { docs, questions } = loaded;
  const rows = [];
  const row = (impl, mode, more) => ({ family: 'collections', group: c.name, impl, mode, size: 0, questions: questions.length, ...more });
  // A collection too large to embed here is scored by keyword alone (lib/collections.mjs).
  const embedder = c.modes && !c.modes.includes('semantic') ? undefined : model;
  const store = await keptStore(c, docs, embedder, log);
  try {
    if (embedder) {
      const started = performance.now();
      await store.indexStatus({ wait: true });
      const s = (performance.now() - started) / 1000;
      if (s > 1) log(`${c.name}: embedded ${docs.length} documents in ${s.toFixed(0)} s`);
    }
    for (const mode of embedder ? MODES : ['keyword']) {
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
      rows.push(row(`kura ${mode}`, mode, { refused, msPerQuery: ms, ...meanScores(scores) }));
    }
  } finally {
    await store.close();
  }
  try {
    const peer = peerRankings(docs, questions);
    const scores = questions.map((q) => scoreRanking(peer.rankings[String(q.id)] ?? [], q.relevant));
    rows.push(row(`bm25s ${peer.version} (peer)`, 'peer', { refused: 0, msPerQuery: (peer.seconds * 1000) / questions.length, ...meanScores(scores) }));
  } catch (e) {
    rows.push({ family: 'collections', group: c.name, impl: 'bm25s (peer)', mode: 'peer', size: 0, unavailable: `pip install bm25s PyStemmer (scripts/bootstrap.sh does): ${e.message}` });
  }
  for (const [name, tokenize] of Object.entries(TOKENIZERS)) {
    rows.push(row(`FTS5 ${name}, words OR-ed (reference, same run)`, `reference-${name}`, { reference: true, ...meanScores(ftsReference(docs, questions, tokenize)) }));
  }
  if (c.name === 'CISI') {
    for (const [name, ndcg] of Object.entries(CISI_REFERENCES)) rows.push(row(`FTS5 ${name}, words OR-ed (reference, SEARCH-QUALITY.md)`, `published-${name}`, { ndcg, reference: true }));
  }
  return rows;
}

export async function collections(model, log) {
  const rows = [];
  for (const c of COLLECTIONS) rows.push(...(await scoreCollection(c, model, log)));
  return rows;
}

const f3 = (x) => (x === undefined ? '' : x.toFixed(3));

export const collectionsFamily = {
  title: 'retrieval quality on collections nobody here wrote — CISI (../shared/collections/cisi), Cranfield and CACM (kept outside the project: lib/collections.mjs) — beside a peer BM25 and the plain FTS5 reference computed in the same run',
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
