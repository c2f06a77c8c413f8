import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const { Store } = await import('@kura/store');
const { documents } = await import(process.cwd() + '/lib/documents.mjs');
const N = 20000, C = 32;
const docs = documents(N, 1024, 1024);
const store = await Store.init(join(mkdtempSync(join(tmpdir(), 'p1k-')), 's'));
let next = 0;
globalThis.__sqlOn = true;
const t = performance.now();
await Promise.all(Array.from({ length: C }, async () => { for (let i = next++; i < N; i = next++) await store.put(docs[i]); }));
console.log(process.cwd(), Math.round(N / ((performance.now() - t) / 1000)));
const T = globalThis.__sqlT;
let tot = 0;
for (const [k, [ns, n]] of [...T].sort((a, b) => b[1][0] - a[1][0]).slice(0, 25)) { tot += ns; console.log((ns / N / 1000).toFixed(2).padStart(7), 'us/put', String(n).padStart(6), k.slice(0, 110).replace(/\s+/g, ' ')); }
console.log('total', (tot / N / 1000).toFixed(1));
process.exit(0);
