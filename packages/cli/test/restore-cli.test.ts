/**
 * `kura restore` and `kura snapshot` as a user's trial ran them: an empty DIR, a restore killed
 * with SIGKILL and run again, and — as a user other than root, where permissions bite — a
 * second `--overwrite` restore over directories without the x bit, and a read-only target.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'kura-rtrial-cli-'));
afterAll(() => {
  chmodAll(root);
  rmSync(root, { recursive: true, force: true });
});

/** Gives every directory below `dir` rwx for its owner (the tests leave 000 ones), so they can be removed. */
function chmodAll(dir: string): void {
  try {
    chmodSync(dir, 0o700);
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) chmodAll(join(dir, e.name));
  } catch {
    /* gone */
  }
}

const NOBODY = 65534;
/** Whether the tests can run the CLI as another user: root, with setpriv. */
const canDrop = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0;

function kura(args: string[], options: { cwd?: string; nobody?: boolean } = {}) {
  const [cmd, argv] = options.nobody ? ['setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, BIN, ...args]] : [process.execPath, [BIN, ...args]];
  const r = spawnSync(cmd as string, argv as string[], { maxBuffer: 64 << 20, ...(options.cwd ? { cwd: options.cwd } : {}) });
  return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

function snapshotId(store: string, dir: string): string {
  const r = kura(['snapshot', '--store', store, '--json', dir]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).id;
}

/** Every path below `dir`, `/`-separated. */
function paths(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).sort();
}

describe('kura restore, kura snapshot: what a trial found', () => {
  it('an empty DIR is a usage error (INVALID_INPUT, exit 2), not the current directory', () => {
    const store = join(root, 'store-empty-arg');
    const tree = join(root, 'tree-empty-arg');
    mkdirSync(tree);
    writeFileSync(join(tree, 'a.txt'), 'a\n');
    expect(kura(['init', '--store', store]).code).toBe(0);
    const id = snapshotId(store, tree);
    const cwd = join(root, 'cwd');
    mkdirSync(cwd);
    writeFileSync(join(cwd, 'mine.txt'), 'mine\n');
    for (const args of [['restore', id, ''], ['restore', '--overwrite', id, ''], ['snapshot', '']]) {
      const r = kura([...args, '--store', store], { cwd });
      expect(r, args.join(' ')).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^kura: the directory (to restore into|to snapshot) is "": give one \(\. for the current directory\) \[INVALID_INPUT\]\n$/);
    }
    expect(readdirSync(cwd)).toEqual(['mine.txt']);
    expect(kura(['snapshots', '--store', store]).stdout.trim().split('\n')).toHaveLength(1);
  });

  it('--include restores those paths at their places, and a path the snapshot lacks is NOT_FOUND (exit 1) with nothing written', () => {
    const store = join(root, 'store-include');
    const tree = join(root, 'tree-include');
    mkdirSync(join(tree, 'src', 'lib'), { recursive: true });
    mkdirSync(join(tree, 'docs'));
    writeFileSync(join(tree, 'src', 'lib', 'a.ts'), 'export const a = 1;\n');
    writeFileSync(join(tree, 'src', 'main.ts'), 'import { a } from "./lib/a";\n');
    writeFileSync(join(tree, 'docs', 'notes.md'), '# notes\n');
    writeFileSync(join(tree, 'README.md'), 'readme\n');
    expect(kura(['init', '--store', store]).code).toBe(0);
    const id = snapshotId(store, tree);
    const out = join(root, 'out-include');
    const r = kura(['restore', '--store', store, '--json', '--include', 'src/lib', '--include', 'README.md', id, out]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ files: 2, dirs: 2 });
    expect(paths(out)).toEqual(['README.md', 'src', 'src/lib', 'src/lib/a.ts']);
    expect(readFileSync(join(out, 'src', 'lib', 'a.ts'), 'utf8')).toBe('export const a = 1;\n');
    const missing = join(root, 'out-include-missing');
    const m = kura(['restore', '--store', store, '--include', 'src/nope.ts', id, missing]);
    expect(m).toMatchObject({ code: 1, stdout: '' });
    expect(m.stderr).toMatch(/holds nothing at src\/nope\.ts \[NOT_FOUND\]\n$/);
    expect(() => readdirSync(missing)).toThrow(/ENOENT/);
  });

  it('a restore killed with SIGKILL leaves its temporary file; a rerun with --overwrite removes it (it stayed for good)', async () => {
    const store = join(root, 'store-killed');
    const tree = join(root, 'tree-killed');
    mkdirSync(join(tree, 'sub'), { recursive: true });
    writeFileSync(join(tree, 'a.txt'), 'first\n');
    // Large and incompressible: the restore is still writing it when the signal comes.
    const fd = openSync(join(tree, 'sub', 'big.bin'), 'w');
    for (let i = 0; i < 128; i++) writeSync(fd, randomBytes(1 << 20));
    closeSync(fd);
    expect(kura(['init', '--store', store]).code).toBe(0);
    const id = snapshotId(store, tree);
    const target = join(root, 'restored-killed');
    const temp = () => {
      try {
        return readdirSync(join(target, 'sub')).some((n) => /^\.kura-restore-[0-9a-f]{12}$/.test(n));
      } catch {
        return false;
      }
    };
    const child = spawn(process.execPath, [BIN, 'restore', '--store', store, id, target], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_code, signal) => r(signal)));
    let done = false;
    void exited.then(() => (done = true));
    let killed = false;
    while (!done) {
      if (!killed && temp()) killed = child.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(killed, 'the restore ended before its temporary file was seen').toBe(true);
    expect(await exited).toBe('SIGKILL');
    expect(temp()).toBe(true); // (what SIGKILL leaves: nothing can remove it then)
    const again = kura(['restore', '--store', store, '--overwrite', id, target]);
    expect(again.code, again.stderr).toBe(0);
    expect(paths(target)).toEqual(['a.txt', 'sub', 'sub/big.bin']);
    expect(readFileSync(join(target, 'sub', 'big.bin')).equals(readFileSync(join(tree, 'sub', 'big.bin')))).toBe(true);
  }, 120_000);
});

describe.skipIf(!canDrop)('as a user other than root (setpriv)', () => {
  /** A store and a tree snapshotted as root, both then the other user's (as the trial had them). */
  function setup(name: string, make: (tree: string) => void): { store: string; id: string; home: string } {
    const home = join(root, name);
    mkdirSync(home);
    chownSync(home, NOBODY, NOBODY);
    chmodSync(root, 0o755);
    const store = join(home, 'store');
    expect(kura(['init', '--store', store], { nobody: true }).code).toBe(0);
    const tree = join(home, 'tree');
    mkdirSync(tree);
    make(tree);
    // (Snapshotted as root: its owner cannot read a directory of mode 400 to snapshot it.)
    const id = snapshotId(store, tree);
    spawnSync('chown', ['-R', `${NOBODY}:${NOBODY}`, store]);
    return { store, id, home };
  }

  it('restore --overwrite over directories of mode 400 and 000 its first restore made (EACCES on d/f)', () => {
    const { store, id, home } = setup('nobody-overwrite', (tree) => {
      mkdirSync(join(tree, 'd'));
      mkdirSync(join(tree, 'z'));
      writeFileSync(join(tree, 'd', 'f'), 'f\n');
      writeFileSync(join(tree, 'z', 'g'), 'g\n');
      writeFileSync(join(tree, 'top'), 'top\n');
      chmodSync(join(tree, 'd'), 0o400);
      chmodSync(join(tree, 'z'), 0o000);
    });
    const out = join(home, 'out');
    const first = kura(['restore', '--store', store, id, out], { nobody: true });
    expect(first.code, first.stderr).toBe(0);
    const second = kura(['restore', '--store', store, '--overwrite', id, out], { nobody: true });
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    expect([statSync(join(out, 'd')).mode & 0o7777, statSync(join(out, 'z')).mode & 0o7777]).toEqual([0o400, 0o000]);
    chmodAll(out);
    expect(paths(out)).toEqual(['d', 'd/f', 'top', 'z', 'z/g']);
  });

  it('an empty read-only target of its own is made writable while the restore writes, then gets its mode back', () => {
    const { store, id, home } = setup('nobody-readonly', (tree) => {
      writeFileSync(join(tree, 'a.txt'), 'a\n');
      mkdirSync(join(tree, 'd'));
      writeFileSync(join(tree, 'd', 'f'), 'f\n');
    });
    for (const mode of [0o555, 0o000]) {
      const out = join(home, `out-${mode.toString(8)}`);
      mkdirSync(out);
      chownSync(out, NOBODY, NOBODY);
      chmodSync(out, mode);
      const r = kura(['restore', '--store', store, id, out], { nobody: true });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(statSync(out).mode & 0o7777).toBe(mode);
      chmodSync(out, 0o755);
      expect(paths(out)).toEqual(['a.txt', 'd', 'd/f']);
    }
    // Not its own: refused, named by what it could not write — never an internal temporary name.
    const theirs = join(home, 'theirs');
    mkdirSync(theirs, 0o555);
    chmodSync(theirs, 0o555);
    const r = kura(['restore', '--store', store, id, theirs], { nobody: true });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^kura: ${theirs}/\\S+: permission denied \\[EACCES\\]\\n$`));
    expect(r.stderr).not.toMatch(/\.kura-restore-/);
  });
});
