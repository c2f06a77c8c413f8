/**
 * grep over the stored text (search/grep.ts, decision 0055): known answers on text files, a
 * PDF and a DOCX (their extracted text); line numbers, first matches, context across the
 * blocks a long document is read in, case folding, filters, -l, the limit; a hostile pattern
 * over 100 KB of `a` in linear time; a bad pattern refused; damage reported, not skipped.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LINE_MAX, type GrepEvent } from '../src/search/grep.js';
import { textAsUtf8 } from '../src/search/text.js';
import { makeDocx, makePdf } from './helpers/documents.js';
import { closeSync, openSync, readSync, readdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { newStore, recordsEnd, reopen } from './helpers/store.js';
import type { Store } from '../src/node/index.js';

const text = (t: string) => new TextEncoder().encode(t);

async function all(store: Store, pattern: string, options = {}): Promise<GrepEvent[]> {
  const out: GrepEvent[] = [];
  for await (const e of store.grep(pattern, options)) out.push(e);
  return out;
}

/** `path:line:text` for matches, `path-line-text` for context, as grep -n prints them. */
const lines = (events: GrepEvent[]) =>
  events.flatMap((e) => (e.type === 'match' ? [`${e.path}:${e.line}:${e.text}`] : e.type === 'context' ? [`${e.path}-${e.line}-${e.text}`] : []));

describe('grep', () => {
  it('finds matching lines in text, PDF and DOCX, with numbers, first matches and a summary', async () => {
    const { store } = await newStore();
    await store.put(text('alpha\nthe harbour at dawn\nbeta\r\nharbour again, harbour\n'), { path: 'notes/a.txt' });
    await store.put(text('nothing here\n'), { path: 'notes/b.txt' });
    await store.put(makePdf(['An invoice for the harbour crane.']), { path: 'docs/invoice.pdf', mediaType: 'application/pdf' });
    await store.put(await makeDocx(['Agenda', 'Harbour board meeting at noon.']), { path: 'docs/agenda.docx' });
    await store.put(new Uint8Array([0, 1, 2, ...text('harbour')]), { path: 'bin/blob' });
    const events = await all(store, 'harbou?r');
    expect(lines(events)).toEqual(['docs/invoice.pdf:1:An invoice for the harbour crane.', 'notes/a.txt:2:the harbour at dawn', 'notes/a.txt:4:harbour again, harbour']);
    const m = events.find((e) => e.type === 'match' && e.line === 4)!;
    expect(m).toMatchObject({ submatch: [0, 7], digest: expect.stringMatching(/^sha256:/) });
    expect(events.map((e) => e.type)).toEqual(['begin', 'match', 'end', 'begin', 'match', 'match', 'end', 'summary']);
    expect(events.at(-1)).toMatchObject({ type: 'summary', files: 5, filesMatched: 2, matches: 3, truncated: false });
    // Case folded (Unicode), the DOCX's paragraph found.
    expect(lines(await all(store, 'HARBOUR BOARD', { ignoreCase: true }))).toEqual(['docs/agenda.docx:3:Harbour board meeting at noon.']); // (mammoth: paragraphs apart by a blank line)
  });

  it('filters by prefixes, tag and type; -l stops a file at its first match; the limit ends the scan', async () => {
    const { store } = await newStore();
    await store.put(text('x1\nx2\n'), { path: 'a/one.md', mediaType: 'text/markdown', tags: ['keep'] });
    await store.put(text('x3\n'), { path: 'b/two.txt', mediaType: 'text/plain' });
    await store.put(text('x4\n'), { path: 'c/three.txt', mediaType: 'text/plain' });
    expect(lines(await all(store, 'x\\d', { prefixes: ['a/', 'c/'] }))).toEqual(['a/one.md:1:x1', 'a/one.md:2:x2', 'c/three.txt:1:x4']);
    expect(lines(await all(store, 'x', { tag: 'keep' }))).toEqual(['a/one.md:1:x1', 'a/one.md:2:x2']);
    expect(lines(await all(store, 'x', { type: 'plain' }))).toEqual(['b/two.txt:1:x3', 'c/three.txt:1:x4']);
    expect(lines(await all(store, 'x', { firstPerFile: true }))).toEqual(['a/one.md:1:x1', 'b/two.txt:1:x3', 'c/three.txt:1:x4']);
    const limited = await all(store, 'x', { limit: 2 });
    expect(lines(limited)).toEqual(['a/one.md:1:x1', 'a/one.md:2:x2']);
    expect(limited.at(-1)).toMatchObject({ type: 'summary', matches: 2, truncated: true });
    // An option grep does not know is refused, not ignored (`prefix` grepped everything: a trial).
    await expect(all(store, 'x', { prefix: ['a/'] } as never)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'prefix', message: expect.stringMatching(/no option "prefix"/) });
    await expect(all(store, 'x', { prefixes: 'a/' } as never)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'prefixes' });
  });

  it('count (-c) gives each file with a match its begin and its end with the count, no lines; the limit cuts inside a count', async () => {
    const { store } = await newStore();
    await store.put(text('x1\nx2\ny\nx3\n'), { path: 'a.txt' });
    await store.put(text('y\n'), { path: 'b.txt' });
    await store.put(text('x4\nx5\n'), { path: 'c.txt' });
    const counted = await all(store, 'x', { count: true });
    expect(counted.map((e) => (e.type === 'end' ? `${e.path}:${e.matches}` : e.type))).toEqual(['begin', 'a.txt:3', 'begin', 'c.txt:2', 'summary']);
    expect(counted.at(-1)).toMatchObject({ files: 3, filesMatched: 2, matches: 5, truncated: false });
    // (A second grep matches the texts kept from the first: the same answer.)
    expect(await all(store, 'x', { count: true })).toEqual(counted);
    const cut = await all(store, 'x', { count: true, limit: 4 });
    expect(cut.map((e) => (e.type === 'end' ? `${e.path}:${e.matches}` : e.type))).toEqual(['begin', 'a.txt:3', 'begin', 'c.txt:1', 'summary']);
    expect(cut.at(-1)).toMatchObject({ matches: 4, truncated: true });
    await expect(all(store, 'x', { count: true, context: 1 })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'context' });
    await expect(all(store, 'x', { count: 'yes' } as never)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'count' });
  });

  it('-w matches whole words only, as grep -w; through the worker threads too', async () => {
    const { store } = await newStore();
    await store.put(text('cat\ncatalog\nthe cat sat\nbobcat\nCAT\ncat-like\n'), { path: 'a.txt' });
    expect(lines(await all(store, 'cat', { word: true }))).toEqual(['a.txt:1:cat', 'a.txt:3:the cat sat', 'a.txt:6:cat-like']);
    expect(lines(await all(store, 'cat', { word: true, ignoreCase: true }))).toEqual(['a.txt:1:cat', 'a.txt:3:the cat sat', 'a.txt:5:CAT', 'a.txt:6:cat-like']);
    expect(lines(await all(store, 'cat|bob', { word: true }))).toEqual(['a.txt:1:cat', 'a.txt:3:the cat sat', 'a.txt:6:cat-like']); // (the whole alternation between boundaries)
    // A bad pattern's error is about what was typed.
    await expect(all(store, 'ca(t', { word: true })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.not.stringContaining('(?:') });
    // Over 8 MiB of text: the worker threads match the same words.
    for (let i = 0; i < 9; i++) await store.put(text(`${'catalog bobcat\n'.repeat(70_000)}the cat\n`), { path: `big/${i}.txt` });
    const big = await all(store, 'cat', { word: true, prefixes: ['big/'] });
    expect(big.at(-1)).toMatchObject({ type: 'summary', matches: 9 });
  });

  it('onlyMatching (-o) gives every match of each line, as a global RegExp finds them; PDF text too', async () => {
    const { store } = await newStore();
    const body = 'Call +1 555 0100 or +44 20 7946 0000.\nNo number here.\nemail a@x.org, b@y.net; 世界 a@z.io\n\n12 3456 7\n';
    await store.put(text(body), { path: 'a.txt' });
    await store.put(await makePdf(['Invoice 2026-001 and 2026-002 due']), { path: 'inv.pdf' });
    await store.indexStatus({ wait: true });
    const reference = (re: RegExp, t: string) =>
      t.split('\n').flatMap((line, i) => {
        const found = [...line.matchAll(re)].map((m) => m[0]).filter(Boolean);
        return found.length ? [{ line: i + 1, found }] : [];
      });
    for (const [pattern, re, o] of [
      ['\\d+', /\d+/g, {}],
      ['[a-z]+@[a-z]+\\.[a-z]+', /[a-z]+@[a-z]+\.[a-z]+/g, {}],
      ['X|ORG|世界', /x|org|世界/gi, { ignoreCase: true }],
      ['\\d*', /\d*/g, {}], // empty matches are left out, as grep -o leaves them
    ] as const) {
      const events = await all(store, pattern, { onlyMatching: true, prefixes: ['a.txt'], ...o });
      const got = events.flatMap((e) => (e.type === 'match' && e.matchedTexts?.length ? [{ line: e.line, found: e.matchedTexts }] : []));
      expect(got, pattern).toEqual(reference(re, body));
    }
    const pdf = await all(store, '2026-\\d+', { onlyMatching: true, prefixes: ['inv.pdf'] });
    expect(pdf.filter((e) => e.type === 'match').map((e) => (e as { matchedTexts: string[] }).matchedTexts)).toEqual([['2026-001', '2026-002']]);
    // Lines and counts stay lines; without the option no event carries the texts.
    expect(pdf.at(-1)).toMatchObject({ type: 'summary', matches: 1 });
    expect((await all(store, '\\d+')).some((e) => 'matchedTexts' in e)).toBe(false);
    // -w with it: whole words only.
    const words = await all(store, '\\d+', { onlyMatching: true, word: true, prefixes: ['a.txt'] });
    expect(words.flatMap((e) => (e.type === 'match' ? e.matchedTexts! : []))).toEqual(['1', '555', '0100', '44', '20', '7946', '0000', '12', '3456', '7']);
    await expect(all(store, 'x', { onlyMatching: 'yes' as unknown as boolean, only: true } as object)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it("a UTF-8 byte order mark is not text: ^ matches the first line after it, as ripgrep's (a trial)", async () => {
    const { store } = await newStore();
    await store.put(new Uint8Array([0xef, 0xbb, 0xbf, ...text('Étude de marché.\nÉtude deux\n')]), { path: 'bom.md' });
    expect(lines(await all(store, '^Étude', {}))).toEqual(['bom.md:1:Étude de marché.', 'bom.md:2:Étude deux']);
    const [m] = (await all(store, 'marché', {})).filter((e) => e.type === 'match');
    expect(m).toMatchObject({ text: 'Étude de marché.', submatch: [9, 15] });
  });

  it('counts lines as grep does: none after a final newline, the last one when it has none', async () => {
    const { store } = await newStore();
    const text = (s: string) => new TextEncoder().encode(s);
    await store.put(text('one\ntwo\n'), { path: 'a.txt', mediaType: 'text/plain' });
    await store.put(text('one\n\nthree'), { path: 'b.txt', mediaType: 'text/plain' });
    const lines = async (pattern: string) => (await all(store, pattern)).filter((e) => e.type === 'match').map((e) => `${e.path}:${(e as { line: number }).line}`);
    // (grep -c '' says 2 and 3; grep -n '^$' says b.txt:2 alone.)
    expect(await lines('')).toEqual(['a.txt:1', 'a.txt:2', 'b.txt:1', 'b.txt:2', 'b.txt:3']);
    expect(await lines('^$')).toEqual(['b.txt:2']);
    expect(await lines('$')).toHaveLength(5);
  });

  it('gives context lines around matches, across the blocks a large document is read in', async () => {
    const { store } = await newStore({ chunking: { avg: 1024 } });
    const body = Array.from({ length: 20_000 }, (_, i) => `line ${i + 1}${i + 1 === 7 || i + 1 === 9 || i + 1 === 15_000 ? ' needle' : ''}`).join('\n');
    await store.put(text(body), { path: 'big.txt' });
    const got = lines(await all(store, 'needle', { context: 2 }));
    expect(got).toEqual([
      'big.txt-5-line 5',
      'big.txt-6-line 6',
      'big.txt:7:line 7 needle',
      'big.txt-8-line 8',
      'big.txt:9:line 9 needle',
      'big.txt-10-line 10',
      'big.txt-11-line 11',
      'big.txt-14998-line 14998',
      'big.txt-14999-line 14999',
      'big.txt:15000:line 15000 needle',
      'big.txt-15001-line 15001',
      'big.txt-15002-line 15002',
    ]);
    // Line numbers hold at the end of a document read in many pieces.
    expect(lines(await all(store, '^line 20000$'))).toEqual(['big.txt:20000:line 20000']);
  });

  it('a document read as a stream (over 8 MiB) with lines of 1 to 6 MiB: each line once, as a line-by-line reference finds them', { timeout: 60_000 }, async () => {
    const { store } = await newStore();
    const M = 1 << 20;
    // A trial's file: a match at the end of a line of ~1 MiB, lines of 3 and 6 MiB.
    const body = `${'a'.repeat(M - 3)}HARBOUR${'b'.repeat(100)}\nsecond line harbour\n${'c'.repeat(3 * M)}\n${'x\n'.repeat(1000)}${'f'.repeat(6 * M)}\n`;
    await store.put(text(body), { path: 'huge.txt' });
    const reference = (pattern: RegExp) => body.split('\n').slice(0, -1).flatMap((line, i) => (pattern.test(line) ? [i + 1] : []));
    for (const [pattern, ignoreCase, re] of [['harbour', true, /harbour/i], ['c', false, /c/], ['aaaa|bbbb', false, /aaaa|bbbb/], ['f$', false, /f$/], ['^x$', false, /^x$/]] as const) {
      const events = await all(store, pattern, { ignoreCase });
      const got = events.flatMap((e) => (e.type === 'match' ? [e.line] : []));
      expect(got, pattern).toEqual(reference(re));
      expect(events.at(-1), pattern).toMatchObject({ type: 'summary', matches: got.length });
    }
  });

  it('a line longer than LINE_MAX is matched in pieces and counted once', { timeout: 60_000 }, async () => {
    const { store } = await newStore();
    const body = `${'needle '.repeat(((LINE_MAX / 7) | 0) + 50_000)}\nlast needle\n`;
    await store.put(text(body), { path: 'endless.txt' });
    const events = await all(store, 'needle');
    expect(events.flatMap((e) => (e.type === 'match' ? [e.line] : []))).toEqual([1, 2]);
  });

  it("a match's place in its line is the place of its text, whatever bytes come before it (property)", async () => {
    // ASCII, two-, three- and four-byte characters and bytes that are no UTF-8 (shown as
    // U+FFFD) before and after the word: the shown line's submatch is the word (a line of as
    // many units as bytes takes its byte offsets as they are: search/grep.ts shown).
    const piece = fc.oneof(
      fc.constantFrom('a', ' ', 'é', '€', '😀', 'ß'),
      fc.constantFrom([0x80], [0xff], [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98]).map((b) => new Uint8Array(b)),
    );
    const bytes = (ps: (string | Uint8Array)[]) => Buffer.concat(ps.map((p) => (typeof p === 'string' ? text(p) : p)));
    const { store } = await newStore();
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 12 }), fc.array(piece, { maxLength: 12 }), async (before, after) => {
        const line = Buffer.concat([bytes(before), text('needle'), bytes(after), text('\n')]);
        const { digest } = await store.put(line, { path: 'p.txt', mediaType: 'text/plain' });
        const [m] = (await all(store, 'needle')).filter((e) => e.type === 'match') as { text: string; submatch: [number, number]; digest: string }[];
        expect(m!.digest).toBe(digest);
        // (Bytes that are no UTF-8 in a text with no UTF-8 character are read as Windows-1252: text.ts.)
        const shown = new TextDecoder().decode(textAsUtf8(line)).slice(0, -1);
        expect(m!.text).toBe(shown);
        expect(m!.submatch).toEqual([shown.indexOf('needle'), shown.indexOf('needle') + 6]);
      }),
      { numRuns: 60 },
    );
  });

  it('a long line is shown around its match, the sides left out counted, never half a character', async () => {
    const { store } = await newStore();
    const lines = ['x'.repeat(10_000) + 'needle tail', 'needle ' + 'z'.repeat(10_000), 'a'.repeat(5_000) + ' needle ' + 'b'.repeat(5_000), '😀'.repeat(3_001) + ' needle ' + '😀'.repeat(3_001), 'a short needle line'];
    await store.put(text(lines.join('\n') + '\n'), { path: 'long.txt' });
    const matches = (await all(store, 'needle')).filter((e) => e.type === 'match') as { line: number; text: string; submatch: [number, number]; cut?: true; cutBefore?: number; cutAfter?: number }[];
    expect(matches.map((m) => m.line)).toEqual([1, 2, 3, 4, 5]);
    for (const m of matches) {
      const line = lines[m.line - 1]!;
      expect(m.text.slice(m.submatch[0], m.submatch[1]), `line ${m.line}`).toBe('needle');
      expect(m.text.isWellFormed(), `line ${m.line}`).toBe(true);
      // What is shown is the line's own text at the place the counts say.
      const before = m.cutBefore ?? 0;
      expect(line.slice(before, before + m.text.length), `line ${m.line}`).toBe(m.text);
      expect(before + m.text.length + (m.cutAfter ?? 0), `line ${m.line}`).toBe(line.length);
    }
    const sides = matches.map((m) => [m.cut ?? false, (m.cutBefore ?? 0) > 0, (m.cutAfter ?? 0) > 0]);
    expect(sides).toEqual([
      [true, true, false], // the match at the end: cut before it only
      [true, false, true], // at the start: cut after it only
      [true, true, true],
      [true, true, true],
      [false, false, false],
    ]);
  });

  it('runs a hostile pattern in linear time, and refuses a pattern that is not one', async () => {
    const { store } = await newStore();
    await store.put(text('a'.repeat(100_000)), { path: 'aaa.txt' });
    const started = performance.now();
    const events = await all(store, '(a+)+$');
    expect(events.filter((e) => e.type === 'match')).toHaveLength(1);
    expect((events.find((e) => e.type === 'match') as { cut?: true }).cut).toBe(true); // 100,000 characters: shown around the match
    expect(await all(store, '(a|aa)+b')).toEqual([{ type: 'summary', files: 1, filesMatched: 0, matches: 0, bytes: 100_000, truncated: false }]);
    expect(performance.now() - started).toBeLessThan(10_000); // milliseconds in practice; a backtracking engine takes years
    await expect(all(store, '(unclosed')).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/unclosed/) });
    await expect(all(store, 'a{1000}{1000}')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    // \p{…} classes are not built in: said, with what matches instead (\w is Unicode's).
    await expect(all(store, '\\p{Han}')).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/classes are not built in: \\w matches letters of every script/) });
    await expect(all(store, 'x', { context: 101 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('reports a damaged document as an error event and goes on', async () => {
    const { store, dir } = await newStore({ chunking: { avg: 1024 } });
    await store.put(text(Array.from({ length: 2000 }, (_, i) => `row ${i} target`).join('\n')), { path: 'a.txt' });
    await store.close();
    const root = join(dir, 'packs');
    const [pack] = readdirSync(root).flatMap((sub) => readdirSync(join(root, sub)).map((f) => join(root, sub, f)));
    const fd = openSync(pack!, 'r+');
    const at = recordsEnd(pack!) - 10;
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, at);
    b[0]! ^= 0x40;
    writeSync(fd, b, 0, 1, at);
    closeSync(fd);
    const s2 = await reopen(dir);
    await s2.put(text('b target\n'), { path: 'b.txt' });
    const events = await all(s2, 'target');
    const error = events.find((e) => e.type === 'error');
    expect(error).toMatchObject({ path: 'a.txt', code: 'CORRUPT_DATA' });
    expect(lines(events)).toContain('b.txt:1:b target');
    // What came before the damage was true text; nothing after it is returned as good.
    expect(events.filter((e) => e.type === 'match' && e.path === 'a.txt').length).toBeLessThan(2000);
  });
});
