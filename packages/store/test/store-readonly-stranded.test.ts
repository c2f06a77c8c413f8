/**
 * A reader sees every acknowledged commit: a writer that dies inside a batch (decision 0028)
 * leaves commits in the log that kura.db lacks; a store opened read-only applies them (by
 * opening for writing once) before it reads, where it found them — a `kura ls` after an
 * interrupted `kura add` listed fewer files than the add had reported stored.
 */
import { execFile } from 'node:child_process';
import { appendFileSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import { encodeFrame, readFrames } from '../src/catalog/frame.js';
import { encodeBody } from '../src/catalog/commits.js';
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
    // Applied for good: the database holds it now — and only that was done: the search index's
    // queue is left for the next writer (a writer's close drained it: seconds for a large one).
    const after = new Database(join(dir, 'kura.db'), { readonly: true });
    expect(after.prepare("SELECT count(*) AS n FROM entries WHERE path = 'last'").get()).toEqual({ n: 1 });
    expect((after.prepare('SELECT count(*) AS n FROM search_queue').get() as { n: number }).n).toBeGreaterThan(0);
    after.close();
  });

  it('commits it cannot apply (the log breaks after them) leave the reader reading the database, saying how many it lacks; verify reports the damage', async () => {
    const { store, dir } = await newStore();
    await store.close();
    await run(process.execPath, [fixture, dir]).catch(() => undefined);
    // After the stranded commit, an intact frame that does not follow on from it.
    const segments = readdirSync(join(dir, 'log')).sort();
    const last = join(dir, 'log', segments.at(-1)!);
    const frames = readFrames(new Uint8Array(readFileSync(last))).frames;
    const bad = encodeFrame(frames.at(-1)!.seq + 1, new Uint8Array(32).fill(7), encodeBody('0123456789abcdef', Date.now(), []));
    appendFileSync(last, bad.bytes);
    const reader = await Store.open(dir, { readonly: true });
    try {
      expect(reader.unappliedCommits).toBe(1);
      expect((await reader.list()).items.map((i) => i.path)).toEqual(['first']);
      expect((await reader.verify()).ok).toBe(false);
    } finally {
      await reader.close();
    }
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
