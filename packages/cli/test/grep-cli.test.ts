/**
 * `kura grep` as people use it (a real process on a real store): grep -r's output shapes
 * (-n, -l, -c, -C with `--` between groups), -i, prefixes and --tag, PDFs by their text, the
 * JSON events, and grep's exit codes (0 a match, 1 none, 2 a pattern that is not one).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { makePdf } from '../../store/test/helpers/documents.js';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const roots: string[] = [];
afterAll(() => roots.splice(0).forEach((r) => rmSync(r, { recursive: true, force: true })));

function kura(args: string[], cwd?: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], { maxBuffer: 64 << 20, cwd });
  return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

describe('kura grep', () => {
  it('prints matching lines as grep -r does, with its options and exit codes', () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-grep-cli-'));
    roots.push(root);
    const store = join(root, 'store');
    mkdirSync(join(root, 'tree', 'src'), { recursive: true });
    writeFileSync(join(root, 'tree', 'src', 'main.ts'), 'import x from "y";\nfunction parseQuery() {}\n// TODO: parseQuery edge cases\nexport {};\n');
    writeFileSync(join(root, 'tree', 'notes.md'), 'one\ntwo\nthree PARSEQUERY\nfour\nfive\nsix\nseven\neight parsequery\n');
    writeFileSync(join(root, 'tree', 'report.pdf'), makePdf(['The parseQuery report.']));
    expect(kura(['init', '--store', store]).code).toBe(0);
    expect(kura(['add', '--store', store, '--tag', 'code', 'tree/src'], root).code).toBe(0);
    expect(kura(['add', '--store', store, 'tree/notes.md', 'tree/report.pdf'], root).code).toBe(0);

    const plain = kura(['grep', '--store', store, '-n', 'parseQuery']);
    expect(plain).toMatchObject({ code: 0, stderr: '' });
    expect(plain.stdout).toBe('tree/report.pdf:1:The parseQuery report.\ntree/src/main.ts:2:function parseQuery() {}\ntree/src/main.ts:3:// TODO: parseQuery edge cases\n');
    expect(kura(['grep', '--store', store, '-i', '-l', 'parsequery']).stdout).toBe('tree/notes.md\ntree/report.pdf\ntree/src/main.ts\n');
    expect(kura(['grep', '--store', store, '-i', '-c', 'parsequery']).stdout).toBe('tree/notes.md:2\ntree/report.pdf:1\ntree/src/main.ts:2\n');
    // -w: whole words (`parse` is inside parseQuery everywhere: no line).
    expect(kura(['grep', '--store', store, '-w', '-c', 'parse']).code).toBe(1);
    expect(kura(['grep', '--store', store, '-w', '-i', '-c', 'parsequery']).stdout).toBe('tree/notes.md:2\ntree/report.pdf:1\ntree/src/main.ts:2\n');
    expect(kura(['grep', '--store', store, '-i', '-n', '-C', '1', 'parsequery', 'tree/notes.md']).stdout).toBe(
      'tree/notes.md-2-two\ntree/notes.md:3:three PARSEQUERY\ntree/notes.md-4-four\n--\ntree/notes.md-7-seven\ntree/notes.md:8:eight parsequery\n',
    );
    expect(kura(['grep', '--store', store, '--tag', 'code', '^export']).stdout).toBe('tree/src/main.ts:export {};\n');
    // -o: each match alone, every match of a line; -c and -l keep counting lines and paths.
    expect(kura(['grep', '--store', store, '-o', '-n', '-i', 'parse\\w+|\\bt\\w+', 'tree/notes.md']).stdout).toBe(
      'tree/notes.md:2:two\ntree/notes.md:3:three\ntree/notes.md:3:PARSEQUERY\ntree/notes.md:8:parsequery\n',
    );
    expect(kura(['grep', '--store', store, '-o', '-C', '2', '\\bx\\b|"y"', 'tree/src']).stdout).toBe('tree/src/main.ts:x\ntree/src/main.ts:"y"\n'); // (no context lines)
    expect(kura(['grep', '--store', store, '-o', '-c', '-i', 'parse|query', 'tree/notes.md']).stdout).toBe('tree/notes.md:2\n');
    const only = kura(['grep', '--store', store, '--json', '-o', 'parse|Query', 'tree/src']).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(only.filter((e) => e.type === 'match').map((e) => e.matchedTexts)).toEqual([['parse', 'Query'], ['parse', 'Query']]);
    // Prefixes read as add reads paths: `./tree/src` is `tree/src` (it found nothing: a trial).
    expect(kura(['grep', '--store', store, '-l', '-i', 'parsequery', './tree/src/']).stdout).toBe('tree/src/main.ts\n');
    expect(kura(['ls', '--store', store, '--prefix', './tree/src']).stdout).toContain('tree/src/main.ts');
    const json = kura(['grep', '--store', store, '--json', 'function']).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(json.map((e) => e.type)).toEqual(['begin', 'match', 'end', 'summary']);
    expect(json[1]).toMatchObject({ path: 'tree/src/main.ts', line: 2, submatch: [0, 8] });
    expect(kura(['grep', '--store', store, 'no such words'])).toMatchObject({ code: 1, stdout: '' });
    // A prefix no stored path begins with is said, as grep -r names a missing directory (it was silent: a trial).
    expect(kura(['grep', '--store', store, 'TODO', 'src/'])).toEqual({ code: 2, stdout: '', stderr: 'kura: src/: no stored path begins with it (kura ls lists what is stored)\n' });
    expect(kura(['grep', '--store', store, 'no such words', 'src/', 'tree/'])).toMatchObject({ code: 1, stderr: 'kura: src/: no stored path begins with it (kura ls lists what is stored)\n' });
    const bad = kura(['grep', '--store', store, '(unclosed']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^kura: not a usable pattern: .*unclosed.*\[INVALID_INPUT\]\n$/);

    // A long line is marked on the side it was cut: before a match at its end, after one at its start.
    writeFileSync(join(root, 'tree', 'long.txt'), `${'x'.repeat(5_000)} parseQuery\nparseQuery ${'y'.repeat(5_000)}\n`);
    expect(kura(['add', '--store', store, 'tree/long.txt'], root).code).toBe(0);
    const long = kura(['grep', '--store', store, 'parseQuery', 'tree/long.txt']).stdout.split('\n');
    expect(long[0]).toMatch(/^tree\/long\.txt:\[…\] x+ parseQuery$/);
    expect(long[1]).toMatch(/^tree\/long\.txt:parseQuery y+ \[…\]$/);

    // Search through versions: a word only the first version of a path has.
    writeFileSync(join(root, 'tree', 'notes.md'), 'the platypus is gone\n');
    expect(kura(['add', '--store', store, 'tree/notes.md'], root).code).toBe(0);
    expect(kura(['search', '--store', store, '--mode', 'keyword', 'PARSEQUERY']).stdout).not.toContain('tree/notes.md');
    const history = kura(['search', '--store', store, '--all-versions', 'PARSEQUERY']);
    expect(history.stdout).toMatch(/^sha256:[0-9a-f]{64} {2}tree\/notes\.md@1$/m);
    expect(kura(['grep', '--store', store, 'PARSEQUERY'])).toMatchObject({ code: 1 }); // grep reads the latest versions
  });
  it('names stored paths and folders as rg takes paths (doc/gpg is not doc/gpg-agent; a file is not its .Debian); -F matches text (a trial)', () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-grep-paths-'));
    roots.push(root);
    const store = join(root, 'store');
    const files: Record<string, string> = {
      'doc/gpg/README': 'GnuPG here\n',
      'doc/gpg-agent/README': 'GnuPG agent\n',
      'doc/ed/changelog': 'GnuPG? no: a.b(c) and more\n',
      'doc/ed/changelog.Debian': 'GnuPG in Debian\n',
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    expect(kura(['init', '--store', store]).code).toBe(0);
    expect(kura(['add', '--store', store, 'doc'], root).code).toBe(0);
    expect(kura(['grep', '--store', store, '-l', 'GnuPG', 'doc/gpg']).stdout).toBe('doc/gpg/README\n');
    expect(kura(['grep', '--store', store, '-l', 'GnuPG', 'doc/ed/changelog']).stdout).toBe('doc/ed/changelog\n');
    expect(kura(['grep', '--store', store, '-l', 'GnuPG', 'doc/ed/change']).stdout).toBe('doc/ed/changelog\ndoc/ed/changelog.Debian\n'); // (no such path or folder: a prefix)
    expect(kura(['grep', '--store', store, '-l', 'GnuPG', 'doc/gpg', 'doc/ed/changelog']).stdout).toBe('doc/ed/changelog\ndoc/gpg/README\n');
    // -F: the pattern is text.
    expect(kura(['grep', '--store', store, '-F', 'a.b(c)']).stdout).toBe('doc/ed/changelog:GnuPG? no: a.b(c) and more\n');
    expect(kura(['grep', '--store', store, '-F', '-c', '.']).stdout).toBe('doc/ed/changelog:1\n');
    expect(kura(['grep', '--store', store, '-F', 'a.b(c']).code).toBe(0);
    expect(kura(['grep', '--store', store, 'a.b(c']).code).toBe(2); // (as a regular expression: an unclosed group)
  });
});
