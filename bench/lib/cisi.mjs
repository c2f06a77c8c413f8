/**
 * CISI, the University of Glasgow's public test collection (../shared/collections/cisi,
 * SEARCH-QUALITY.md): 1,460 library-science abstracts, 112 questions, relevance judgments for
 * 76 of them. Read from its SMART files: each document is a file of its title, a blank line
 * and its abstract (as the references were computed); each question is its `.W` text.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const CISI_DIR = fileURLToPath(new URL('../../../shared/collections/cisi/', import.meta.url));

/** The SMART records of a file: `{ id, fields: { T, A, W, X, B } }`, fields' lines joined. */
function records(text) {
  const out = [];
  let rec;
  let field;
  for (const line of text.split(/\r?\n/)) {
    const m = /^\.([A-Z])(?:\s+(\d+))?\s*$/.exec(line);
    if (m && m[1] === 'I') {
      rec = { id: Number(m[2]), fields: {} };
      out.push(rec);
      field = undefined;
    } else if (m && rec) {
      field = m[1];
      rec.fields[field] = '';
    } else if (rec && field) rec.fields[field] += `${line}\n`;
  }
  return out;
}

const norm = (s) => (s ?? '').replace(/\s+/g, ' ').trim();

/** `{ docs: [{ id, path, text }], questions: [{ id, text, relevant: Set<path> }] }`, judged questions only unless `all`. */
export function loadCisi({ all = false, dir = CISI_DIR } = {}) {
  if (!existsSync(join(dir, 'CISI.ALL'))) throw new Error(`CISI is not in ${dir} (../shared/collections/cisi)`);
  const docs = records(readFileSync(join(dir, 'CISI.ALL'), 'latin1')).map((r) => ({
    id: r.id,
    path: `cisi/${String(r.id).padStart(4, '0')}.txt`,
    text: `${norm(r.fields.T)}\n\n${norm(r.fields.W)}\n`,
  }));
  const rel = new Map();
  for (const line of readFileSync(join(dir, 'CISI.REL'), 'latin1').split('\n')) {
    const [q, d] = line.trim().split(/\s+/).map(Number);
    if (!q || !d) continue;
    if (!rel.has(q)) rel.set(q, new Set());
    rel.get(q).add(`cisi/${String(d).padStart(4, '0')}.txt`);
  }
  const questions = records(readFileSync(join(dir, 'CISI.QRY'), 'latin1'))
    .map((r) => ({ id: r.id, text: norm(r.fields.W), relevant: rel.get(r.id) ?? new Set() }))
    .filter((q) => all || q.relevant.size > 0);
  return { docs, questions };
}

/** nDCG@k with binary relevance, recall@k and MRR@k of one ranking (paths, best first). */
export function scoreRanking(ranked, relevant, k = 10) {
  let dcg = 0;
  let found = 0;
  let rr = 0;
  ranked.slice(0, k).forEach((p, i) => {
    if (!relevant.has(p)) return;
    dcg += 1 / Math.log2(i + 2);
    found++;
    if (!rr) rr = 1 / (i + 1);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(k, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
  return { ndcg: ideal ? dcg / ideal : 0, recall: relevant.size ? found / relevant.size : 0, mrr: rr };
}

/** The mean of each measure over questions. */
export function meanScores(scores) {
  const n = scores.length || 1;
  return { ndcg: scores.reduce((a, s) => a + s.ndcg, 0) / n, recall: scores.reduce((a, s) => a + s.recall, 0) / n, mrr: scores.reduce((a, s) => a + s.mrr, 0) / n };
}
