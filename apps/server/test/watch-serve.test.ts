/**
 * `kura serve --watch DIR` (decision 0059): the server keeps a folder in its store — what is
 * there at start, then each change — readable and searchable over HTTP within a bound; a
 * folder deleted on disk leaves the listing with its versions kept.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { call, closeAll, startServer } from './helpers/server.js';

afterAll(closeAll);
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function eventually(check: () => Promise<void>, ms = 10_000): Promise<void> {
  const start = Date.now();
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() - start > ms) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

describe('serve --watch', () => {
  it('stores the folder, then its changes, readable and searchable over HTTP', { timeout: 60_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-serve-watch-'));
    dirs.push(root);
    const notes = join(root, 'notes');
    mkdirSync(notes);
    writeFileSync(join(notes, 'first.md'), 'an albatross over the harbour\n');
    const s = await startServer({ watch: [notes] });
    await eventually(async () => expect((await call(s.url, 'GET', '/v1/paths/notes/first.md')).body.toString()).toContain('albatross'));
    writeFileSync(join(notes, 'second.md'), 'the ferry leaves at nine\n');
    await eventually(async () => {
      const hits = (await call(s.url, 'GET', '/v1/search?q=ferry&mode=keyword')).json.hits;
      expect(hits.map((h: { path: string }) => h.path)).toEqual(['notes/second.md']);
    });
    rmSync(join(notes, 'first.md'));
    await eventually(async () => expect((await call(s.url, 'GET', '/v1/paths/notes/first.md')).status).toBe(404));
    expect((await call(s.url, 'GET', '/v1/paths/notes/first.md?version=1')).body.toString()).toContain('albatross');
  });

  it('refuses two folders of the same name', () => {
    expect(() => parseConfig({ watch: ['/a/notes', '/b/notes'] })).toThrow(/same name/);
  });
});
