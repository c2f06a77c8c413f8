/**
 * A reader sees every acknowledged commit: a writer that dies inside a batch (decision 0028)
 * leaves commits in the log that kura.db lacks; a store opened read-only applies them (by
 * opening for writing once) before it reads, where it found them — a `kura ls` after an
 * interrupted `kura add` listed fewer files than the add had reported stored.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import { newStore } from './helpers/store.js';

const run = promisify(execFile);
const fixture = fileURLToPath(new URL('./fixtures/stranded-commit.mjs', import.meta.url));

describe('a read-only store and commits stranded in the log', () => {
  it('reads what a writer that died inside a batch had acknowledged', async () => {
    const { store, dir } = await newStore();
    await store.close();
    const { stdout } = await run(process.execPath, [fixture, dir]).catch((e: { stdout: string; signal?: string }) => {
      expect(e.signal).toBe('SIGKILL');
      return e;
    });
    const digest = stdout.trim();
    expect(digest).toMatch(/^sha256:/);
    // The scenario holds: the database alone lacks the acknowledged put.
    const raw = new Database(join(dir, 'kura.db'), { readonly: true });
    expect(raw.prepare("SELECT count(*) AS n FROM entries WHERE path = 'last'").get()).toEqual({ n: 0 });
    raw.close();
    const reader = await Store.open(dir, { readonly: true });
    expect(reader.unappliedCommits).toBe(0);
    expect((await reader.list()).items.map((i) => i.path).sort()).toEqual(['first', 'last']);
    expect(new TextDecoder().decode(await reader.getBytes(digest))).toBe('the last document, acknowledged');
    await reader.close();
    // Applied for good: the database holds it now.
    const after = new Database(join(dir, 'kura.db'), { readonly: true });
    expect(after.prepare("SELECT count(*) AS n FROM entries WHERE path = 'last'").get()).toEqual({ n: 1 });
    after.close();
  });

  it('a reader of a store whose log holds nothing more opens read-only and applies nothing', async () => {
    const { store, dir } = await newStore();
    await store.put(new TextEncoder().encode('x'), { path: 'x' });
    await store.close();
    const reader = await Store.open(dir, { readonly: true });
    expect(reader.readonly).toBe(true);
    expect(reader.unappliedCommits).toBe(0);
    expect((await reader.list()).items.map((i) => i.path)).toEqual(['x']);
    await reader.close();
  });
});
