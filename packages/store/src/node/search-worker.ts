/**
 * The keyword index's writer thread (node/search-file.ts, decision 0081): its own connection to
 * `search.db`, which takes the rows the store's thread read and FTS5 tokenizes them here, beside
 * the store's ingest instead of after it. Each message is one call, answered in order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { IndexStatements, type IndexRow } from '../search/index-writer.js';
import { openSqlite } from './sqlite.js';

export type SearchCall =
  | { id: number; op: 'write'; rows: IndexRow[] }
  | { id: number; op: 'merge'; pages: number }
  | { id: number; op: 'vacuum'; pages: number }
  | { id: number; op: 'clear' }
  | { id: number; op: 'own'; owner: string; clear: boolean }
  | { id: number; op: 'close' };

export type SearchAnswer = { id: number; done: unknown } | { id: number; failed: { code?: string; message: string } };

const { path } = workerData as { path: string };
const db = openSqlite(path);
// A row is written here before the catalog forgets that it was to be (its queue row is deleted
// once this answers): a commit lost to a power cut would leave it forgotten.
db.setDurability('full');
const st = new IndexStatements(db, true);

function call(m: SearchCall): unknown {
  switch (m.op) {
    case 'write':
      return st.write(m.rows);
    case 'merge':
      return st.merge(m.pages);
    case 'vacuum':
      return st.vacuum(m.pages);
    case 'clear':
      return st.clear();
    case 'own':
      return st.own(m.owner, m.clear);
    case 'close':
      db.close();
      return undefined;
  }
}

parentPort!.on('message', (m: SearchCall) => {
  let answer: SearchAnswer;
  try {
    answer = { id: m.id, done: call(m) };
  } catch (e) {
    const err = e as { code?: unknown; message?: unknown };
    answer = { id: m.id, failed: { code: typeof err?.code === 'string' ? err.code : undefined, message: String(err?.message ?? e) } };
  }
  parentPort!.postMessage(answer);
  if (m.op === 'close') parentPort!.close();
});
