/**
 * `kura snapshot` of a tree holding a file and a directory it may not read (decision 0024,
 * amended): run as the user nobody (root reads everything), the snapshot of the rest is
 * recorded, each entry left out is named on stderr, the directory is recorded empty and the
 * exit code is 4 — where one mode-000 file failed the whole snapshot (a backup trial). Enough
 * files that the ingest workers read them, the unreadable one among them; a tree ~1,900
 * directories deep is snapshotted and restored (its commit overflowed the stack); verify names
 * a damaged file only a snapshot keeps by its path there, and ls --snapshot lists its entries.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const NOBODY = 65534;
const canDrop = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0;
const roots: string[] = [];
// rm(1) walks a tree without recursion; Node's rmSync recurses and overflows its stack on the 1,900-deep tree.
afterAll(() => roots.splice(0).forEach((r) => spawnSync('rm', ['-rf', r])));

const asNobody = (args: string[]) => spawnSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, BIN, ...args], { encoding: 'utf8' });
const kura = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });

describe('kura snapshot', () => {
  it.skipIf(!canDrop)('leaves out what it may not read, names it, records the rest and exits 4', { timeout: 120_000 }, () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-unreadable-'));
    roots.push(root);
    chmodSync(root, 0o755);
    const tree = join(root, 't');
    mkdirSync(join(tree, 'many'), { recursive: true });
    mkdirSync(join(tree, 'locked'));
    writeFileSync(join(tree, 'locked', 'secret.txt'), 'secret\n');
    writeFileSync(join(tree, 'a.txt'), 'a\n');
    for (let i = 0; i < 300; i++) writeFileSync(join(tree, 'many', `f${i}.txt`), `file ${i}\n`);
    spawnSync('chown', ['-R', String(NOBODY), root]);
    chmodSync(join(tree, 'many', 'f7.txt'), 0o000);
    chmodSync(join(tree, 'locked'), 0o000);
    const store = join(root, 'store');
    expect(asNobody(['init', '--store', store]).status).toBe(0);
    const r = asNobody(['snapshot', '--store', store, tree]);
    expect([r.status, r.stderr]).toEqual([4, `kura: left out ${join(tree, 'locked')}: permission denied\nkura: left out ${join(tree, 'many', 'f7.txt')}: permission denied\n`]);
    expect(r.stdout).toMatch(/^snapshot [0-9a-f]{12}: 300 files/);
    const json = JSON.parse(asNobody(['snapshot', '--store', store, '--json', tree]).stdout);
    expect(json).toMatchObject({ files: 300, unreadable: [join(tree, 'locked'), join(tree, 'many', 'f7.txt')] });
    // What was read restores; the locked directory comes back empty, the unreadable file not at all.
    const out = join(root, 'out');
    expect(kura(['restore', '--store', store, json.id, out]).status).toBe(0);
    expect(readdirSync(join(out, 'many'))).toHaveLength(299);
    expect(readdirSync(join(out, 'locked'))).toEqual([]);
    expect(readFileSync(join(out, 'a.txt'), 'utf8')).toBe('a\n');
  });

  it('verify names a damaged document only a snapshot keeps by its path there (it gave the digest alone)', { timeout: 120_000 }, () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-verify-snap-'));
    roots.push(root);
    mkdirSync(join(root, 't', 'docs'), { recursive: true });
    writeFileSync(join(root, 't', 'one.txt'), 'one\n');
    writeFileSync(join(root, 't', 'docs', 'two.bin'), randomBytes(200_000));
    const store = join(root, 's');
    expect(kura(['init', '--store', store]).status).toBe(0);
    const { id } = JSON.parse(kura(['snapshot', '--store', store, '--json', join(root, 't')]).stdout);
    // ls --snapshot lists its entries (restic ls), under --prefix too.
    const listed = kura(['ls', '--store', store, '--snapshot', id.slice(0, 6)]);
    expect(listed.stdout.split('\n').filter(Boolean).map((l) => l.split(/\s+/).at(-1))).toEqual(['docs/', 'docs/two.bin', 'one.txt']);
    expect(listed.stdout).toMatch(/^d0755 {2}/);
    expect(JSON.parse(kura(['ls', '--store', store, '--snapshot', id, '--prefix', 'docs/', '--json']).stdout.trim().split('\n').at(-1)!)).toMatchObject({ path: 'docs/two.bin', entry: { type: 'file', size: 200_000 } });
    expect(kura(['ls', '--store', store, '--snapshot', id, '--tag', 'x']).status).toBe(2);
    // two.bin was read last: its last chunk ends the pack, before the index its seal wrote.
    const packs = readdirSync(join(store, 'packs'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.pack')).map((f) => join(store, 'packs', f));
    const pack = packs.sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
    const bytes = readFileSync(pack);
    const end = bytes.toString('latin1', bytes.length - 4) === 'KEND' ? bytes.length - bytes.readUInt32LE(bytes.length - 8) : bytes.length;
    bytes[end - 10] = bytes[end - 10]! ^ 0x01;
    writeFileSync(pack, bytes);
    const r = kura(['verify', '--store', store]);
    expect(r.status).toBe(3);
    expect(r.stdout).toMatch(new RegExp(`  breaks sha256:[0-9a-f]{64}  docs/two\\.bin \\(snapshot ${id.slice(0, 12)}\\)\n`));
  });

  it('records and restores a tree 1,900 directories deep (its commit overflowed the stack)', { timeout: 120_000 }, () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-deep-'));
    roots.push(root);
    const deep = join('t', ...Array(1900).fill('d'));
    mkdirSync(join(root, deep), { recursive: true });
    writeFileSync(join(root, deep, 'z'), 'z\n');
    const store = join(root, 's');
    expect(kura(['init', '--store', store]).status).toBe(0);
    const r = kura(['snapshot', '--store', store, '--json', join(root, 't')]);
    expect([r.status, r.stderr]).toEqual([0, '']);
    const { id } = JSON.parse(r.stdout);
    expect(kura(['restore', '--store', store, id, join(root, 'out')]).status).toBe(0);
    expect(existsSync(join(root, 'out', ...Array(1900).fill('d'), 'z'))).toBe(true);
  });
});
