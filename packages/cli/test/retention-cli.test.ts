/**
 * Retention from the command line (decision 0058): `kura forget` of versions with --dry-run and
 * --json, `kura pin` keeping a version through it, usage errors that change nothing, and
 * policies kept in the store (`kura policy set|list|apply|rm`) that `kura gc` applies first.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const roots: string[] = [];
afterAll(() => roots.splice(0).forEach((r) => rmSync(r, { recursive: true, force: true })));

describe('kura forget, pin, policy', () => {
  it('forgets versions, keeps pins, and kura gc applies the policies kept in the store', { timeout: 60_000 }, () => {
    const root = mkdtempSync(join(tmpdir(), 'kura-retention-cli-'));
    roots.push(root);
    const store = join(root, 'store');
    const kura = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args, '--store', store], { encoding: 'utf8', cwd: root });
    expect(kura('init').status).toBe(0);
    for (let i = 1; i <= 5; i++) {
      writeFileSync(join(root, 'plan.md'), `plan ${i}\n`);
      expect(kura('add', 'plan.md').status).toBe(0);
      writeFileSync(join(root, 'log.txt'), `log ${i}\n`);
      expect(kura('add', 'log.txt').status).toBe(0);
    }
    const pinned = kura('pin', 'plan.md@1');
    expect([pinned.status, pinned.stdout]).toEqual([0, 'pinned plan.md@1\n']); // (a line per ref: it printed nothing)
    const dry = kura('forget', '--keep-versions', '2', '--prefix', 'plan', '--dry-run', '--json');
    expect(dry.status, dry.stderr).toBe(0);
    const r = JSON.parse(dry.stdout);
    expect(r.keep.map((k: { version: number; reasons: string[] }) => [k.version, k.reasons])).toEqual([
      [5, ['latest']],
      [4, ['last 2 versions']],
      [1, ['pinned']],
    ]);
    expect(r.remove.map((x: { version: number }) => x.version)).toEqual([3, 2]);
    expect(kura('versions', 'plan.md').stdout.trim().split('\n')).toHaveLength(5);
    const human = kura('forget', '--keep-versions', '2', '--prefix', 'plan');
    expect(human.stdout).toMatch(/removed 2 versions/);
    expect(kura('versions', 'plan.md').stdout.trim().split('\n').map((l) => l.split(' ')[0])).toEqual(['@1', '@4', '@5']);
    // The pinned one is marked (only --json said so: a trial).
    expect(kura('versions', 'plan.md').stdout.trim().split('\n').map((l) => l.endsWith('  pinned'))).toEqual([true, false, false]);
    // Usage errors change nothing.
    for (const bad of [[], ['--keep-daily', '1', '--keep-versions', '1'], ['--keep-versions', '0'], ['--keep-within', '3w'], ['--prefix', 'x', '--keep-daily', '2']]) {
      const b = kura('forget', ...bad);
      expect(b.status, bad.join(' ')).toBe(2);
    }
    expect(kura('pin', 'not a ref').status).toBe(2);
    const partly = kura('pin', 'plan.md@4', 'plan.md@99');
    expect(partly.status).not.toBe(0);
    expect(partly.stdout).toBe('pinned plan.md@4\n'); // what was done before the failure is said
    expect(kura('unpin', 'plan.md@4').stdout).toBe('unpinned plan.md@4\n');

    // A policy kept in the store, applied by gc.
    expect(kura('policy', 'set', '--versions', 'log', '--keep-versions', '1').stdout).toMatch(/kept: versions under "log": keep 1/);
    expect(kura('policy', 'list').stdout.trim()).toBe('versions under "log": keep 1');
    const applied = kura('policy', 'apply', '--dry-run').stdout.split('\n');
    expect(applied[0]).toMatch(/would remove 4:$/);
    // Each version that would go, by name (only counts were said: a trial).
    expect(applied.slice(1, 5).map((l) => l.trim().split(/\s+/)[0])).toEqual(['log.txt@4', 'log.txt@3', 'log.txt@2', 'log.txt@1']);
    const gc = kura('gc', '--json');
    expect(gc.status, gc.stderr).toBe(0);
    // Its 4 versions' chunks, and the 2 plan.md versions forgotten above (forget leaves them to GC).
    expect(JSON.parse(gc.stdout)).toMatchObject({ forgotten: { snapshots: 0, versions: 4 }, chunksRemoved: 6 });
    expect(kura('versions', 'log.txt').stdout.trim().split('\n')).toHaveLength(1);
    expect(kura('policy', 'rm', '--versions', 'log').status).toBe(0);
    expect(kura('policy', 'rm', '--versions', 'log').status).not.toBe(0);
    expect(kura('policy', 'set', '--snapshots').status).toBe(2);
    // A prefix no path can start with (it was kept, governing nothing: a trial).
    const abs = kura('policy', 'set', '--versions', '/abs', '--keep-versions', '3');
    expect([abs.status, abs.stderr]).toEqual([2, expect.stringMatching(/begins with \/ \(write "abs"\)/)]);
    // Paths deleted with their versions kept are listed by ls --deleted (nothing listed them: a trial).
    const lib = new URL('../../store/dist/node/index.js', import.meta.url).href;
    const keptDelete = spawnSync(process.execPath, ['--input-type=module', '-e', `import { Store } from ${JSON.stringify(lib)}; const s = await Store.open(${JSON.stringify(store)}); await s.deletePath('plan.md', { keepVersions: true }); await s.close();`], { encoding: 'utf8' });
    expect(keptDelete.status, keptDelete.stderr).toBe(0); // (what a watch does with a file deleted on disk)
    const deleted = kura('ls', '--deleted', '--json');
    expect(deleted.stdout.trim().split('\n').map((l) => JSON.parse(l))).toEqual([{ path: 'plan.md', deletedAt: expect.stringMatching(/^\d{4}-/) }]);
    expect(kura('ls', '--deleted').stdout).toMatch(/^\d{4}-\S+ {2}plan\.md\n$/);
    expect(kura('ls', '--deleted', '--prefix', 'log').stdout).toBe('');
    expect(kura('add', 'plan.md').status).toBe(0); // (back again: no longer deleted)
    expect(kura('ls', '--deleted').stdout).toBe('');
    // A snapshot pinned by the first digits of its id is said by its whole id (it echoed the digits: a trial).
    const tree = join(root, 'tree');
    mkdirSync(tree);
    writeFileSync(join(tree, 'f.txt'), 'f');
    const id = JSON.parse(kura('snapshot', tree, '--json').stdout).id as string;
    expect(kura('pin', id.slice(0, 6)).stdout).toBe(`pinned snapshot ${id}\n`);
    expect(kura('unpin', id.slice(0, 6)).stdout).toBe(`unpinned snapshot ${id}\n`);
  });
});
