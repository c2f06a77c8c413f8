import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const { Store } = await import('@kura/store');
const { documents } = await import(process.cwd() + '/lib/documents.mjs');
const N = Number(process.argv[2] ?? 12000), C = 32;
const docs = documents(N * 3, 1024, 1024);
const out = [];
for (let r = 0; r < 3; r++) {
  const store = await Store.init(join(mkdtempSync(join(tmpdir(), 'p1k-')), 's'));
  let next = 0;
  const t = performance.now();
  await Promise.all(Array.from({ length: C }, async () => { for (let i = next++; i < N; i = next++) await store.put(docs[r * N + i]); }));
  out.push(Math.round(N / ((performance.now() - t) / 1000)));
  await store.close();
}
console.log(process.cwd(), out.join(' '));
