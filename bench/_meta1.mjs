import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const { Store } = await import('@kura/store');
const { documents } = await import(process.cwd() + '/lib/documents.mjs');
const D = 4000, N = Number(process.argv[3] ?? 6000);
const docs = documents(D, 1024, 21);
const store = await Store.init(join(mkdtempSync(join(tmpdir(), 'm1-')), 's'));
const digests = [];
for (let i = 0; i < D; i += 32) await Promise.all(docs.slice(i, i + 32).map(async (d, j) => (digests[i + j] = (await store.put(d, { path: `dir-${(i + j) % 100}/doc-${i + j}`, tags: [`t${(i + j) % 10}`], meta: { n: String(i + j) } })).digest)));
await store.search('drain');
const pick = (i) => Math.abs(i * 7919) % D;
for (let i = 0; i < 2000; i++) await store.setMeta(digests[pick(i)], { k: String(i) });
let s;
if (process.argv[2]) { const { Session } = await import('node:inspector/promises'); s = new Session(); s.connect(); await s.post('Profiler.enable'); await s.post('Profiler.start'); }
const c0 = process.cpuUsage(); const t = performance.now();
for (let i = 0; i < N; i++) await store.setMeta(digests[pick(i)], { k: String(i) });
const w = performance.now() - t; const c = process.cpuUsage(c0);
console.log(process.cwd().split('/')[2], Math.round(N / (w / 1000)), '/s', (w * 1000 / N).toFixed(1), 'us wall', ((c.user + c.system) / N).toFixed(1), 'us cpu', (c.system / N).toFixed(1), 'sys');
if (s) { const { profile } = await s.post('Profiler.stop'); (await import('node:fs')).mkdirSync(process.argv[2], { recursive: true }); (await import('node:fs')).writeFileSync(process.argv[2] + '/x.cpuprofile', JSON.stringify(profile)); }
process.exit(0);
