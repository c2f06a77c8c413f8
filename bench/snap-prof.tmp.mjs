import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { Store } from '@kura/store';
import { textLike } from './lib/data.mjs';
const root = mkdtempSync('/tmp/snapprof-');
const dir = join(root, 'tree');
const files = 10000;
const corpus = textLike(files * 4096 + 4096, 31, 2048);
for (let i = 0; i < files; i++) {
  const sub = join(dir, `d${String(Math.floor(i / 100)).padStart(3, '0')}`);
  if (i % 100 === 0) mkdirSync(sub, { recursive: true });
  const size = 1024 + ((i * 2654435761) % 3072);
  writeFileSync(join(sub, `f${i}.txt`), corpus.subarray(i * 4096, i * 4096 + size));
}
const session = new Session(); session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 200 });
const self = new Map();
for (let r = 0; r < 4; r++) {
  const store = await Store.init(join(root, `s${r}`));
  if (r > 0) await session.post('Profiler.start');
  if (r > 0) globalThis.__sq = globalThis.__sq || new Map();
  const t = performance.now();
  await store.snapshot(dir);
  const ms = performance.now() - t;
  if (r > 0) {
    const { profile: p } = await session.post('Profiler.stop');
    const byId = new Map(p.nodes.map(n => [n.id, n]));
    for (let i = 0; i < p.samples.length; i++) { const n = byId.get(p.samples[i]); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) || 0) + p.timeDeltas[i] / 3); }
  }
  console.log('snapshot', ms.toFixed(0), 'ms', (files / ms * 1000).toFixed(0), 'files/s');
  await store.close();
}
for (const [k, [ms, n]] of [...globalThis.__sq].sort((a, b) => b[1][0] - a[1][0]).slice(0, 15)) console.log((ms / 3).toFixed(1).padStart(7), String(n / 3).padStart(7), k);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log((v / 1000).toFixed(1).padStart(7), k);
rmSync(root, { recursive: true, force: true });
