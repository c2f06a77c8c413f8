/**
 * `npm start` and `npm test` run the set-up first (scripts/bootstrap.sh, then build.sh): on a
 * tree built already it must skip every TypeScript, bundle and browser build instead of
 * redoing them all (~35 s on a loaded machine before), and rebuild exactly the steps a changed
 * source feeds. Checked with build.sh's --dry-run, which reads the same up-to-date rules and
 * changes nothing (other test files use the built packages meanwhile).
 */
import { spawnSync } from 'node:child_process';
import { statSync, utimesSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const STEPS = ['packages/core', 'packages/store', 'apps/server', 'packages/cli', 'the kura command bundle -> packages/cli/dist/bundle', 'the browser demo -> apps/web/dist'];

function plan(): Record<string, string> {
  const r = spawnSync('bash', ['scripts/build.sh', '--dry-run'], { cwd: ROOT, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return Object.fromEntries(r.stdout.trim().split('\n').map((l) => { const [verdict, step] = l.split(': '); return [step!, verdict!]; }));
}

describe('the set-up of npm start and npm test', () => {
  it('skips every build step on a tree built already', () => {
    expect(plan()).toEqual(Object.fromEntries(STEPS.map((s) => [s, 'up to date'])));
  });

  it('rebuilds the steps a changed source feeds, and only those', () => {
    const source = `${ROOT}packages/store/src/hex.ts`;
    const { atime, mtime } = statSync(source);
    try {
      const later = new Date(Date.now() + 60_000);
      utimesSync(source, later, later);
      expect(plan()).toEqual({
        'packages/core': 'up to date',
        'packages/store': 'would build',
        'apps/server': 'would build',
        'packages/cli': 'would build',
        'the kura command bundle -> packages/cli/dist/bundle': 'would build',
        'the browser demo -> apps/web/dist': 'would build',
      });
    } finally {
      utimesSync(source, atime, mtime);
    }
    expect(plan()['packages/store']).toBe('up to date');
  });
});
