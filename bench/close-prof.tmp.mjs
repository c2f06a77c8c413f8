import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Store } from '@kura/store';
import { textLike } from './lib/data.mjs';
const MiB = 1 << 20;
const root = mkdtempSync('/tmp/closeprof-');
const files = [];
for (let i = 0; i < 32; i++) { const p = join(root, `f${i}.txt`); writeFileSync(p, textLike(4 * MiB, 1000 + i, 256 + (i % 7) * 64)); files.push(p); }
for (let r = 0; r < 3; r++) {
  const store = await Store.init(join(root, `s${r}`));
  let t = performance.now();
  for await (const o of store.putFiles(files.map((path) => ({ path })))) if (o.error) throw o.error;
  const put = performance.now() - t;
  globalThis.__prof = {};
  if (process.env.HEADS) { const { createHash } = await import('node:crypto'); const { readFileSync } = await import('node:fs'); globalThis.__heads = new Map(files.map((p) => { const b = readFileSync(p); return [createHash('sha256').update(b).digest('hex'), b.subarray(0, 1 << 20)]; })); }
  t = performance.now();
  await store.close();
  console.log(`put ${put.toFixed(0)} close ${(performance.now() - t).toFixed(0)}`, Object.entries(globalThis.__prof).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(' '));
}
rmSync(root, { recursive: true, force: true });
