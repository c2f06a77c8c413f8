/**
 * docs/FORMAT.md is the authority on what Kura writes: this test holds its schema and its
 * store layout to what the code creates. Every ```sql block of the document is run in an empty
 * database; each table (and index) it makes must exist in a new store with the same columns
 * (name, type, NOT NULL, primary key), and the store must have no table the document lacks.
 * A store directory must hold only the files §5 names.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../src/catalog/schema.js';
import { newStore } from './helpers/store.js';

const FORMAT = readFileSync(new URL('../../../docs/FORMAT.md', import.meta.url), 'utf8');

/** The statements of every ```sql block, in document order. */
function documentedSql(): string {
  return [...FORMAT.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]).join('\n');
}

type Column = { name: string; type: string; notnull: number; pk: number };

/** Tables and indexes of a database, with each table's columns; FTS5's own tables left out. */
function shape(db: Database.Database) {
  const objects = db
    .prepare("SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND type IN ('table', 'index') ORDER BY name")
    .all() as { type: string; name: string; tbl_name: string }[];
  const fts = new Set(objects.filter((o) => o.type === 'table').map((o) => o.name).filter((n) => objects.some((x) => x.name === `${n}_config`) && objects.some((x) => x.name === `${n}_data`)));
  // (By FTS5's shadow-table names alone: `history_paths` is a table of Kura's beside the FTS5 table `history`.)
  const shadows = ['data', 'idx', 'content', 'docsize', 'config'];
  const own = objects.filter((o) => ![...fts].some((f) => shadows.some((x) => o.name === `${f}_${x}`)));
  const tables: Record<string, Column[]> = {};
  for (const o of own.filter((x) => x.type === 'table')) {
    tables[o.name] = (db.prepare(`PRAGMA table_info(${JSON.stringify(o.name)})`).all() as Column[]).map(({ name, type, notnull, pk }) => ({ name, type, notnull, pk }));
  }
  // Each index as `table(columns)`, the way the document's prose names them.
  const indexes = own
    .filter((x) => x.type === 'index' && !x.name.startsWith('sqlite_autoindex'))
    .map((x) => `${x.tbl_name}(${(db.prepare(`PRAGMA index_info(${JSON.stringify(x.name)})`).all() as { name: string }[]).map((c) => c.name).join(', ')})`);
  return { tables, indexes };
}

describe('docs/FORMAT.md', () => {
  it(`states the schema a new store has (version ${SCHEMA_VERSION})`, async () => {
    expect(FORMAT).toContain(`## 7. SQLite schema (schema version ${SCHEMA_VERSION})`);
    const doc = new Database(':memory:');
    doc.exec(documentedSql());
    const documented = shape(doc);
    doc.close();

    const { store, dir } = await newStore();
    await store.close();
    const real = new Database(join(dir, 'kura.db'), { readonly: true });
    const created = shape(real);
    expect(real.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    real.close();
    // The keyword index's file (search.db, decision 0081): its tables are the document's too.
    const index = new Database(join(dir, 'search.db'), { readonly: true });
    const indexShape = shape(index);
    index.close();
    expect(Object.keys(indexShape.tables).sort()).toEqual(['index_of', 'search']);
    Object.assign(created.tables, indexShape.tables);

    expect(Object.keys(created.tables).sort()).toEqual(Object.keys(documented.tables).sort());
    for (const [table, columns] of Object.entries(created.tables)) expect({ table, columns }).toEqual({ table, columns: documented.tables[table] });
    // Every index the code makes is created by the document's SQL or named in its prose.
    for (const index of created.indexes) {
      expect(documented.indexes.includes(index) || FORMAT.includes(`\`${index}`), `index ${index} is not in FORMAT.md`).toBe(true);
    }
  });

  it('names every file a store directory holds (§5)', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 1024 } });
    await store.put(new TextEncoder().encode('x'.repeat(5000)), { path: 'a' });
    await store.close();
    const files: string[] = [];
    const walk = (d: string) => {
      for (const name of readdirSync(d)) {
        const p = join(d, name);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(relative(dir, p));
      }
    };
    walk(dir);
    const documented = [
      /^kura\.db(-wal|-shm)?$/,
      /^search\.db(-wal|-shm)?$/,
      /^writers\/[0-9a-f]{16}\.(lock|waiting)$/,
      /^packs\/([0-9a-f]{2})\/\1[0-9a-f]{30}\.pack$/,
      /^kura-store\.json$/,
      /^log\/[0-9]{20}$/,
      /^checkpoints\/[0-9]{20}$/,
    ];
    for (const f of files) expect(documented.some((re) => re.test(f)), `${f} is not in FORMAT.md §5`).toBe(true);
    for (const name of ['kura.db', 'search.db', 'writers/<id>.lock', 'packs/<aa>/<name>.pack', 'kura-store.json', 'log/<20 digits>', 'checkpoints/<20 digits>']) expect(FORMAT).toContain(name);
    expect(files).toContain('kura-store.json');
    expect(files.some((f) => f.startsWith('log/'))).toBe(true);
  });
});
