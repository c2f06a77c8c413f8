import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
for (const [label, pragmas] of [['NORMAL ckpt1000', ['synchronous=NORMAL']], ['NORMAL ckpt10000', ['synchronous=NORMAL', 'wal_autocheckpoint=10000']], ['OFF', ['synchronous=OFF']], ['NORMAL nockpt', ['synchronous=NORMAL', 'wal_autocheckpoint=0']]]) {
  rmSync('/tmp/p5.db', { force: true }); rmSync('/tmp/p5.db-wal', { force: true }); rmSync('/tmp/p5.db-shm', { force: true });
  const db = new Database('/tmp/p5.db'); db.pragma('journal_mode=WAL'); pragmas.forEach((p) => db.pragma(p));
  db.exec('CREATE TABLE d (id INTEGER PRIMARY KEY, digest BLOB UNIQUE, m BLOB); CREATE TABLE c (key BLOB PRIMARY KEY, refs INT) WITHOUT ROWID');
  const ins = db.prepare('INSERT INTO d(digest, m) VALUES (?, ?)'); const up = db.prepare('INSERT INTO c VALUES (?, 1) ON CONFLICT(key) DO UPDATE SET refs = refs + 1');
  const tx = db.transaction((k) => { ins.run(k, k); up.run(k); });
  const N = 10000; const keys = Array.from({ length: N }, () => crypto.getRandomValues(new Uint8Array(32)));
  const t = performance.now(); for (const k of keys) tx(k);
  console.log(label, ((performance.now() - t) / N * 1000).toFixed(1), 'us/txn');
  db.close();
}
