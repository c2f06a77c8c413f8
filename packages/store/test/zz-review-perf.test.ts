import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Store as NewStore } from '../src/node/index.js';
import { Store as OldStore } from './zz-oldsrc/node/index.js';

const text = (t: string) => new TextEncoder().encode(t);
for (const [name, S] of [['new', NewStore], ['old', OldStore]] as const) {
  describe(name, () => {
    it('a query the spans match but no version does', async () => {
      const store = await (S as typeof NewStore).init(join(mkdtempSync(join(tmpdir(), 'zzperf-')), 's'));
      const P = 2000, V = 4;
      const t0 = performance.now();
      for (let v = 0; v < V; v++) for (let i = 0; i < P; i++) await store.put(text(`alpha line ${i} v${v}\nbeta line w${v}x${i}\n`), { path: `p/${i}.txt` });
      const t1 = performance.now();
      await store.search('zzz', { allVersions: true }); // sync
      const t2 = performance.now();
      const time = async (q: string) => { const a = performance.now(); const r = await store.search(q, { allVersions: true, limit: 10 }); return [q, r.length, Math.round(performance.now() - a)]; };
      const rows = [];
      for (let k = 0; k < 2; k++) for (const q of ['alpha', '"alpha beta"', 'alpha -beta', 'alpha NOT line', '"line beta"', 'w3x1999']) rows.push(await time(q));
      const after = [];
      for (let k = 0; k < 3; k++) { await store.put(text(`gamma ${k}`), { path: `p/${k}.txt` }); const a = performance.now(); await store.search('w3x1999', { allVersions: true }); after.push(Math.round(performance.now() - a)); }
      console.log(name, 'after one put', JSON.stringify(after));
      console.log(name, 'puts', Math.round(t1 - t0), 'sync', Math.round(t2 - t1), JSON.stringify(rows));
      await store.close();
    }, 600_000);
  });
}
