import Database from 'better-sqlite3';
import { textLike } from './lib/data.mjs';
const paths = 10000, V = 10;
const corpus = textLike(paths * 2048 + 4096, 31, 4096);
const dec = new TextDecoder();
const db = new Database('/tmp/histexp.db');
db.pragma('journal_mode = WAL');
const tok = "tokenize = 'porter unicode61 remove_diacritics 2'";
db.exec(`DROP TABLE IF EXISTS search; DROP TABLE IF EXISTS history; DROP TABLE IF EXISTS history2;
CREATE VIRTUAL TABLE search USING fts5(path, tags, meta, body, content = '', contentless_delete = 1, ${tok});
CREATE VIRTUAL TABLE history USING fts5(body, content = '', contentless_delete = 1, ${tok});
CREATE VIRTUAL TABLE history2 USING fts5(body, content = '', columnsize = 0, ${tok});`);
const t0 = performance.now();
const insS = db.prepare('INSERT INTO search(rowid, path, tags, meta, body) VALUES (?, ?, ?, ?, ?)');
const insH = db.prepare('INSERT INTO history(rowid, body) VALUES (?, ?)');
const insH2 = db.prepare('INSERT INTO history2(rowid, body) VALUES (?, ?)');
db.transaction(() => {
  for (let v = 1; v <= V; v++) for (let i = 0; i < paths; i++) {
    const base = dec.decode(corpus.subarray(i * 2048, i * 2048 + 2048));
    const text = `${base}\nrevision r${v}x${i % 97} of ${v === 1 ? 'the first draft' : 'a later draft'}\n`;
    const id = v * paths + i;
    if (v === V) insS.run(id, `docs ${i} txt`, '', '', text); else insH.run(id, text);
    insH2.run(id, text);
  }
})();
console.log('built in', ((performance.now() - t0) / 1000).toFixed(1), 's');
for (const t of ['search', 'history', 'history2']) console.log(t, db.prepare(`SELECT sum(length(block)) n FROM ${t}_data`).get().n);
const latest = db.prepare("SELECT rowid, bm25(search, 10.0, 5.0, 2.0, 1.0) s FROM search WHERE search MATCH ? ORDER BY s LIMIT 20");
const shown = db.prepare("SELECT rowid, bm25(search, 0.0, 0.0, 0.0, 1.0) s FROM search WHERE search MATCH ? ORDER BY s, rowid LIMIT 80");
const older = db.prepare("SELECT rowid, bm25(history) s FROM history WHERE history MATCH ? ORDER BY s, rowid LIMIT 80");
const all2 = db.prepare("SELECT rowid, bm25(history2) s FROM history2 WHERE history2 MATCH ? ORDER BY s, rowid LIMIT 80");
const q = (w) => w.split(' ').map((x) => `"${x}"`).join(' OR ');
const time = (f) => { const t = performance.now(); f(); return performance.now() - t; };
for (const w of ['draft', 'first draft', 'r3x5', 'revision later']) {
  const m = q(w); const r = { latest: [], current: [], new: [] };
  for (let i = 0; i < 15; i++) {
    r.latest.push(time(() => latest.all(m)));
    r.current.push(time(() => { shown.all(`body : (${m})`); older.all(m); }));
    r.new.push(time(() => all2.all(m)));
  }
  const med = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)].toFixed(1);
  console.log(w.padEnd(16), 'latest', med(r.latest), 'current all', med(r.current), 'new all', med(r.new));
}
