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

  it('kura snapshot leaves it out of the tree, says so, records the rest and exits 1', () => {
    const r = kura(['snapshot', '--json', 'd']);
    expect(r.code).toBe(1);
    const s = JSON.parse(r.stdout);
    expect(s).toMatchObject({ files: 1, notUtf8: [join(root, 'd', 'bad\\xff.txt')] });
    const human = kura(['snapshot', 'd']);
    expect(human.code).toBe(1);
    expect(human.stderr).toContain(`kura: left out ${join(root, 'd', 'bad\\xff.txt')}: the file name is not valid UTF-8`);
  });
});
