/**
 * Labelled collections nobody here wrote, in the SMART format of the classic test collections
 * (SEARCH-QUALITY.md): each document a file of its title, a blank line and its text (as the
 * references were computed); each question its `.W` text; judged questions only unless `all`.
 *
 * - CISI (../shared/collections/cisi): 1,460 library-science abstracts, 112 questions, 76 judged.
 * - Cranfield and CACM, kept outside the project like the evaluators' copies: in
 *   $KURA_COLLECTIONS (default: `collections/` beside the project) as `cran/` (`cran.all.1400`,
 *   `cran.qry`, `cranqrel`: 1,400 aeronautics abstracts, 225 questions) and `cacm/`
 *   (`cacm.all`, `query.text`, `qrels.text`: 3,204 CACM titles and abstracts, 52 judged of 64),
 *   the files as the University of Glasgow's IR group distributes them. Absent: not scored.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { loadManPages, renderManPages } from './man-pages.mjs';

export const CISI_DIR = fileURLToPath(new URL('../../../shared/collections/cisi/', import.meta.url));
export const OUTSIDE_DIR = process.env.KURA_COLLECTIONS ?? fileURLToPath(new URL('../../../collections/', import.meta.url));

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

const docPath = (prefix, id) => `${prefix}/${String(id).padStart(4, '0')}.txt`;
const smartDocs = (file, prefix) => records(readFileSync(file, 'latin1')).map((r) => ({ id: r.id, path: docPath(prefix, r.id), text: `${norm(r.fields.T)}\n\n${norm(r.fields.W)}\n` }));

/** Judgments `question id -> Set<path>` from lines of `question document [grade ...]`, kept by `keep(grade)`. */
function judgments(file, prefix, keep = () => true) {
  const rel = new Map();
  for (const line of readFileSync(file, 'latin1').split('\n')) {
    const [q, d, grade] = line.trim().split(/\s+/).map(Number);
    if (!q || !d || !keep(grade)) continue;
    if (!rel.has(q)) rel.set(q, new Set());
    rel.get(q).add(docPath(prefix, d));
  }
  return rel;
}

function needFiles(dir, files, name) {
  for (const f of files) if (!existsSync(join(dir, f))) throw new Error(`${name} is not in ${dir} (${files.join(', ')})`);
}

/** `{ docs: [{ id, path, text }], questions: [{ id, text, relevant: Set<path> }] }`, judged questions only unless `all`. */
export function loadCisi({ all = false, dir = CISI_DIR } = {}) {
  needFiles(dir, ['CISI.ALL', 'CISI.QRY', 'CISI.REL'], 'CISI');
  const docs = smartDocs(join(dir, 'CISI.ALL'), 'cisi');
  const rel = judgments(join(dir, 'CISI.REL'), 'cisi');
  const questions = records(readFileSync(join(dir, 'CISI.QRY'), 'latin1'))
    .map((r) => ({ id: r.id, text: norm(r.fields.W), relevant: rel.get(r.id) ?? new Set() }))
    .filter((q) => all || q.relevant.size > 0);
  return { docs, questions };
}

/**
 * Cranfield. Its judgments number the questions by their place in `cran.qry` (1-225), not by
 * their `.I` (001, 002, 004, ...), and grade them 1 (a complete answer) to 4 (background
 * interest) or -1 (no interest): grades 1-4 count as relevant (binary, as for the others).
 */
export function loadCranfield({ dir = join(OUTSIDE_DIR, 'cran') } = {}) {
  needFiles(dir, ['cran.all.1400', 'cran.qry', 'cranqrel'], 'Cranfield');
  const docs = smartDocs(join(dir, 'cran.all.1400'), 'cran');
  const rel = judgments(join(dir, 'cranqrel'), 'cran', (grade) => grade >= 1 && grade <= 4);
  const questions = records(readFileSync(join(dir, 'cran.qry'), 'latin1'))
    .map((r, i) => ({ id: i + 1, text: norm(r.fields.W), relevant: rel.get(i + 1) ?? new Set() }))
    .filter((q) => q.relevant.size > 0);
  return { docs, questions };
}

/** CACM: 3,204 documents (many a title alone), 64 questions of which 52 are judged. */
export function loadCacm({ dir = join(OUTSIDE_DIR, 'cacm') } = {}) {
  needFiles(dir, ['cacm.all', 'query.text', 'qrels.text'], 'CACM');
  const docs = smartDocs(join(dir, 'cacm.all'), 'cacm');
  const rel = judgments(join(dir, 'qrels.text'), 'cacm');
  const questions = records(readFileSync(join(dir, 'query.text'), 'latin1'))
    .map((r) => ({ id: r.id, text: norm(r.fields.W), relevant: rel.get(r.id) ?? new Set() }))
    .filter((q) => q.relevant.size > 0);
  return { docs, questions };
}

/** The collections scored, with the file whose bytes name a kept store of each (its cache key). */
export const COLLECTIONS = [
  { name: 'CISI', load: loadCisi, source: () => join(CISI_DIR, 'CISI.ALL') },
  { name: 'Cranfield', load: loadCranfield, source: () => join(OUTSIDE_DIR, 'cran', 'cran.all.1400') },
  { name: 'CACM', load: loadCacm, source: () => join(OUTSIDE_DIR, 'cacm', 'cacm.all') },
  // Its documents are rendered on this machine (lib/man-pages.mjs): the kept store is named by
  // them. Keyword only: its 40 MB of text are ~35,000 passages for the local model, half an
  // hour of embedding on a quiet machine of this kind.
  { name: 'man pages', load: loadManPages, prepare: renderManPages, modes: ['keyword'] },
];

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
