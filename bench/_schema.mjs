import { mkdtempSync } from 'node:fs'; import { tmpdir } from 'node:os'; import { join } from 'node:path';
const { Store } = await import('@kura/store');
const dir = join(mkdtempSync(join(tmpdir(), 'sch-')), 's');
const s = await Store.init(dir); await s.put(new TextEncoder().encode('hello')); await s.close();
const { createRequire } = await import('node:module');
const req = createRequire(process.cwd() + '/../packages/store/package.json');
const D = req('better-sqlite3'); const db = new D(join(dir, 'kura.db'), { readonly: true });
for (const r of db.prepare("select type,name,sql from sqlite_master where name not like 'search_%' order by name").all()) console.log(r.sql);
