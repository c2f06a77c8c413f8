import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { Store } from '@kura/store';
import { textLike } from './lib/data.mjs';
const root = mkdtempSync('/tmp/grepprof-');
const FILES = 1000, SIZE = 65536;
const bytes = textLike(FILES * SIZE, 5, 4096);
const store = await Store.init(join(root, 's'));
for (let i = 0; i < FILES; i++) {
  const piece = Buffer.from(bytes.subarray(i * SIZE, (i + 1) * SIZE));
  const lines = piece.toString('latin1').split('\n').map((l, k) => (k % 64 === 0 ? `${l} harbour` : l)).join('\n');
  await store.put(Buffer.from(lines, 'latin1'), { path: `t/f${i}.txt`, mediaType: 'text/plain' });
}
await store.indexStatus({ wait: true });
for (const [p, ic] of [['harbour', false], ['HARBOUR', true], ['\\b(ab|cd)[a-z]{3,}\\d?\\b', false]]) {
  for (let r = 0; r < 3; r++) {
    const t = performance.now(); let n = 0;
    for await (const e of store.grep(p, { ignoreCase: ic })) if (e.type === 'match') n++;
    console.log(p, n, ((FILES * SIZE) / 1e6 / ((performance.now() - t) / 1000)).toFixed(0), 'MB/s');
  }
}
await store.close();
