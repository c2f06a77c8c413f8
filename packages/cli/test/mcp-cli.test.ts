/**
 * `kura mcp` driven by a client from the official SDK over stdio, as an assistant would:
 * lists the tools, adds a file, finds it by a question that shares no word with it, reads it
 * back; a Kura error is a tool error carrying its code.
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { VERSION } from '../src/version.js';
import { makePdf } from '../../store/test/helpers/documents.js';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const roots: string[] = [];
afterAll(() => roots.splice(0).forEach((r) => rmSync(r, { recursive: true, force: true })));

const json = (r: unknown) => JSON.parse((r as { content: { text: string }[] }).content[0]!.text);

describe('kura mcp', () => {
  it('an MCP client lists the tools, adds a file, finds it by a question, reads it back', { timeout: 120_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-mcp-'));
    roots.push(root);
    const store = join(root, 'store');
    expect(spawnSync(process.execPath, [BIN, 'init', '--store', store]).status).toBe(0);
    const file = join(root, 'oil.txt');
    writeFileSync(file, 'Motor lubricant should be replaced every 8,000 kilometres; check the dipstick monthly.\n');
    const client = new Client({ name: 'kura-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--store', store], stderr: 'pipe' }));
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'kura', version: VERSION });
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['kura_add_file', 'kura_add_text', 'kura_delete', 'kura_diff', 'kura_get', 'kura_grep', 'kura_list', 'kura_meta', 'kura_multi_get', 'kura_search', 'kura_snapshots', 'kura_tag', 'kura_versions']);
      const hint = (name: string) => tools.find((t) => t.name === name)!.annotations;
      for (const t of tools) expect(t.annotations?.readOnlyHint, t.name).toBe(['kura_get', 'kura_multi_get', 'kura_list', 'kura_search', 'kura_grep', 'kura_versions', 'kura_diff', 'kura_snapshots'].includes(t.name));
      expect(hint('kura_delete')).toMatchObject({ readOnlyHint: false, destructiveHint: true });
      expect(hint('kura_tag')).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: true });
      const added = json(await client.callTool({ name: 'kura_add_file', arguments: { file, path: 'cars/oil.txt', tags: ['car'] } }));
      expect(added).toMatchObject({ path: 'cars/oil.txt', digest: expect.stringMatching(/^sha256:/) });
      await client.callTool({ name: 'kura_add_text', arguments: { text: 'Felines need fresh water daily and a clean litter tray.', path: 'pets/cats.txt' } });
      const found = json(await client.callTool({ name: 'kura_search', arguments: { query: 'What maintenance does my automobile require?' } }));
      expect(found.hits[0]).toMatchObject({ path: 'cars/oil.txt', semantic: { rank: 1 } });
      const keyword = json(await client.callTool({ name: 'kura_search', arguments: { query: 'What maintenance does my automobile require?', mode: 'keyword' } }));
      expect(keyword.hits).toEqual([]);
      const read = json(await client.callTool({ name: 'kura_get', arguments: { ref: 'cars/oil.txt' } }));
      expect(read.text).toContain('dipstick monthly');
      const listed = json(await client.callTool({ name: 'kura_list', arguments: { tag: 'car' } }));
      expect(listed.items.map((i: { path: string }) => i.path)).toEqual(['cars/oil.txt']);
      expect(json(await client.callTool({ name: 'kura_versions', arguments: { path: 'cars/oil.txt' } })).versions).toHaveLength(1);
      const grepped = json(await client.callTool({ name: 'kura_grep', arguments: { pattern: 'litter|DIPSTICK', ignoreCase: true } }));
      expect(grepped.lines.map((l: { path: string; line: number }) => `${l.path}:${l.line}`)).toEqual(['cars/oil.txt:1', 'pets/cats.txt:1']);
      expect(grepped.summary).toMatchObject({ matches: 2, truncated: false });
      // Line ranges and a budget, with where to go on; a diff of two versions; write tools.
      await client.callTool({ name: 'kura_add_text', arguments: { text: 'one\ntwo\nthree\nfour\nfive\n', path: 'notes/lines.txt' } });
      const lines = json(await client.callTool({ name: 'kura_get', arguments: { ref: 'notes/lines.txt', fromLine: 2, toLine: 4 } }));
      expect(lines).toMatchObject({ fromLine: 2, toLine: 4, text: 'two\nthree\nfour\n' });
      expect(lines.more).toBeUndefined();
      // The budget is counted as the answer's JSON writes the text: a newline is two (\n).
      const budget = json(await client.callTool({ name: 'kura_get', arguments: { ref: 'notes/lines.txt', fromLine: 1, maxChars: 11 } }));
      expect(budget).toMatchObject({ text: 'one\ntwo\n', more: true, next: { fromLine: 3 } });
      const chars = json(await client.callTool({ name: 'kura_get', arguments: { ref: 'notes/lines.txt', maxChars: 7 } }));
      expect(chars).toMatchObject({ text: 'one\ntw', more: true, next: { offset: 6 } });
      expect(json(await client.callTool({ name: 'kura_get', arguments: { ref: 'notes/lines.txt', offset: 6 } })).text).toBe('o\nthree\nfour\nfive\n');
      await client.callTool({ name: 'kura_add_text', arguments: { text: 'one\ntwo\nTHREE\nfour\nfive\n', path: 'notes/lines.txt' } });
      const diff = json(await client.callTool({ name: 'kura_diff', arguments: { from: 'notes/lines.txt@1', to: 'notes/lines.txt@2', context: 1 } }));
      expect(diff.diff).toContain('-three\n+THREE\n');
      expect(json(await client.callTool({ name: 'kura_tag', arguments: { ref: 'notes/lines.txt', add: ['todo', 'x'], remove: ['x'] } })).tags).toEqual(['todo']);
      expect(json(await client.callTool({ name: 'kura_meta', arguments: { ref: 'notes/lines.txt', meta: { owner: 'ann' } } })).meta).toEqual({ owner: 'ann' });
      expect(await client.callTool({ name: 'kura_delete', arguments: { path: 'notes/../cars/oil.txt' } })).toMatchObject({ isError: true, _meta: { code: 'INVALID_INPUT' } }); // (it answered deleted: false)
      expect(json(await client.callTool({ name: 'kura_delete', arguments: { path: 'notes/lines.txt' } }))).toEqual({ path: 'notes/lines.txt', deleted: true });
      expect(await client.callTool({ name: 'kura_get', arguments: { ref: 'notes/lines.txt' } })).toMatchObject({ isError: true, _meta: { code: 'NOT_FOUND' } });
      // Several documents by a glob, within a total budget, going on from a cursor.
      for (const [path, text] of [['docs/a.md', 'alpha '.repeat(10)], ['docs/b.md', 'beta '.repeat(10)], ['docs/sub/c.md', 'gamma'], ['docs/d.txt', 'delta']]) {
        await client.callTool({ name: 'kura_add_text', arguments: { text, path } });
      }
      const all = json(await client.callTool({ name: 'kura_multi_get', arguments: { glob: 'docs/**/*.md' } }));
      expect(all.docs.map((d: { path: string }) => d.path)).toEqual(['docs/a.md', 'docs/b.md', 'docs/sub/c.md']);
      expect(all).toMatchObject({ more: false, cursor: null });
      // The budget counts each entry too (its path and ENTRY_CHARS = 128): 330 = a (137 + 40
      // of its text) + b (137 + the 16 left), and nothing left for c.
      const first = json(await client.callTool({ name: 'kura_multi_get', arguments: { glob: 'docs/**/*.md', maxChars: 330, perDocChars: 40 } }));
      expect(first.docs.map((d: { path: string; cut?: boolean }) => [d.path, d.cut ?? false])).toEqual([['docs/a.md', true], ['docs/b.md', true]]);
      expect(first.more).toBe(true);
      const rest = json(await client.callTool({ name: 'kura_multi_get', arguments: { glob: 'docs/**/*.md', cursor: first.cursor } }));
      expect(rest.docs.map((d: { path: string }) => d.path)).toEqual(['docs/sub/c.md']);
      expect(json(await client.callTool({ name: 'kura_multi_get', arguments: { prefix: 'docs/sub/' } })).docs.map((d: { text: string }) => d.text)).toEqual(['gamma']);
      const badPattern = await client.callTool({ name: 'kura_grep', arguments: { pattern: '(unclosed' } });
      expect(badPattern).toMatchObject({ isError: true, _meta: { code: 'INVALID_INPUT' } });
      const missing = await client.callTool({ name: 'kura_get', arguments: { ref: 'no/such/path' } });
      expect(missing.isError).toBe(true);
      expect(missing._meta).toMatchObject({ code: 'NOT_FOUND' });
      expect(json({ content: [{ text: JSON.stringify((missing.content as { text: string }[])[0]!.text) }] })).toMatch(/^NOT_FOUND: /);
      const bad = await client.callTool({ name: 'kura_search', arguments: { query: 'x', limit: 1000 } }).catch((e: Error) => e);
      expect(bad instanceof Error ? bad.message : JSON.stringify(bad)).toMatch(/limit|Input validation/i);
    } finally {
      await client.close();
    }
  });

  it('kura_add_file puts a file as kura add does: typed, streamed, regular files only, errors as tool errors', { timeout: 60_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-mcp-'));
    roots.push(root);
    const store = join(root, 'store');
    expect(spawnSync(process.execPath, [BIN, 'init', '--store', store]).status).toBe(0);
    const pdf = join(root, 'gulls.pdf');
    writeFileSync(pdf, makePdf(['Seagulls nest on the harbour wall']));
    const page = join(root, 'page.html');
    writeFileSync(page, '<html><body><p>A page about lighthouses</p></body></html>');
    const client = new Client({ name: 'kura-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--store', store], stderr: 'pipe' }));
    try {
      // Typed as kura add types them (the type filter found neither: both were typed null).
      for (const [file, path] of [[pdf, 'z/gulls.pdf'], [page, 'z/page.html']]) expect(await client.callTool({ name: 'kura_add_file', arguments: { file, path } })).not.toHaveProperty('isError', true);
      const listed = json(await client.callTool({ name: 'kura_list', arguments: { prefix: 'z/' } }));
      expect(listed.items.map((i: { path: string; mediaType: string }) => [i.path, i.mediaType])).toEqual([['z/gulls.pdf', 'application/pdf'], ['z/page.html', 'text/html']]);
      const found = json(await client.callTool({ name: 'kura_search', arguments: { query: 'seagulls', type: 'application/pdf', mode: 'keyword' } }));
      expect(found.hits.map((h: { path: string }) => h.path)).toEqual(['z/gulls.pdf']);
      // A device that never ends, a directory, a missing file: tool errors naming the file, at
      // once (/dev/zero was read until memory ran out).
      for (const file of ['/dev/zero', root, join(root, 'no-such-file')]) {
        const r = await client.callTool({ name: 'kura_add_file', arguments: { file, path: 'z/x' } });
        expect(r, file).toMatchObject({ isError: true, _meta: { code: 'INVALID_INPUT' } });
        expect((r.content as { text: string }[])[0]!.text, file).toContain(file);
      }
      expect(json(await client.callTool({ name: 'kura_list', arguments: { prefix: 'z/' } })).items).toHaveLength(2);
      // A link to a file is the file (the workers read without following links: its target is named).
      symlinkSync(page, join(root, 'link.html'));
      expect(json(await client.callTool({ name: 'kura_add_file', arguments: { file: join(root, 'link.html'), path: 'z/link.html' } }))).toMatchObject({ path: 'z/link.html' });
      // A file being written all the while it is read is not stored as a mix of its states (as kura add).
      const busy = join(root, 'busy.log');
      writeFileSync(busy, Buffer.alloc(40 << 20, 'a'));
      const fd = openSync(busy, 'r+');
      let writing = true;
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          writeSync(fd, Buffer.from(`W${i}`), 0, undefined, (i * 7919 * 4096) % (38 << 20));
          await new Promise((r) => setTimeout(r, 3));
        }
      })();
      const r = await client.callTool({ name: 'kura_add_file', arguments: { file: busy, path: 'z/busy.log' } });
      writing = false;
      await writer;
      closeSync(fd);
      expect(r).toMatchObject({ isError: true, _meta: { code: 'INVALID_INPUT' } });
      expect((r.content as { text: string }[])[0]!.text).toMatch(/busy\.log changed while it was read, 3 times: not stored/);
      expect(json(await client.callTool({ name: 'kura_list', arguments: { prefix: 'z/' } })).items.map((i: { path: string }) => i.path).sort()).toEqual(['z/gulls.pdf', 'z/link.html', 'z/page.html']);
    } finally {
      await client.close();
    }
  });

  it('answers say what an assistant needs: versions, tags and metadata, the mode, plain snippets; digests spelled as the CLI takes them', { timeout: 60_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-mcp-'));
    roots.push(root);
    const store = join(root, 'store');
    expect(spawnSync(process.execPath, [BIN, 'init', '--store', store]).status).toBe(0);
    const client = new Client({ name: 'kura-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--store', store], stderr: 'pipe' }));
    const call = async (name: string, args: Record<string, unknown>) => json(await client.callTool({ name, arguments: args }));
    try {
      const code = "if (a < b && c > d) { return \"it's\"; }";
      const first = await call('kura_add_text', { text: `the wifi password\n${code}\n`, path: 'notes/wifi.md', tags: ['home'], meta: { owner: 'ann' } });
      expect(first).toMatchObject({ path: 'notes/wifi.md', version: 1 });
      expect(first.unchanged).toBeUndefined();
      expect(await call('kura_add_text', { text: `the wifi password\n${code}\n`, path: 'notes/wifi.md' })).toMatchObject({ version: 1, unchanged: true });
      expect(await call('kura_add_text', { text: `the wifi password changed\n${code}\n`, path: 'notes/wifi.md' })).toMatchObject({ version: 2 });
      expect(await call('kura_add_text', { text: 'no path' })).toMatchObject({ path: null });
      // The latest version with the entry's tags and metadata, by path and by any digest spelling.
      const got = await call('kura_get', { ref: 'notes/wifi.md' });
      expect(got).toMatchObject({ path: 'notes/wifi.md', version: 2, tags: ['home'], meta: { owner: 'ann' } });
      for (const ref of [got.digest.slice(7), got.digest.toUpperCase(), `sha256:${got.digest.slice(7).toUpperCase()}`]) {
        expect((await call('kura_get', { ref })).digest, ref).toBe(got.digest);
      }
      expect((await call('kura_tag', { ref: got.digest.slice(7), add: ['net'] })).tags).toEqual(['home', 'net']);
      expect((await call('kura_list', { prefix: 'notes/' })).items[0]).toMatchObject({ path: 'notes/wifi.md', meta: { owner: 'ann' } });
      expect(await client.callTool({ name: 'kura_get', arguments: { ref: 'notes/wifi.md', offset: 3, fromLine: 2 } })).toMatchObject({ isError: true, _meta: { code: 'INVALID_INPUT' } });
      // Snippets as text: the code as written, the matched word marked (it came HTML-escaped).
      const found = await call('kura_search', { query: 'return', mode: 'keyword' });
      expect(found.mode).toBe('keyword');
      expect((await call('kura_search', { query: 'network login' })).mode).toBe('hybrid'); // (the default with the local model; said)
      expect(found.hits[0].snippet).toContain('if (a < b && c > d) { <mark>return</mark> "it\'s"; }');
      // A document's own <mark> is not a match (it read as one: a trial).
      await call('kura_add_text', { text: 'Use <mark>highlight</mark> tags on a page', path: 'notes/html.md' });
      expect((await call('kura_search', { query: 'tags', mode: 'keyword' })).hits[0].snippet).toContain('Use &lt;mark&gt;highlight&lt;/mark&gt; <mark>tags</mark> on a page');
      expect(await call('kura_search', { query: 'tag:home' })).toMatchObject({ hits: [], note: expect.stringMatching(/no words to search for/) });
      expect(await call('kura_delete', { path: 'notes/wifi.md@1' })).toMatchObject({ deleted: false, note: expect.stringMatching(/names a version/) });
      const tagged = await client.callTool({ name: 'kura_tag', arguments: { ref: 'notes/wifi.md@1', add: ['old'] } });
      expect(tagged).toMatchObject({ isError: true, _meta: { code: 'INVALID_INPUT' } });
      expect((tagged.content as { text: string }[])[0]!.text).toMatch(/names a version: tags and metadata belong to the path/);
      const since = await client.callTool({ name: 'kura_search', arguments: { query: 'x', since: 'yesterday' } });
      expect(since).toMatchObject({ isError: true, _meta: { code: 'INVALID_INPUT' } });
      expect((since.content as { text: string }[])[0]!.text).toMatch(/^INVALID_INPUT: since: must be an ISO 8601 time/); // (it said "Invalid input")
    } finally {
      await client.close();
    }
  });

  it('holds to what an assistant is told: its own version among writers at once, no argument ignored, 16 MiB of text over stdio, snapshots to search', { timeout: 120_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-mcp-told-'));
    roots.push(root);
    const store = join(root, 'store');
    expect(spawnSync(process.execPath, [BIN, 'init', '--store', store]).status).toBe(0);
    const tree = join(root, 'proj');
    mkdirSync(tree);
    writeFileSync(join(tree, 'plan.md'), 'the heron migration plan\n');
    const snap = spawnSync(process.execPath, [BIN, 'snapshot', '--store', store, '--json', tree], { encoding: 'utf8' });
    expect(snap.status, snap.stderr).toBe(0);
    const snapshotId = JSON.parse(snap.stdout.trim().split('\n').at(-1)!).id as string;
    const client = new Client({ name: 'kura-test', version: '1.0.0' });
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--store', store], stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    await client.connect(transport);
    try {
      // Ten writers of one path at once: each answer names the version holding its own text
      // (all ten said "version 10").
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => client.callTool({ name: 'kura_add_text', arguments: { text: `v${i}`, path: 'race.txt' } }).then(json)));
      const versions = await client.callTool({ name: 'kura_versions', arguments: { path: 'race.txt' } }).then(json);
      const byVersion = new Map(versions.versions.map((v: { version: number; digest: string }) => [v.version, v.digest]));
      expect(new Set(answers.map((a) => a.version)).size).toBe(10);
      for (const a of answers) expect(byVersion.get(a.version)).toBe(a.digest);
      // The same text again makes no version, and says so.
      const again = json(await client.callTool({ name: 'kura_add_text', arguments: { text: 'v9', path: 'race.txt' } }));
      const latest = versions.versions.at(-1);
      expect(again).toMatchObject(latest.digest === again.digest ? { version: latest.version, unchanged: true } : { version: latest.version + 1 });
      // An argument a tool does not take is refused, naming the one meant (it was ignored:
      // version 2's text answered for `version: 1`).
      const slip = await client.callTool({ name: 'kura_get', arguments: { ref: 'race.txt', version: 1 } });
      expect(slip.isError).toBe(true);
      expect(JSON.stringify(slip.content)).toMatch(/version \(name a version in ref: path@N\)/);
      const tagged = await client.callTool({ name: 'kura_tag', arguments: { ref: 'race.txt', tags: ['urgent'] } });
      expect(JSON.stringify(tagged.content)).toMatch(/tags \(kura_tag takes add and remove\)/);
      expect(json(await client.callTool({ name: 'kura_get', arguments: { ref: 'race.txt' } })).tags).toBeUndefined();
      // What a client adds of its own accord (a leading _) is let through: refused, every call
      // of such a client failed.
      expect((await client.callTool({ name: 'kura_get', arguments: { ref: 'race.txt', _toolCallId: 'c-1' } })).isError).toBeFalsy();
      expect(JSON.stringify((await client.callTool({ name: 'kura_search', arguments: { query: 'v1', tags: ['x'] } })).content)).toMatch(/tags \(the argument is tag\)/);
      // Text with a lone surrogate is refused (it was stored as U+FFFD under a digest of bytes never sent).
      expect((await client.callTool({ name: 'kura_add_text', arguments: { text: 'lone \ud800 surrogate', path: 'odd.txt' } })).isError).toBe(true);
      // A path never stored has no versions: NOT_FOUND, as `kura versions` says.
      const none = await client.callTool({ name: 'kura_versions', arguments: { path: 'nope.md' } });
      expect(none).toMatchObject({ isError: true, _meta: { code: 'NOT_FOUND' } });
      // Times as milliseconds, as HTTP takes them; a second page of hits.
      expect(json(await client.callTool({ name: 'kura_search', arguments: { query: 'v1', since: String(Date.now() + 60_000), mode: 'keyword' } })).hits).toEqual([]);
      for (let i = 0; i < 4; i++) await client.callTool({ name: 'kura_add_text', arguments: { text: `the heron note ${i}`, path: `herons/${i}.md` } });
      const first = json(await client.callTool({ name: 'kura_search', arguments: { query: 'heron note', mode: 'keyword', prefix: 'herons/', limit: 2 } })).hits.map((h: { path: string }) => h.path);
      const second = json(await client.callTool({ name: 'kura_search', arguments: { query: 'heron note', mode: 'keyword', prefix: 'herons/', limit: 2, offset: 2 } })).hits.map((h: { path: string }) => h.path);
      expect([...first, ...second].sort()).toEqual(['herons/0.md', 'herons/1.md', 'herons/2.md', 'herons/3.md']);
      // Snapshots, listed; a snapshot's hit names it, and reads with it.
      const snapshots = json(await client.callTool({ name: 'kura_snapshots', arguments: {} })).snapshots;
      expect(snapshots).toEqual([expect.objectContaining({ id: snapshotId, files: 1 })]);
      const inSnapshot = json(await client.callTool({ name: 'kura_search', arguments: { query: 'heron migration', snapshot: snapshotId } })).hits;
      expect(inSnapshot[0]).toMatchObject({ path: 'plan.md', snapshot: snapshotId });
      const read = json(await client.callTool({ name: 'kura_get', arguments: { ref: inSnapshot[0].path, snapshot: inSnapshot[0].snapshot } }));
      expect(read.text).toBe('the heron migration plan\n');
      // 12 MB of text in one message (over the SDK's 10 MiB default, which ended the session
      // silently): stored, and the session goes on.
      const big = json(await client.callTool({ name: 'kura_add_text', arguments: { text: 'z'.repeat(12_000_000), path: 'huge/a.txt' } }));
      expect(big).toMatchObject({ path: 'huge/a.txt', size: 12_000_000, version: 1 });
      expect(json(await client.callTool({ name: 'kura_list', arguments: { prefix: 'huge/' } })).items).toEqual([expect.objectContaining({ path: 'huge/a.txt', version: 1, updatedAt: expect.any(String) })]);
      expect(stderr).toBe('');
    } finally {
      await client.close();
    }
  });
});
