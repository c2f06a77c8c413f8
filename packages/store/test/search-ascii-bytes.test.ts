/**
 * ASCII text reaches the search index as its bytes (doc-text.ts `indexBody`): FTS5 tokenizes a
 * blob as the UTF-8 it holds, so the index must be exactly the one strings would build. Checked
 * term by term, offsets included (fts5vocab's `instance` rows), against a reference FTS5 table
 * built here with the same tokenizer from the same text as strings — by put on this thread
 * (text read back) and by putFiles (heads from the ingest workers), ASCII, non-ASCII, a BOM and
 * text past the 1 MiB cap alike.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { INDEXED_TEXT_MAX } from '../src/search/text.js';
import { asciiScan, isAscii } from '../src/utf8.js';
import { spaceWords } from '../src/search/words.js';
import { newStore, tempDir } from './helpers/store.js';

describe('asciiScan (isAscii where the platform has none)', () => {
  it('is true exactly when no byte has its top bit set, at any alignment and length', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 9000 }), fc.nat(7), fc.nat(), (bytes, skip, at) => {
        const view = bytes.subarray(Math.min(skip, bytes.length));
        const ascii = view.map((b) => b & 0x7f);
        expect(asciiScan(ascii)).toBe(true);
        if (view.length > 0) ascii[at % view.length] = 0x80 | ascii[at % view.length]!; // one high byte anywhere
        expect(asciiScan(ascii)).toBe(view.length === 0);
        expect(asciiScan(view)).toBe(view.every((b) => b < 0x80));
        expect(isAscii(view)).toBe(asciiScan(view)); // (Node's, installed by the store)
      }),
      { numRuns: 300 },
    );
  });

  it('finds a high byte in the last word and in the tail', () => {
    const bytes = new Uint8Array(4099).fill(65);
    for (const at of [0, 1, 4095, 4096, 4097, 4098]) {
      const b = bytes.slice();
      b[at] = 0xc3;
      expect([at, asciiScan(b), asciiScan(b.subarray(1))]).toEqual([at, false, at === 0]);
    }
  });
});

const TOKENIZE = "porter unicode61 remove_diacritics 2";

/** Every token the `search` table's body column holds: term, entry, offset. */
function bodyInstances(db: Database.Database, schema: string): string[] {
  db.exec(`CREATE VIRTUAL TABLE temp.v_${schema} USING fts5vocab(${schema}, search, instance)`);
  return db
    .prepare(`SELECT term, doc, offset FROM temp.v_${schema} WHERE col = 'body' ORDER BY term, doc, offset`)
    .all()
    .map((r) => {
      const { term, doc, offset } = r as { term: string; doc: number; offset: number };
      return `${term} ${doc} ${offset}`;
    });
}

describe('the index of ASCII text taken as bytes', () => {
  it('holds every term at every offset a string would have put there', { timeout: 60_000 }, async () => {
    const enc = new TextEncoder();
    const texts: Record<string, Uint8Array> = {
      'plain.txt': enc.encode("Revenue grew 12% in Q3; the CEO's note (draft) said: don't panic!\r\nNext line\ttabbed."),
      'code.js': enc.encode('const snake_case = fooBar(1e9) // TODO: x-y_z v2.0.1 @user #tag'),
      'controls.txt': enc.encode('bell\x07 and \x1b[1mescape\x1b[0m sequences, form\x0cfeed'),
      'long.log': enc.encode(`${'alpha beta gamma delta\n'.repeat(Math.ceil(INDEXED_TEXT_MAX / 23) + 5)}omega`), // past the cap
      // Not ASCII: decoded to a string as before. Words cut apart (Thai, Japanese), a BOM
      // dropped, Latin-1 read as such — each indexed differently if taken as bytes.
      'accents.txt': enc.encode('Crème brûlée and the naïve café: résumé'),
      'thai.txt': enc.encode('ภาษาไทยง่ายนิดเดียว and 私は東京に住んでいます'),
      'bom.txt': enc.encode('\ufeffA file that starts with a byte order mark'),
      'latin1.txt': Uint8Array.from([...enc.encode('caf'), 0xe9, ...enc.encode('s au lait, na'), 0xef, ...enc.encode('ve')]),
    };
    const src = tempDir();
    const files = Object.entries(texts).map(([name, bytes]) => {
      writeFileSync(join(src, name), bytes);
      return name;
    });
    for (const how of ['put', 'putFiles'] as const) {
      const { store, dir } = await newStore();
      if (how === 'put') for (const name of files) await store.put(texts[name]!, { path: name, mediaType: 'text/plain' });
      else for await (const o of store.putFiles(files.map((name) => ({ path: join(src, name), meta: { path: name, mediaType: 'text/plain' } })), { workers: 2 })) expect(o.error).toBeUndefined();
      await store.indexStatus({ wait: true });
      await store.close();

      const db = new Database(join(dir, 'kura.db'), { readonly: true });
      db.exec(`ATTACH '${join(dir, 'search.db')}' AS idx`); // (the index's own file: decision 0081)
      const ref = new Database(':memory:');
      try {
        ref.exec(`CREATE VIRTUAL TABLE search USING fts5(path, tags, meta, body, content = '', contentless_delete = 1, tokenize = '${TOKENIZE}')`);
        const insert = ref.prepare('INSERT INTO search(rowid, path, tags, meta, body) VALUES (?, ?, ?, ?, ?)');
        const entries = db.prepare('SELECT id, path FROM entries WHERE path IS NOT NULL').all() as { id: number; path: string }[];
        expect(entries.map((e) => e.path).sort()).toEqual([...files].sort());
        for (const { id, path } of entries) {
          // The text as the index takes it: the first INDEXED_TEXT_MAX bytes, decoded (a BOM
          // dropped), unspaced words cut apart (words.ts; here, only cjk.txt's).
          // latin1.txt is Latin-1 (no UTF-8 character in it): read so (text.ts; Node's own latin1 here).
          const head = texts[path]!.subarray(0, INDEXED_TEXT_MAX);
          const decoded = path === 'latin1.txt' ? Buffer.from(head).toString('latin1') : new TextDecoder().decode(head);
          insert.run(id, path, '', '', spaceWords(decoded));
        }
        const got = bodyInstances(db, 'idx');
        expect(got.length).toBeGreaterThan(1000);
        expect(got.some((t) => t.startsWith('omega '))).toBe(false); // (past the cap)
        expect(got).toEqual(bodyInstances(ref, 'main'));
      } finally {
        db.close();
        ref.close();
      }
    }
  });
});
