import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Store } from '@kura/store';
import { Session } from 'node:inspector/promises';
const session = new Session(); session.connect(); await session.post('Profiler.enable'); await session.post('Profiler.setSamplingInterval', { interval: 200 }); const self = new Map();
import { textLike } from './lib/data.mjs';
const root = mkdtempSync('/tmp/smallprof-');
const dir = join(root, 'tree');
const files = 10000; const paths = [];
const corpus = textLike(files * 4096 + 4096, 31, 2048);
for (let i = 0; i < files; i++) {
  const sub = join(dir, `d${String(Math.floor(i / 100)).padStart(3, '0')}`);
  if (i % 100 === 0) mkdirSync(sub, { recursive: true });
  const size = 1024 + ((i * 2654435761) % 3072);
  writeFileSync(join(sub, `f${i}.txt`), corpus.subarray(i * 4096, i * 4096 + size)); paths.push(join(sub, `f${i}.txt`));
}
for (let r = 0; r < 3; r++) {
  const store = await Store.init(join(root, `s${r}`));
  let t = performance.now();
  for await (const o of store.putFiles(paths.map((p) => ({ path: p, meta: { path: p.slice(dir.length + 1) } })))) if (o.error) throw o.error;
  const put = performance.now() - t;
  globalThis.__prof = {}; globalThis.__sq = globalThis.__sq || new Map();
  await session.post('Profiler.start');
  t = performance.now();
  await store.close();
  { const { profile: p } = await session.post('Profiler.stop'); const byId = new Map(p.nodes.map(n => [n.id, n])); for (let i = 0; i < p.samples.length; i++) { const n = byId.get(p.samples[i]); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) || 0) + p.timeDeltas[i] / 3); } }
  console.log(`put ${put.toFixed(0)} close ${(performance.now() - t).toFixed(0)}`, Object.entries(globalThis.__prof).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(' '));
}
for (const [k, [ms, n]] of [...globalThis.__sq].sort((a, b) => b[1][0] - a[1][0]).slice(0, 14)) console.log((ms / 3).toFixed(1).padStart(7), String(Math.round(n / 3)).padStart(7), k);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log((v / 1000).toFixed(1).padStart(7), k);
rmSync(root, { recursive: true, force: true });
