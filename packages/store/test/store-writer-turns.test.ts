/**
 * Writers take turns at the write lock (node/lock-turns.ts; issue 20: "a writer never waits for
 * another longer than one commit"). Three processes make metadata commits one after another,
 * each as fast as it can, for the same 1.5 s. Before turns, the one that had the lock kept it:
 * two processes made 64,355 and 1 commits in 3 s, and the other waited the whole time.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import { tempDir } from './helpers/store.js';

const CHILD = fileURLToPath(new URL('./fixtures/child.mjs', import.meta.url));

function run(args: string[]): Promise<{ commits: number; longest: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.once('close', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!)) : reject(new Error(`writer ${args[2]} ended with ${code}: ${err}`))));
  });
}

describe('writers on one store take turns at its write lock', () => {
  it('three processes committing without pause each get their share', { timeout: 60_000 }, async () => {
    const dir = join(tempDir(), 's');
    const store = await Store.init(dir);
    await store.put(new TextEncoder().encode('the target'), { path: 'meta/target' });
    await store.close();
    const start = Date.now() + 2_000; // (each process opens the store first)
    const end = start + 1_500;
    const made = await Promise.all([0, 1, 2].map((k) => run(['turns', dir, String(k), String(start), String(end)])));
    const total = made.reduce((n, m) => n + m.commits, 0);
    const what = made.map((m) => `${m.commits} commits, longest wait ${Math.round(m.longest)} ms`).join('; ');
    expect(total, what).toBeGreaterThan(300);
    for (const m of made) expect(m.commits, what).toBeGreaterThanOrEqual(total * 0.1);
    // Every commit each made is in the store: the last value each wrote is there.
    const after = await Store.open(dir);
    const { meta } = await after.stat('meta/target');
    made.forEach((m, k) => expect(meta[`w${k}`]).toBe(String(m.commits - 1)));
    await after.close();
  });
});
