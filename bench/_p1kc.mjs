import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const { Store } = await import('@kura/store');
const { documents } = await import(process.cwd() + '/lib/documents.mjs');
const N = Number(process.argv[2] ?? 12000), C = Number(process.argv[3] ?? 32), R = 4;
const docs = documents(N * R, 1024, 1024);
const out = [];
for (let r = 0; r < R; r++) {
  const store = await Store.init(join(mkdtempSync(join(tmpdir(), 'p1k-')), 's'));
  let next = 0;
  const c0 = process.cpuUsage();
  const t = performance.now();
  await Promise.all(Array.from({ length: C }, async () => { for (let i = next++; i < N; i = next++) await store.put(docs[r * N + i]); }));
  const wall = performance.now() - t; const c = process.cpuUsage(c0);
  out.push(`${Math.round(N / (wall / 1000))}/s cpu ${((c.user + c.system) / N).toFixed(0)}us wall ${(wall * 1000 / N).toFixed(0)}us`);
  await store.close();
}
console.log(process.cwd().split('/')[2], out.slice(1).join(' | '));
