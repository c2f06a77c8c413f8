/**
 * grep never matches across a line end (decision 0055, amendment of 2026-12-01), as ripgrep and
 * grep: a user's trial found `meeting\s+The` reporting `# Harbour master meeting` (its `\s+`
 * took the line end), `-c '[^x]+'` counting an empty line, and `Harbour[^z]*berth` matching
 * from line 1 to line 4. A pattern that names a line break (`\n`) is refused, as ripgrep
 * refuses it without -U. The known answers are ripgrep 13's; when `rg` is on PATH, a wider set
 * of patterns is compared with it line for line.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GrepEvent } from '../src/search/grep.js';
import type { Store } from '../src/node/index.js';
import { newStore } from './helpers/store.js';

const utf8 = new TextEncoder();
const TRIAL = '# Harbour master meeting\n\nThe ferry leaves at noon.\nTODO: email about berth 12.\n';

async function all(store: Store, pattern: string, options = {}): Promise<GrepEvent[]> {
  const out: GrepEvent[] = [];
  for await (const e of store.grep(pattern, options)) out.push(e);
  return out;
}

/** The matching lines' numbers (grep -n), checked against the summary's count (grep -c). */
async function lineNumbers(store: Store, pattern: string, ignoreCase = false): Promise<number[]> {
  const events = await all(store, pattern, { ignoreCase });
  const got = events.flatMap((e) => (e.type === 'match' ? [e.line] : []));
  expect(events.at(-1), pattern).toMatchObject({ type: 'summary', matches: got.length });
  return got;
}

/** ripgrep's line numbers for the pattern over `file`, or 'refused' (exit 2); undefined without rg. */
function rg(pattern: string, file: string, ignoreCase = false): number[] | 'refused' | undefined {
  const r = spawnSync('rg', ['--no-config', '-n', '--no-heading', '--no-filename', '--color', 'never', ...(ignoreCase ? ['-i'] : []), '-e', pattern, file], { encoding: 'utf8' });
  if (r.error) return undefined;
  if (r.status === 2) return 'refused';
  return r.stdout.split('\n').filter(Boolean).map((l) => Number(l.slice(0, l.indexOf(':'))));
}
const hasRg = !spawnSync('rg', ['--version']).error;

describe('grep and line ends', () => {
  it("the trial's patterns: no match across a line end, ripgrep's counts", async () => {
    const { store } = await newStore();
    await store.put(utf8.encode(TRIAL), { path: 'notes/h.md' });
    // ripgrep: no match, 3 (the empty line 2 is not one), no match.
    expect(await lineNumbers(store, 'meeting\\s+The')).toEqual([]);
    expect(await lineNumbers(store, '[^x]+')).toEqual([1, 3, 4]);
    expect(await lineNumbers(store, 'Harbour[^z]*berth')).toEqual([]);
    // Each match is its line's own.
    const matches = (await all(store, '[^x]+')).filter((e) => e.type === 'match') as { text: string; submatch: [number, number] }[];
    expect(matches.map((m) => [m.text, m.submatch])).toEqual([
      ['# Harbour master meeting', [0, 24]],
      ['The ferry leaves at noon.', [0, 25]],
      ['TODO: email about berth 12.', [0, 27]],
    ]);
    // Within a line the same classes still match; `.` under `s` and `\W` stop at line ends too.
    expect(await lineNumbers(store, 'ferry\\s+leaves')).toEqual([3]);
    expect(await lineNumbers(store, '(?s)meeting.+The')).toEqual([]);
    expect(await lineNumbers(store, 'noon\\.\\W*TODO')).toEqual([]);
    expect(await lineNumbers(store, 'MEETING\\s+the', true)).toEqual([]);
    // CRLF line ends, and a document read as a stream of blocks (over 8 MiB).
    await store.put(utf8.encode(TRIAL.replaceAll('\n', '\r\n')), { path: 'notes/crlf.md' });
    const events = await all(store, 'meeting\\s+The', { prefixes: ['notes/crlf'] });
    expect(events.filter((e) => e.type === 'match')).toEqual([]);
    expect((await all(store, '[^x]+$', { prefixes: ['notes/crlf'] })).flatMap((e) => (e.type === 'match' ? [`${e.line}:${e.text}`] : []))).toEqual(['1:# Harbour master meeting', '3:The ferry leaves at noon.', '4:TODO: email about berth 12.']);
    const big = TRIAL.repeat(120_000); // 9.6 MB
    await store.put(utf8.encode(big), { path: 'big/h.md' });
    expect(await lineNumbers(store, 'meeting\\s+The')).toEqual([]);
    const events2 = await all(store, 'noon\\.\\s+TODO|^$', { prefixes: ['big/'] });
    expect(events2.at(-1)).toMatchObject({ type: 'summary', matches: 120_000 }); // the empty lines alone
  }, 60_000);

  it('a pattern naming a line break is INVALID_INPUT, as ripgrep refuses it; a class holding one loses it', async () => {
    const { store } = await newStore();
    await store.put(utf8.encode(TRIAL), { path: 'notes/h.md' });
    for (const p of ['\\n', 'meeting\\nThe', 'meeting\n', '\\x0A', '\\u{a}', '[\\n]', 'noon\\.\\n?']) {
      await expect(all(store, p), p).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'pattern', message: expect.stringMatching(/line break \(\\n\) is not allowed/) });
    }
    // Not a pattern at all: said so first.
    await expect(all(store, '\\n(')).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/unclosed group/) });
    // ripgrep takes `\n` out of a class that holds more: `[a\n]` is `[a]`.
    expect(await lineNumbers(store, 'berth[ \\n]+1')).toEqual([4]);
    expect(await lineNumbers(store, 'meeting[ \\n]+The')).toEqual([]);
  });

  it.skipIf(!hasRg)('finds the lines ripgrep finds, and refuses what it refuses', async () => {
    const text = `${TRIAL}   \nx\nmeeting\nThe end\n\tαβγ meeting \nabc\t\n`;
    const dir = mkdtempSync(join(tmpdir(), 'kura-grep-rg-'));
    const file = join(dir, 'h.md');
    writeFileSync(file, text);
    const { store } = await newStore();
    await store.put(utf8.encode(text), { path: 'notes/h.md' });
    const patterns: [string, boolean][] = [
      ['meeting\\s+The', false],
      ['[^x]+', false],
      ['Harbour[^z]*berth', false],
      ['meeting\\W+The', false],
      ['(?s)meeting.+The', false],
      ['(?s).', false],
      ['meeting[[:space:]]*$', false],
      ['[[:space:]]+', false],
      ['^\\s*$', false],
      ['\\S+\\s+\\S+', false],
      ['noon\\.\\s*TODO', false],
      ['[^a-z]+', false],
      ['\\D{3,}', false],
      ['x\\s*meeting', false],
      ['g\\s', false],
      ['(?x) meeting \\s+ The', false],
      ['[a\\n]b', false],
      ['(?s:g.)$', false],
      ['\\s$', false],
      ['[\\s\\S]{30,}', false],
      ['\\n', false],
      ['a\\nb', false],
      ['[\\n]', false],
      ['\\x0A', false],
      ['MEETING\\s+the', true],
      ['t[^a]+E', true],
    ];
    for (const [pattern, ignoreCase] of patterns) {
      const expected = rg(pattern, file, ignoreCase)!;
      const got = await lineNumbers(store, pattern, ignoreCase).catch((e: { code?: string }) => (e.code === 'INVALID_INPUT' ? ('refused' as const) : Promise.reject(e)));
      expect(got, `${ignoreCase ? '-i ' : ''}${pattern}`).toEqual(expected);
    }
  });
});
