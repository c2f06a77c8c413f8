import { Store } from '@kura/store';
import { mkdirSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { textLike } from '../../bench/lib/data.mjs';
const root = mkdtempSync(join(tmpdir(), 'snapprof-'));
const src = join(root, 'src');
const files = 10000; const corpus = textLike(files * 4096 + 4096, 31, 2048);
for (let i = 0; i < files; i++) { const sub = join(src, `d${String(Math.floor(i / 100)).padStart(3, '0')}`); if (i % 100 === 0) mkdirSync(sub, { recursive: true }); writeFileSync(join(sub, `f${i}.txt`), corpus.subarray(i * 4096, i * 4096 + 1024 + ((i * 2654435761) % 3072))); }
for (let r = 0; r < 3; r++) {
  const s = await Store.init(join(root, `s${r}`));
  const t = performance.now(); await s.snapshot(src); const ms = performance.now() - t;
  console.log(`run ${r}: ${(files / ms * 1000).toFixed(0)} files/s`);
  await s.close();
}
rmSync(root, { recursive: true, force: true });
