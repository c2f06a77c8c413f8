/**
 * A file whose name is not UTF-8 (Linux allows any bytes but / and NUL): `kura add DIR` and
 * `kura snapshot DIR` say what is wrong and what to do, store the rest, and exit 1. Before,
 * add read the name as text, got U+FFFD in place of the byte and reported "no such file or
 * directory" for a file that exists.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'kura-names-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function kura(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, '--store', join(root, 'store'), ...args], { cwd: root, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('file names that are not UTF-8', () => {
  mkdirSync(join(root, 'd'));
  writeFileSync(join(root, 'd', 'good.txt'), 'good');
  writeFileSync(Buffer.concat([Buffer.from(join(root, 'd', 'bad')), Buffer.from([0xff]), Buffer.from('.txt')]), 'bad name');
  const said = /d\/bad\\xff\.txt: the file name is not valid UTF-8, and Kura stores paths as UTF-8 text: rename it \(e\.g\. with convmv\) to store it/;

  it('kura add names the file, says why, adds the rest and exits 1', () => {
    expect(kura(['init']).code).toBe(0);
    const r = kura(['add', 'd']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(said);
    expect(r.stderr).not.toMatch(/no such file/);
    expect(r.stdout).toMatch(/ d\/good\.txt /);
    expect(kura(['get', 'd/good.txt']).stdout).toBe('good');
  });

  it('kura snapshot leaves it out of the tree, says so, records the rest and exits 4 (recorded, something left out; it was 1, as a failure)', () => {
    const r = kura(['snapshot', '--json', 'd']);
    expect(r.code).toBe(4);
    const s = JSON.parse(r.stdout);
    expect(s).toMatchObject({ files: 1, notUtf8: [join(root, 'd', 'bad\\xff.txt')] });
    const human = kura(['snapshot', 'd']);
    expect(human.code).toBe(4);
    expect(human.stderr).toContain(`kura: left out ${join(root, 'd', 'bad\\xff.txt')}: the file name is not valid UTF-8`);
  });
});

describe('names that would act on a terminal', () => {
  // A tree from elsewhere (a download, an archive) may name a file with an escape sequence or a
  // newline: shown raw, the first recolours or rewrites the user's terminal and the second
  // breaks every line-based reader of the output.
  const store = join(root, 'store-esc');
  const dir = join(root, 'e');
  const name = 'evil\x1b[31mRED\nline2\u202etxt.exe';
  const shown = '"e/evil\\u001b[31mRED\\nline2\\u202etxt.exe"';
  mkdirSync(dir);
  writeFileSync(join(dir, name), 'the harbour\n');
  writeFileSync(join(dir, 'plain.txt'), 'the harbour\n');
  const run = (args: string[]) => {
    const r = spawnSync(process.execPath, [BIN, '--store', store, ...args], { cwd: root, encoding: 'utf8' });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it('human output quotes them with escapes; --json keeps them whole; plain names as they are', () => {
    expect(run(['init']).code).toBe(0);
    const added = run(['add', 'e']);
    expect(added.code).toBe(0);
    for (const [what, out] of [
      ['add', added.stdout],
      ['ls', run(['ls']).stdout],
      ['grep', run(['grep', 'harbour']).stdout],
      ['grep -l', run(['grep', '-l', 'harbour']).stdout],
      ['search', run(['search', 'harbour']).stdout],
    ] as const) {
      expect(out, what).not.toMatch(/[\x1b\u202e]/);
      expect(out, what).toContain(shown);
      expect(out, what).toMatch(/(^|\s)e\/plain\.txt[\s:]/);
    }
    expect(run(['grep', '-l', 'harbour']).stdout.split('\n').filter(Boolean)).toHaveLength(2); // a line each
    const json = run(['ls', '--json']).stdout.trim().split('\n').map((l) => JSON.parse(l).path);
    expect(json).toContain(`e/${name}`);
    const snap = JSON.parse(run(['snapshot', '--json', 'e']).stdout).id;
    writeFileSync(join(dir, name), 'changed\n');
    const snap2 = JSON.parse(run(['snapshot', '--json', 'e']).stdout).id;
    expect(run(['diff', snap, snap2]).stdout).toContain(`~ ${shown.replace('e/', '')}  content`);
  });
});
