/**
 * MCP over Streamable HTTP at `/mcp` (decision 0057), driven by the official SDK's client as an
 * assistant would: two clients at once on one server (its one store and model), a read token
 * offered and allowed the read-only tools alone, a foreign Host or Origin refused before the
 * token is looked at, results bounded, GET and DELETE answered 405.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { RESULT_CHARS, TEXT_CHARS } from '../src/mcp/tools.js';
import { rebindingPolicy, refusal } from '../src/access/rebinding.js';
import { call, closeAll, errorCode, startServer } from './helpers/server.js';
import { makePdf } from '../../../packages/store/test/helpers/documents.js';

afterAll(closeAll);

const READER = 'reader-token-0123456789';
const WRITER = 'writer-token-0123456789';
const REMOVER = 'remover-token-0123456789';
const APPENDER = 'appender-token-0123456789';
const tokens = [
  { token: APPENDER, scopes: ['write' as const], name: 'appender' },
  { token: READER, scopes: ['read' as const], name: 'reader' },
  { token: WRITER, scopes: ['read' as const, 'write' as const], name: 'writer' },
  { token: REMOVER, scopes: ['read' as const, 'delete' as const], name: 'remover' },
];

const READ_TOOLS = ['kura_diff', 'kura_get', 'kura_grep', 'kura_list', 'kura_multi_get', 'kura_search', 'kura_snapshots', 'kura_versions'];
const WRITE_TOOLS = ['kura_add_text', 'kura_meta', 'kura_tag'];
/** Offered to a token with the delete scope (decision 0060: `write` adds and never removes). */
const DELETE_TOOLS = ['kura_delete'];

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: `kura-test-${token.slice(0, 6)}`, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

const json = (r: unknown) => JSON.parse((r as { content: { text: string }[] }).content[0]!.text);

/** The JSON-RPC POST a client would send, raw (for the refusals a client library hides). */
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const mcpHeaders = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

describe('MCP over HTTP', () => {
  it('two clients at once; a read token sees and may call the read-only tools alone; results bounded', { timeout: 120_000 }, async () => {
    // The real model when installed (auto): both clients' hybrid searches share its one load.
    const s = await startServer({ noAuth: false, tokens, semantic: 'auto' });
    const [reader, writer] = await Promise.all([connect(s.url, READER), connect(s.url, WRITER)]);
    try {
      const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name).sort();
      expect(await names(reader)).toEqual(READ_TOOLS);
      // Each tool's schema says what it takes: no other argument, but a client's own `_…` ones
      // (it said `additionalProperties: {}` while others were refused: a trial).
      for (const t of (await reader.listTools()).tools) expect(t.inputSchema, t.name).toMatchObject({ type: 'object', additionalProperties: false, patternProperties: { '^_': {} } });
      expect(await reader.callTool({ name: 'kura_list', arguments: { prefix: 'log/', _trace: 'x' } })).not.toMatchObject({ isError: true });
      // kura_add_file names a file on the server's machine: never offered over the network;
      // kura_delete needs the delete scope.
      expect(await names(writer)).toEqual([...READ_TOOLS, ...WRITE_TOOLS].sort());
      const remover = await connect(s.url, REMOVER);
      expect(await names(remover)).toEqual([...READ_TOOLS, ...DELETE_TOOLS].sort());
      await remover.close();

      // The writer adds while the reader reads, at once, through the one server.
      const notes = Array.from({ length: 12 }, (_, i) => `Note ${i}: the harbour master logs ship ${i} arriving at dawn.`);
      const [added, searched] = await Promise.all([
        Promise.all(notes.map((text, i) => writer.callTool({ name: 'kura_add_text', arguments: { text, path: `log/${String(i).padStart(2, '0')}.txt`, tags: ['harbour'] } }))),
        Promise.all(Array.from({ length: 12 }, () => reader.callTool({ name: 'kura_search', arguments: { query: 'harbour master' } }))),
      ]);
      expect(added.every((r) => !r.isError)).toBe(true);
      expect(searched.every((r) => !r.isError)).toBe(true);
      const found = json(await reader.callTool({ name: 'kura_search', arguments: { query: 'ship 7 arriving', limit: 3 } }));
      expect(found.hits[0]).toMatchObject({ path: 'log/07.txt' });
      // The same bytes at a second path: one hit, the other path in alsoAt; collapse: false, two.
      expect((await writer.callTool({ name: 'kura_add_text', arguments: { text: notes[7]!, path: 'copy/07.txt' } })).isError).toBeFalsy();
      const once = json(await reader.callTool({ name: 'kura_search', arguments: { query: 'ship 7 arriving', mode: 'keyword', limit: 3 } }));
      const copied = once.hits.filter((h: { alsoAt?: string[] }) => h.alsoAt?.length) as { path: string; alsoAt: string[] }[];
      expect(copied.map((h) => [h.path, ...h.alsoAt].sort())).toEqual([['copy/07.txt', 'log/07.txt']]);
      expect(once.hits.filter((h: { path: string }) => /07\.txt$/.test(h.path))).toHaveLength(1);
      const each = json(await reader.callTool({ name: 'kura_search', arguments: { query: 'ship 7 arriving', mode: 'keyword', limit: 3, collapse: false } }));
      expect(each.hits.map((h: { path: string }) => h.path).slice(0, 2).sort()).toEqual(['copy/07.txt', 'log/07.txt']);
      const cleaner = await connect(s.url, REMOVER);
      expect((await cleaner.callTool({ name: 'kura_delete', arguments: { path: 'copy/07.txt' } })).isError).toBeFalsy();
      await cleaner.close();
      // By meaning, with no word in common: the server's one model answers both clients.
      const meaning = await Promise.all([reader, writer].map(async (c) => json(await c.callTool({ name: 'kura_search', arguments: { query: 'vessel docking at sunrise', mode: 'semantic', limit: 3 } }))));
      for (const m of meaning) expect(m.hits[0]?.path).toMatch(/^log\//);
      const both = await Promise.all([reader, writer].map(async (c) => json(await c.callTool({ name: 'kura_list', arguments: { tag: 'harbour' } })).items.length));
      expect(both).toEqual([12, 12]);

      // Paths as HTTP takes them: none that names a place outside the tree (or that HTTP could
      // then neither read nor delete) is stored.
      for (const path of ['../evil', '/abs', 'a//b', 'log/../secret.txt', 'log/./x.txt']) {
        const bad = await writer.callTool({ name: 'kura_add_text', arguments: { text: 'x', path } }).catch((e: Error) => ({ isError: true, thrown: e.message }));
        expect([path, bad.isError]).toEqual([path, true]);
      }
      expect(json(await reader.callTool({ name: 'kura_list', arguments: {} })).items.map((i: { path: string }) => i.path).every((p: string) => p.startsWith('log/'))).toBe(true);

      // A read token cannot write: the call is refused and the store is unchanged.
      // Refused with why, as a tool error starting with its code (the SDK said "Tool kura_add_text
      // not found": nothing an assistant could act on).
      const refused = await reader.callTool({ name: 'kura_add_text', arguments: { text: 'sneaked in', path: 'log/zz.txt' } });
      expect(refused).toMatchObject({ isError: true, content: [{ type: 'text', text: 'FORBIDDEN: kura_add_text needs a token with the write scope; this one has read' }] });
      expect(await reader.callTool({ name: 'kura_delete', arguments: { path: 'log/00.txt' } })).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/^FORBIDDEN: kura_delete needs a token with the delete scope/) }] });
      expect(await writer.callTool({ name: 'kura_add_file', arguments: { file: '/etc/passwd' } })).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/^FORBIDDEN: kura_add_file names a file on the server's machine/) }] });
      // A tool that is no tool of Kura's is the SDK's to answer.
      expect(JSON.stringify(await reader.callTool({ name: 'kura_nothing', arguments: {} }).catch((e: Error) => ({ thrown: e.message })))).toMatch(/not found/);
      expect(json(await reader.callTool({ name: 'kura_list', arguments: { prefix: 'log/' } })).items).toHaveLength(12);

      // Bounded: a document larger than a result is cut, and says where to go on.
      const big = 'word '.repeat(60_000); // 300,000 characters
      await writer.callTool({ name: 'kura_add_text', arguments: { text: big, path: 'big.txt' } });
      const first = json(await reader.callTool({ name: 'kura_get', arguments: { ref: 'big.txt' } }));
      expect(first.text.length).toBe(TEXT_CHARS);
      expect(first).toMatchObject({ more: true, next: { offset: TEXT_CHARS } });
      // A long answer is cut between items, still JSON, and says so.
      const long = Array.from({ length: 400 }, (_, i) => `${i} harbour ${'x'.repeat(480)}`).join('\n');
      await writer.callTool({ name: 'kura_add_text', arguments: { text: long, path: 'long.txt' } });
      const grepped = await reader.callTool({ name: 'kura_grep', arguments: { pattern: 'harbour x', limit: 500 } });
      const text = (grepped as { content: { text: string }[] }).content[0]!.text;
      expect(text.length).toBeLessThanOrEqual(RESULT_CHARS);
      const g = JSON.parse(text);
      expect(g.cut).toMatchObject({ list: 'lines', of: 400 });
      expect(g.lines.length).toBe(g.cut.shown);
      expect(g.summary).toMatchObject({ matches: 400 });
      // A long line is shown around its match, not from its start.
      await writer.callTool({ name: 'kura_add_text', arguments: { text: `${'x'.repeat(5000)}NEEDLE${'y'.repeat(5000)}\n`, path: 'g/long.txt' } });
      const needle = json(await reader.callTool({ name: 'kura_grep', arguments: { pattern: 'NEEDLE', prefix: 'g/' } }));
      expect(needle.lines).toHaveLength(1);
      expect(needle.lines[0].text).toContain('NEEDLE');
      expect(needle.lines[0].text.length).toBeLessThanOrEqual(502);
      expect(needle.lines[0].text).toMatch(/^…x+NEEDLEy+…$/);
      // Marked on the sides it was cut only: a match at the line's end is cut before it.
      await writer.callTool({ name: 'kura_add_text', arguments: { text: `${'x'.repeat(5000)}NEEDLE end\n`, path: 'h/long.txt' } });
      expect(json(await reader.callTool({ name: 'kura_grep', arguments: { pattern: 'NEEDLE', prefix: 'h/' } })).lines[0].text).toMatch(/^…x+NEEDLE end$/);
      // Which files hold it (grep -l), and of a media type only, as the CLI and HTTP do (a trial: missing here).
      const files = json(await reader.callTool({ name: 'kura_grep', arguments: { pattern: 'harbour x', filesWithMatches: true } }));
      expect(files.lines.map((l: { path: string }) => l.path)).toEqual(['long.txt']); // (400 lines match in it: one listed)
      // How many lines match, file by file (grep -c), and no lines.
      const counts = json(await reader.callTool({ name: 'kura_grep', arguments: { pattern: 'harbour x', count: true, limit: 500 } }));
      expect([counts.counts, counts.lines]).toEqual([[{ path: 'long.txt', matches: 400 }], undefined]);
      // The values themselves (grep -o): every match of each line, at most 100 a line.
      await writer.callTool({ name: 'kura_add_text', arguments: { text: `mail a@x.org and b@y.net\n${'n1 '.repeat(150)}\n`, path: 'o/mail.txt' } });
      const mails = json(await reader.callTool({ name: 'kura_grep', arguments: { pattern: '\\w+@\\w+\\.\\w+', prefix: 'o/', onlyMatching: true } }));
      expect(mails.lines.map((l: { matches: string[] }) => l.matches)).toEqual([['a@x.org', 'b@y.net']]);
      const many = json(await reader.callTool({ name: 'kura_grep', arguments: { pattern: 'n1', prefix: 'o/', onlyMatching: true } }));
      expect(many.lines[0]).toMatchObject({ line: 2, matchesMore: 50 });
      expect(many.lines[0].matches).toHaveLength(100);
      await writer.callTool({ name: 'kura_add_text', arguments: { text: '# harbour notes', path: 'm/notes.md' } });
      expect(json(await reader.callTool({ name: 'kura_grep', arguments: { pattern: 'harbour', type: 'text/markdown' } })).lines.map((l: { path: string }) => l.path)).toEqual(['m/notes.md']);
      // Versions beyond what an answer lists: the newest, and `cut` says how many there are.
      for (let i = 0; i < 205; i++) await writer.callTool({ name: 'kura_add_text', arguments: { text: `v${i}`, path: 'v/many.txt' } });
      const versions = json(await reader.callTool({ name: 'kura_versions', arguments: { path: 'v/many.txt' } }));
      expect(versions.versions).toHaveLength(200);
      expect(versions.versions.at(-1).version).toBe(205);
      expect(versions.cut).toEqual({ list: 'versions', shown: 200, of: 205, kept: 'newest' });
      // An offset inside a character starts at the next one (it answered "not UTF-8 text").
      await writer.callTool({ name: 'kura_add_text', arguments: { text: '😀😀 café NEEDLE', path: 'g/uni.txt' } });
      const mid = json(await reader.callTool({ name: 'kura_get', arguments: { ref: 'g/uni.txt', offset: 1 } }));
      expect(mid).toMatchObject({ offset: 4, text: '😀 café NEEDLE' });
      // Text added at a name is typed by it; lines asked backwards and a broken glob are errors, not nothing.
      await writer.callTool({ name: 'kura_add_text', arguments: { text: '# Title\n', path: 'g/readme.md' } });
      expect(json(await reader.callTool({ name: 'kura_list', arguments: { prefix: 'g/readme' } })).items[0].mediaType).toBe('text/markdown');
      expect(await reader.callTool({ name: 'kura_get', arguments: { ref: 'g/readme.md', fromLine: 3, toLine: 2 } })).toMatchObject({ isError: true, _meta: { code: 'INVALID_INPUT' } });
      expect(await reader.callTool({ name: 'kura_multi_get', arguments: { glob: '[' } })).toMatchObject({ isError: true, _meta: { code: 'INVALID_INPUT' } });
      // A Kura error is a tool error carrying its code.
      const missing = await reader.callTool({ name: 'kura_get', arguments: { ref: 'no/such.txt' } });
      expect(missing).toMatchObject({ isError: true, _meta: { code: 'NOT_FOUND' } });

      // What search hands an assistant, it can read: a digest two paths show (it was AMBIGUOUS),
      // an older version by its number, and a file only a snapshot keeps — by its path in the
      // snapshot or by its digest.
      const twice = json(await writer.callTool({ name: 'kura_add_text', arguments: { text: 'said twice\n', path: 'dup/one.txt' } }));
      await writer.callTool({ name: 'kura_add_text', arguments: { text: 'said twice\n', path: 'dup/two.txt' } });
      expect(json(await reader.callTool({ name: 'kura_get', arguments: { ref: twice.digest } }))).toMatchObject({ digest: twice.digest, text: 'said twice\n' });
      expect(json(await reader.callTool({ name: 'kura_get', arguments: { ref: 'v/many.txt@3' } }))).toMatchObject({ path: 'v/many.txt', version: 3, text: 'v2' });
      const tree = join(s.dir, 'tree');
      mkdirSync(join(tree, 'sub'), { recursive: true });
      writeFileSync(join(tree, 'sub', 'only.md'), 'a quokka smiles only in this snapshot\n');
      const snap = await s.app.store.snapshot(tree);
      const quokka = json(await reader.callTool({ name: 'kura_search', arguments: { query: 'quokka', snapshot: snap.id, mode: 'keyword' } }));
      expect(quokka.hits[0]).toMatchObject({ path: 'sub/only.md' });
      const inSnap = json(await reader.callTool({ name: 'kura_get', arguments: { ref: 'sub/only.md', snapshot: snap.id } }));
      expect(inSnap).toMatchObject({ path: 'sub/only.md', snapshot: snap.id, mediaType: 'text/markdown', text: 'a quokka smiles only in this snapshot\n' });
      expect(json(await reader.callTool({ name: 'kura_get', arguments: { ref: quokka.hits[0].digest, fromLine: 1 } }))).toMatchObject({ text: 'a quokka smiles only in this snapshot\n' });
      expect(await reader.callTool({ name: 'kura_get', arguments: { ref: 'sub/none.md', snapshot: snap.id } })).toMatchObject({ isError: true, _meta: { code: 'NOT_FOUND' } });
      // A path no document can have is INVALID_INPUT, as HTTP answers it (kura_get said NOT_FOUND).
      for (const [name, args] of [['kura_get', { ref: 'g/../secret.txt' }], ['kura_versions', { path: 'a//b' }], ['kura_diff', { from: 'g/./x', to: 'big.txt' }]] as const) {
        expect(await reader.callTool({ name, arguments: args }), name).toMatchObject({ isError: true, _meta: { code: 'INVALID_INPUT' } });
      }
      expect(await writer.callTool({ name: 'kura_tag', arguments: { ref: '../x', add: ['t'] } })).toMatchObject({ isError: true, _meta: { code: 'INVALID_INPUT' } });
      // Lines as they are: no empty line after a final newline, none added after a last line without one.
      expect(json(await reader.callTool({ name: 'kura_get', arguments: { ref: 'g/uni.txt', fromLine: 1 } }))).toMatchObject({ fromLine: 1, toLine: 1, text: '😀😀 café NEEDLE' });
      expect(json(await reader.callTool({ name: 'kura_get', arguments: { ref: 'g/readme.md', fromLine: 1, toLine: 5 } }))).toMatchObject({ fromLine: 1, toLine: 1, text: '# Title\n' });
      const diffed = json(await reader.callTool({ name: 'kura_diff', arguments: { from: inSnap.digest, to: twice.digest } }));
      expect(diffed.diff).toContain('+said twice');
      // A write-only token (an agent that files notes and never reads) may come: it sees the
      // tools that add, alone, and adds (it was refused: /mcp needed the read scope).
      const appender = await connect(s.url, APPENDER);
      expect(await names(appender)).toEqual(WRITE_TOOLS);
      expect((await appender.callTool({ name: 'kura_add_text', arguments: { text: 'filed by an agent', path: 'inbox/agent.txt' } })).isError).toBeFalsy();
      const unread = await appender.callTool({ name: 'kura_search', arguments: { query: 'filed' } }).catch((e: Error) => ({ isError: true, thrown: e.message }));
      expect(unread).toMatchObject({ isError: true });
      await appender.close();
    } finally {
      await Promise.all([reader.close(), writer.close()]);
    }
  });

  it('a diff of two long unrelated texts does not hold the server: other requests are answered meanwhile, and it gives up in time', { timeout: 60_000 }, async () => {
    const s = await startServer({ noAuth: false, tokens });
    const writer = await connect(s.url, WRITER);
    try {
      const lines = (tag: string) => Array.from({ length: 20_000 }, (_, i) => `${tag} row ${i} data\n`).join('');
      for (const [path, text] of [['d/a.txt', lines('alpha')], ['d/b.txt', lines('beta')]]) await writer.callTool({ name: 'kura_add_text', arguments: { text, path } });
      const order: string[] = [];
      const diff = writer.callTool({ name: 'kura_diff', arguments: { from: 'd/a.txt', to: 'd/b.txt' } }).then((r) => (order.push('diff'), json(r)));
      await new Promise((r) => setTimeout(r, 100)); // (the diff is under way)
      const health = await call(s.url, 'GET', '/healthz');
      order.push('healthz');
      expect(health.status).toBe(200);
      const answer = await diff;
      expect(order).toEqual(['healthz', 'diff']); // (it waited for the whole diff: 14 s)
      // Two texts sharing no line: 40,000 edits, given up and said so.
      expect(answer).toMatchObject({ from: 'd/a.txt', to: 'd/b.txt', diff: null });
      expect(answer.note).toMatch(/too many places/);
      // A small change to the same long text still diffs.
      await writer.callTool({ name: 'kura_add_text', arguments: { text: lines('alpha').replace('alpha row 7 data', 'alpha row seven data'), path: 'd/a.txt' } });
      const small = json(await writer.callTool({ name: 'kura_diff', arguments: { from: 'd/a.txt@1', to: 'd/a.txt@2' } }));
      expect(small.diff).toContain('-alpha row 7 data');
      expect(small.diff).toContain('+alpha row seven data');
    } finally {
      await writer.close();
    }
  });

  it('refuses a foreign Host or Origin before the token, a request without a token, and GET/DELETE', async () => {
    const s = await startServer({ noAuth: false, tokens, allowedHosts: ['kura.internal'] });
    const port = new URL(s.url).port;
    const post = (headers: Record<string, string>, token: string | null = READER) => call(s.url, 'POST', '/mcp', { json: initialize, headers: { ...mcpHeaders, ...headers }, ...(token ? { token } : {}) });

    const ok = await post({});
    expect(ok.status).toBe(200);
    expect(ok.json.result.serverInfo).toMatchObject({ name: 'kura' });
    // The page the server serves itself, and a configured name, are allowed.
    expect((await post({ origin: s.url })).status).toBe(200);
    expect((await post({ host: `kura.internal:${port}` })).status).toBe(200);

    // DNS rebinding: evil.example resolves to 127.0.0.1; the browser names it in Host and Origin.
    const rebound = await post({ host: `evil.example:${port}`, origin: `http://evil.example:${port}` }, null);
    expect(rebound.status).toBe(403); // before the token: no 401 that would tell the page a server is there
    expect(errorCode(rebound)).toBe('FORBIDDEN');
    expect(rebound.json.error.message).toMatch(/Host evil\.example/);
    const foreign = await post({ origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.json.error.message).toMatch(/Origin https:\/\/evil\.example/);
    expect((await post({ origin: 'null' })).status).toBe(403);

    const anonymous = await post({}, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer/);
    expect((await post({}, 'not-a-token-0123456789')).status).toBe(401);

    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH', 'HEAD']) {
      const r = await call(s.url, method, '/mcp', { token: READER, headers: { accept: 'text/event-stream' } });
      expect(r.status).toBe(405);
      expect(r.headers.allow).toBe('POST');
      if (method !== 'HEAD') expect(errorCode(r)).toBe('METHOD_NOT_ALLOWED');
    }
    // Arguments that are no object are the client's mistake (-32602), not an internal error.
    const listed = await post({});
    expect(listed.status).toBe(200);
    const badArgs = await call(s.url, 'POST', '/mcp', { json: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'kura_list', arguments: [1] } }, headers: mcpHeaders, token: READER });
    expect(badArgs.json).toMatchObject({ id: 7, error: { code: -32602, message: expect.stringMatching(/arguments must be an object/) } });
  });

  it('a PDF is read as the text extracted from it, by kura_get and kura_multi_get (it was "not UTF-8 text": a trial)', { timeout: 60_000 }, async () => {
    const s = await startServer({ noAuth: false, tokens });
    const reader = await connect(s.url, READER);
    try {
      await s.app.store.put(makePdf(['Invoice total is 4321 dollars', 'due in March']), { path: 'docs/invoice.pdf', mediaType: 'application/pdf' });
      await s.app.store.indexStatus({ wait: true });
      const got = json(await reader.callTool({ name: 'kura_get', arguments: { ref: 'docs/invoice.pdf' } }));
      expect(got).toMatchObject({ path: 'docs/invoice.pdf', extracted: 'pdf', text: expect.stringContaining('Invoice total is 4321 dollars') });
      const lines = json(await reader.callTool({ name: 'kura_get', arguments: { ref: 'docs/invoice.pdf', fromLine: 1, toLine: 1 } }));
      expect(lines.text).toMatch(/^Invoice total is 4321 dollars/);
      const many = json(await reader.callTool({ name: 'kura_multi_get', arguments: { prefix: 'docs/' } }));
      expect(many.docs).toMatchObject([{ path: 'docs/invoice.pdf', extracted: 'pdf', text: expect.stringContaining('due in March') }]);
      // Old notes in Latin-1 are read as search reads them (they were "not UTF-8 text").
      await s.app.store.put(Uint8Array.from([...'Le café de Noël\n'].map((c) => c.charCodeAt(0))), { path: 'old/notes' });
      expect(json(await reader.callTool({ name: 'kura_get', arguments: { ref: 'old/notes' } }))).toMatchObject({ text: 'Le café de Noël\n', encoding: 'windows-1252' });
    } finally {
      await reader.close();
    }
  });

  it('a write-only token learns nothing of entries; writers at once are told the truth; metadata never makes an entry unreadable (a trial)', { timeout: 60_000 }, async () => {
    const s = await startServer({ noAuth: false, tokens });
    const [writer, appender] = await Promise.all([connect(s.url, WRITER), connect(s.url, APPENDER)]);
    try {
      await writer.callTool({ name: 'kura_add_text', arguments: { text: 'salary table', path: 'hr/salaries.md', tags: ['confidential'], meta: { owner: 'cfo' } } });
      // An empty change was a lookup of any path's tags and metadata.
      const tagged = json(await appender.callTool({ name: 'kura_tag', arguments: { ref: 'hr/salaries.md' } }));
      const meta = json(await appender.callTool({ name: 'kura_meta', arguments: { ref: 'hr/salaries.md', meta: {} } }));
      expect([tagged, meta]).toEqual([{ ref: 'hr/salaries.md', updated: true }, { ref: 'hr/salaries.md', updated: true }]);
      // Whether a guess was a path's text: `unchanged` said so.
      const right = json(await appender.callTool({ name: 'kura_add_text', arguments: { text: 'salary table', path: 'hr/salaries.md' } }));
      const wrong = json(await appender.callTool({ name: 'kura_add_text', arguments: { text: 'a guess', path: 'hr/salaries.md' } }));
      expect(Object.keys(right).sort()).toEqual(['digest', 'path', 'size']);
      expect(Object.keys(wrong).sort()).toEqual(['digest', 'path', 'size']);
      // Which paths hold a digest: AMBIGUOUS listed them (over HTTP too).
      const dup = json(await writer.callTool({ name: 'kura_add_text', arguments: { text: 'twice', path: 'a/one.txt' } }));
      await writer.callTool({ name: 'kura_add_text', arguments: { text: 'twice', path: 'secret/two.txt' } });
      const ambiguous = await appender.callTool({ name: 'kura_tag', arguments: { ref: dup.digest, add: ['x'] } });
      expect(ambiguous).toMatchObject({ isError: true, _meta: { code: 'AMBIGUOUS' } });
      expect(JSON.stringify(ambiguous)).not.toMatch(/secret|one\.txt/);
      const overHttp = await call(s.url, 'PATCH', `/v1/documents/${dup.digest}/meta`, { json: { addTags: ['x'] }, token: APPENDER });
      expect([overHttp.status, errorCode(overHttp), JSON.stringify(overHttp.json).includes('secret')]).toEqual([409, 'AMBIGUOUS', false]);
      expect(JSON.stringify((await call(s.url, 'PATCH', `/v1/documents/${dup.digest}/meta`, { json: { addTags: ['x'] }, token: WRITER })).json)).toMatch(/secret\/two\.txt/);

      // Eight writers of one text at once: one made the version, seven are told `unchanged`
      // (five said they made it: each compared with the versions it read before its put).
      const eight = await Promise.all(Array.from({ length: 8 }, () => writer.callTool({ name: 'kura_add_text', arguments: { text: 'same 0', path: 'c/0.md' } })));
      const answers = eight.map(json);
      expect(answers.map((a) => a.version)).toEqual(Array(8).fill(1));
      expect(answers.filter((a) => !a.unchanged)).toHaveLength(1);

      // Metadata the store takes never makes an entry unreadable, nor unlisted.
      await writer.callTool({ name: 'kura_add_text', arguments: { text: 'word '.repeat(30_000), path: 'm/a.txt', meta: { summary: 's'.repeat(4500) } } });
      await writer.callTool({ name: 'kura_add_text', arguments: { text: 'tiny', path: 'm/b.txt', meta: { summary: 's'.repeat(65_536), other: 'kept' } } });
      const a = json(await writer.callTool({ name: 'kura_get', arguments: { ref: 'm/a.txt' } }));
      expect(a.text.length).toBeGreaterThan(50_000);
      expect(a).toMatchObject({ more: true, fieldsCut: true });
      expect(a.meta.summary).toMatch(/^s+…$/);
      const b = json(await writer.callTool({ name: 'kura_get', arguments: { ref: 'm/b.txt', maxChars: 1 } }));
      expect(b).toMatchObject({ text: 't', fieldsCut: true, meta: { other: 'kept' } });
      expect(json(await writer.callTool({ name: 'kura_list', arguments: { prefix: 'm/' } })).items.map((i: { path: string }) => i.path)).toEqual(['m/a.txt', 'm/b.txt']);
      expect(json(await writer.callTool({ name: 'kura_meta', arguments: { ref: 'm/b.txt', meta: { more: 'yes' } } })).meta).toMatchObject({ more: 'yes', other: 'kept' });

      // A path no document can have is INVALID_INPUT with its code, as every other tool answers
      // (the SDK's schema refusal was a protocol error without one).
      for (const path of ['a/../b', '/abs', 'trail/']) {
        expect(await writer.callTool({ name: 'kura_add_text', arguments: { text: 'x', path } }), path).toMatchObject({ isError: true, _meta: { code: 'INVALID_INPUT' } });
      }
    } finally {
      await Promise.all([writer.close(), appender.close()]);
    }
  });
});

describe('DNS-rebinding policy', () => {
  it('allows the loopback names, the listening address and configured names, port aside; refuses others', () => {
    const p = rebindingPolicy({ host: '10.1.2.3', allowedHosts: ['kura.example.org'], corsOrigins: ['https://app.example.org'] });
    // An address is no rebound name (a rebinding page names its own site): any IP literal passes.
    // Twice, and again after more Host values than the server remembers the names of.
    for (const round of [1, 2, 3]) {
      for (const host of ['localhost:8787', '127.0.0.1', '[::1]:1', 'LOCALHOST:80', '10.1.2.3:8787', 'kura.example.org:443', '10.1.2.4', '[fe80::1]:80', 'localhost.:8787']) expect(refusal(p, host, undefined), `${host} ${round}`).toBeUndefined();
      for (const host of ['evil.example:8787', 'kura.example.org.evil.example', '10.1.2.4.evil.example', 'user@localhost', 'localhost/x', '', undefined]) expect(refusal(p, host, undefined), `${host} ${round}`).toMatch(/Host/);
      if (round === 2) for (let i = 0; i < 300; i++) expect(refusal(p, `n${i}.evil.example`, undefined)).toMatch(/Host/);
    }
    expect(refusal(p, 'localhost', 'http://localhost:5173')).toBeUndefined();
    expect(refusal(p, 'localhost', 'https://app.example.org')).toBeUndefined();
    for (const origin of ['https://evil.example', 'null', 'file://', 'http://localhost.evil.example', 'chrome-extension://abc']) expect(refusal(p, 'localhost', origin), origin).toMatch(/Origin/);
    // Same origin only (a server without tokens): the port counts.
    expect(refusal(p, 'localhost:8787', 'http://localhost:8787', true)).toBeUndefined();
    expect(refusal(p, 'localhost:8787', 'http://localhost:5173', true)).toMatch(/Origin/);
    expect(refusal(p, 'localhost:8787', 'https://app.example.org', true)).toBeUndefined(); // configured
  });

  it('a wildcard listening address is no name; `*` allows any', () => {
    const wild = rebindingPolicy({ host: '0.0.0.0', allowedHosts: [], corsOrigins: [] });
    expect(refusal(wild, '0.0.0.0:8787', undefined)).toBeUndefined(); // (the URL the server prints)
    expect(refusal(wild, 'my-laptop:8787', undefined)).toMatch(/Host/);
    expect(refusal(wild, 'localhost', undefined)).toBeUndefined();
    const v6 = rebindingPolicy({ host: '::1', allowedHosts: [], corsOrigins: [] });
    expect(refusal(v6, '[::1]:8787', undefined)).toBeUndefined();
    const any = rebindingPolicy({ host: '127.0.0.1', allowedHosts: ['*'], corsOrigins: ['*'] });
    expect(refusal(any, 'anything.example', 'https://elsewhere.example')).toBeUndefined();
  });
});
