import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));

function kura(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { maxBuffer: 64 << 20 });
  return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

const root = mkdtempSync(join(tmpdir(), 'kura-snapshot-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('kura snapshot, snapshots, diff, restore, rm-snapshot', () => {
  it('records, lists, diffs, restores and deletes snapshots with scriptable output and exit codes', () => {
    const store = join(root, 'store');
    const tree = join(root, 'tree');
    mkdirSync(join(tree, 'src', 'empty'), { recursive: true });
    writeFileSync(join(tree, 'src', 'main.ts'), 'console.log(1);\n');
    writeFileSync(join(tree, 'notes.md'), '# notes\n');
    symlinkSync('src/main.ts', join(tree, 'entry'));
    expect(kura(['init', '--store', store]).code).toBe(0);

    const one = kura(['snapshot', '--store', store, '--label', 'before', tree]);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^snapshot [0-9a-f]{12}: 2 files, .* \(before\)\n$/);
    const first = one.stdout.slice('snapshot '.length, 'snapshot '.length + 12); // as printed: a prefix of the id
    writeFileSync(join(tree, 'src', 'main.ts'), 'console.log(2);\n');
    writeFileSync(join(tree, 'new.txt'), 'new\n');
    rmSync(join(tree, 'notes.md'));
    const two = JSON.parse(kura(['snapshot', '--store', store, '--json', tree]).stdout);
    expect(two).toMatchObject({ id: expect.stringMatching(/^[0-9a-f]{32}$/), files: 2, label: null, skipped: [] });
    expect(two.tree).toMatch(/^sha256:[0-9a-f]{64}$/);

    const list = kura(['snapshots', '--store', store, '--json']).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(list.map((s) => [s.id.slice(0, 12), s.label])).toEqual([
      [first, 'before'],
      [two.id.slice(0, 12), null],
    ]);
    const human = kura(['snapshots', '--store', store]).stdout.split('\n').filter(Boolean);
    expect(human[0]).toMatch(/ 2 files /);
    expect(human.map((l) => l.split(' ')[0])).toEqual([first, two.id.slice(0, 12)]);

    const diff = kura(['diff', '--store', store, first, two.id.slice(0, 6)]);
    expect(diff.code).toBe(0);
    expect(diff.stdout.split('\n').filter(Boolean).map((l) => l.split('  ')[0])).toEqual(['+ new.txt', '- notes.md', '~ src/main.ts']);
    const dj = JSON.parse(kura(['diff', '--store', store, '--json', list[0].id, two.id]).stdout);
    expect(dj.changed[0]).toMatchObject({ path: 'src/main.ts', a: { type: 'file' }, b: { type: 'file' } });

    // A file of a snapshot, by its path in it or by its digest — also one no path shows now
    // (notes.md was deleted before the second snapshot).
    expect(kura(['get', '--store', store, '--snapshot', first, 'notes.md']).stdout).toBe('# notes\n');
    expect(kura(['cat', '--store', store, '--snapshot', first, 'notes.md', 'src/main.ts']).stdout).toBe('# notes\nconsole.log(1);\n');
    const notes = `sha256:${createHash('sha256').update('# notes\n').digest('hex')}`;
    expect(kura(['get', '--store', store, notes])).toMatchObject({ code: 0, stdout: '# notes\n' });
    expect(kura(['get', '--store', store, '--snapshot', first, 'src/none.ts'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/holds no file src\/none.ts \[NOT_FOUND\]/) });
    expect(kura(['get', '--store', store, '--snapshot', first, 'src'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/is a directory, not a file/) });

    const out = join(root, 'out');
    const r = kura(['restore', '--store', store, first, out]);
    expect(r.code).toBe(0);
    expect(readFileSync(join(out, 'src', 'main.ts'), 'utf8')).toBe('console.log(1);\n');
    expect(readFileSync(join(out, 'notes.md'), 'utf8')).toBe('# notes\n');
    expect(readlinkSync(join(out, 'entry'))).toBe('src/main.ts');
    const again = kura(['restore', '--store', store, first, out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^kura: .*not empty.*pass --overwrite.*\[INVALID_INPUT\]\n$/);
    expect(kura(['restore', '--store', store, '--overwrite', two.id, out]).code).toBe(0);
    expect(readFileSync(join(out, 'src', 'main.ts'), 'utf8')).toBe('console.log(2);\n');

    const rm = kura(['rm-snapshot', '--store', store, '--json', first]);
    expect(rm.code).toBe(0);
    expect(JSON.parse(rm.stdout)).toMatchObject({ id: list[0].id });
    expect(JSON.parse(rm.stdout).freedByGc).toBeGreaterThan(0); // notes.md and the old main.ts
    expect(kura(['get', '--store', store, notes]).code).toBe(1); // kept by that snapshot alone: gone with it
    const gone = kura(['restore', '--store', store, first, join(root, 'out2')]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(new RegExp(`no snapshot ${first} \\[NOT_FOUND\\]`));
    expect(kura(['diff', '--store', store, first, 'x']).code).toBe(2);
    expect(kura(['restore', '--store', store, '1', join(root, 'out3')]).code).toBe(2); // not an id: too short
    expect(kura(['verify', '--store', store]).code).toBe(0);
  });

  it('a second snapshot does not read unchanged files, and says so; --reread reads them', async () => {
    const store = join(root, 'store-again');
    const tree = join(root, 'tree-again');
    mkdirSync(tree);
    for (let i = 0; i < 5; i++) writeFileSync(join(tree, `f${i}.txt`), `file ${i}\n`);
    expect(kura(['init', '--store', store]).code).toBe(0);
    await new Promise((r) => setTimeout(r, 2300)); // past RECENT_MS: stamps are trusted
    expect(JSON.parse(kura(['snapshot', '--store', store, '--json', tree]).stdout)).toMatchObject({ files: 5, reused: 0 });
    const again = kura(['snapshot', '--store', store, tree]);
    expect(again.stdout).toMatch(/^snapshot [0-9a-f]{12}: 5 files \(5 unchanged, not read\), /);
    expect(JSON.parse(kura(['snapshot', '--store', store, '--json', '--reread', tree]).stdout)).toMatchObject({ files: 5, reused: 0 });
  });

  it('--exclude leaves out names and paths (repeatable) and says how many; a pattern that names nothing is a usage error', () => {
    const store = join(root, 'store-exclude');
    const tree = join(root, 'tree-exclude');
    mkdirSync(join(tree, 'node_modules', 'dep'), { recursive: true });
    mkdirSync(join(tree, 'build'));
    writeFileSync(join(tree, 'node_modules', 'dep', 'index.js'), 'dep\n');
    writeFileSync(join(tree, 'build', 'app.js'), 'app\n');
    writeFileSync(join(tree, 'main.ts'), 'main\n');
    writeFileSync(join(tree, 'debug.log'), 'log\n');
    expect(kura(['init', '--store', store]).code).toBe(0);
    const r = kura(['snapshot', '--store', store, '--exclude', 'node_modules', '--exclude', '*.log', '--exclude', '/build', tree]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^snapshot [0-9a-f]{12}: 1 file \(3 excluded\), /);
    const out = join(root, 'out-exclude');
    expect(kura(['restore', '--store', store, r.stdout.split(/[ :]/)[1]!, out]).code).toBe(0);
    expect(readdirSync(out)).toEqual(['main.ts']);
    const bad = kura(['snapshot', '--store', store, '--exclude', '/', tree]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^kura: the exclude pattern "\/" names nothing in the tree \[INVALID_INPUT\]\n$/);
  });

  it('a link pointing outside the tree is restored as recorded, and said (one refused the whole restore)', () => {
    const store = join(root, 'store-links');
    const tree = join(root, 'tree-links');
    mkdirSync(tree);
    writeFileSync(join(tree, 'a.txt'), 'hello\n');
    symlinkSync('/usr/bin/env', join(tree, 'env'));
    symlinkSync('../../shared', join(tree, 'up'));
    expect(kura(['init', '--store', store]).code).toBe(0);
    const id = JSON.parse(kura(['snapshot', '--store', store, '--json', tree]).stdout).id;
    const out = join(root, 'out-links');
    const r = kura(['restore', '--store', store, id, out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('kura: note: 2 links point outside the restored tree, restored as recorded: env -> /usr/bin/env, up -> ../../shared\n');
    expect([readlinkSync(join(out, 'env')), readlinkSync(join(out, 'up')), readFileSync(join(out, 'a.txt'), 'utf8')]).toEqual(['/usr/bin/env', '../../shared', 'hello\n']);
  });

  it('diff says what changed at a path: content, mode, time, a link\'s target, the kind of entry', () => {
    const store = join(root, 'store-diff');
    const tree = join(root, 'tree-diff');
    mkdirSync(tree);
    writeFileSync(join(tree, 'same.txt'), 'same\n');
    writeFileSync(join(tree, 'grows.txt'), 'ab\n');
    writeFileSync(join(tree, 'becomes-dir'), 'x\n');
    symlinkSync('same.txt', join(tree, 'link'));
    utimesSync(join(tree, 'same.txt'), new Date('2020-01-01T00:00:00Z'), new Date('2020-01-01T00:00:00Z'));
    expect(kura(['init', '--store', store]).code).toBe(0);
    const a = JSON.parse(kura(['snapshot', '--store', store, '--json', tree]).stdout).id;
    chmodSync(join(tree, 'same.txt'), 0o600);
    utimesSync(join(tree, 'same.txt'), new Date('2021-06-01T00:00:00Z'), new Date('2021-06-01T00:00:00Z'));
    writeFileSync(join(tree, 'grows.txt'), 'abcd\n');
    rmSync(join(tree, 'link'));
    symlinkSync('grows.txt', join(tree, 'link'));
    rmSync(join(tree, 'becomes-dir'));
    mkdirSync(join(tree, 'becomes-dir'));
    const b = JSON.parse(kura(['snapshot', '--store', store, '--json', tree]).stdout).id;
    const lines = kura(['diff', '--store', store, a, b]).stdout.split('\n').filter(Boolean);
    const sha = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex').slice(0, 12)}`;
    expect(lines).toEqual([
      `~ becomes-dir  file 2 B 644 ${sha('x\n')} => dir 755`,
      expect.stringMatching(new RegExp(`^~ grows\\.txt  content 3 B ${sha('ab\n')} => 5 B ${sha('abcd\n')}, mtime \\S+ => \\S+$`)),
      '~ link  target "same.txt" => "grows.txt"',
      '~ same.txt  mode 644 => 600, mtime 2020-01-01T00:00:00.000Z => 2021-06-01T00:00:00.000Z',
    ]);
    // A file touched and nothing else: a change of its time alone (it was not listed at all).
    utimesSync(join(tree, 'grows.txt'), new Date('2022-02-02T00:00:00Z'), new Date('2022-02-02T00:00:00Z'));
    const c = JSON.parse(kura(['snapshot', '--store', store, '--json', tree]).stdout).id;
    expect(kura(['diff', '--store', store, b, c]).stdout).toMatch(/^~ grows\.txt  mtime \S+ => 2022-02-02T00:00:00\.000Z\n$/);
  });
});
