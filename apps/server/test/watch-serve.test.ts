/**
 * `kura serve --watch DIR` (decision 0059): the server keeps a folder in its store — what is
 * there at start, then each change — readable and searchable over HTTP within a bound; a
 * folder deleted on disk leaves the listing with its versions kept.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { call, closeAll, startServer } from './helpers/server.js';

import { eventually } from '../../../packages/store/test/helpers/eventually.js';

afterAll(closeAll);
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));


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

  it('refuses puts into a watched prefix over HTTP and MCP (the next catch-up deleted them); elsewhere they go', { timeout: 60_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-serve-watch-guard-'));
    dirs.push(root);
    const notes = join(root, 'mcpnotes');
    mkdirSync(notes);
    writeFileSync(join(notes, 'kept.md'), 'on disk\n');
    const s = await startServer({ watch: [notes] });
    await eventually(async () => expect((await call(s.url, 'GET', '/v1/paths/mcpnotes/kept.md')).status).toBe(200));
    const into = await call(s.url, 'POST', '/v1/documents?path=mcpnotes/todo.md', { body: 'buy bread', headers: { 'content-type': 'text/markdown' } });
    expect(into.status).toBe(400);
    expect(into.json.error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/mcpnotes\/todo\.md is under mcpnotes\/, which this server keeps from the folder .*mcpnotes/) });
    expect((await call(s.url, 'POST', '/v1/documents?path=other/todo.md', { body: 'buy bread' })).status).toBe(201);
    const client = new Client({ name: 'kura-test-watch', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', s.url)));
    try {
      const r = (await client.callTool({ name: 'kura_add_text', arguments: { path: 'mcpnotes/assistant-todo.md', text: 'call the dentist' } })) as { isError?: boolean; content: { text: string }[] };
      expect(r.isError).toBe(true);
      expect(r.content[0]!.text).toMatch(/INVALID_INPUT.*save it as a file in that folder/s);
      const ok = (await client.callTool({ name: 'kura_add_text', arguments: { path: 'assistant/todo.md', text: 'call the dentist' } })) as { isError?: boolean };
      expect(ok.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    // The watch itself still stores the folder's changes.
    writeFileSync(join(notes, 'new.md'), 'written on disk\n');
    await eventually(async () => expect((await call(s.url, 'GET', '/v1/paths/mcpnotes/new.md')).status).toBe(200));
  });

  it('refuses two folders of the same name', () => {
    expect(() => parseConfig({ watch: ['/a/notes', '/b/notes'] })).toThrow(/same name/);
  });
});
