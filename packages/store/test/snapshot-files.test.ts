/**
 * Snapshots of files given with their paths (a browser's dropped folder, browser/snapshot-files.ts)
 * through the platform-neutral snapshot run (snapshot-run.ts), on a real store: the tree the
 * paths make, the bytes read back by digest, deduplication across snapshots, bad paths refused.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { filesSource, scanFiles, type FileInTree } from '../src/browser/snapshot-files.js';
import { snapshotRun } from '../src/snapshot-run.js';
import type { StoreContext } from '../src/store-context.js';
import { collect, newStore, randomBytes } from './helpers/store.js';
import type { Store } from '../src/node/index.js';

const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const file = (bytes: Uint8Array, lastModified = 1_700_000_000_000) => new File([bytes], 'x', { lastModified });

function snapshot(store: Store, files: FileInTree[], label?: string) {
  const host = { store, context: (op: string) => (store as unknown as { context(op: string): StoreContext }).context(op) };
  return snapshotRun(host, filesSource(host, files, { pool: undefined, small: () => false, here: (b) => b }), label ? { label } : {});
}

describe('a snapshot of files given with their paths (a dropped folder)', () => {
  it('makes the tree the paths make, and every file reads back by its digest', async () => {
    const { store } = await newStore();
    const bytes = { 'a.txt': new TextEncoder().encode('alpha\n'), 'docs/b.bin': randomBytes(1, 300_000), 'docs/deep/c.txt': new TextEncoder().encode('gamma\n') };
    const files = Object.entries(bytes).map(([path, b]) => ({ path, file: file(b) }));
    const report = await snapshot(store, files, 'first');
    expect(report).toMatchObject({ label: 'first', files: 3, reused: 0, vanished: [], skipped: [] });
    const seen = new Map<string, { type: string; digest?: string; size?: number; mode?: number; mtime?: number }>();
    for await (const e of store.snapshotEntries(report.id)) seen.set(e.path, e.entry as never);
    expect([...seen.keys()].sort()).toEqual(['a.txt', 'docs', 'docs/b.bin', 'docs/deep', 'docs/deep/c.txt']);
    for (const [path, b] of Object.entries(bytes)) {
      expect(seen.get(path)).toMatchObject({ type: 'file', digest: sha(b), size: b.length, mode: 0o644, mtime: 1_700_000_000_000 });
      const back = await collect((await store.document(sha(b), { unlisted: true })).stream());
      expect(Buffer.from(back).equals(Buffer.from(b))).toBe(true);
    }
    expect((await store.list()).items).toHaveLength(0); // a snapshot's files are not listed
    expect((await store.verify()).ok).toBe(true);
  });

  it('a second snapshot with one file changed stores only what changed, and diffs to that file', async () => {
    const { store } = await newStore();
    const big = randomBytes(2, 1 << 20);
    const first = await snapshot(store, [{ path: 'big.bin', file: file(big) }, { path: 'note.txt', file: file(new TextEncoder().encode('v1')) }]);
    const before = (await store.stats()).uniqueChunkBytes;
    const second = await snapshot(store, [{ path: 'big.bin', file: file(big) }, { path: 'note.txt', file: file(new TextEncoder().encode('v2')) }]);
    expect((await store.stats()).uniqueChunkBytes - before).toBe(2);
    const diff = await store.diffSnapshots(first.id, second.id);
    expect(diff).toMatchObject({ added: [], removed: [] });
    expect(diff.changed.map((c) => c.path)).toEqual(['note.txt']);
  });

  it('refuses paths a tree cannot hold, before anything is stored', async () => {
    for (const paths of [['a/../b'], ['/abs'], ['a//b'], ['./a'], ['a', 'a'], ['a', 'a/b'], ['a/b', 'a']]) {
      expect(() => scanFiles(paths.map((path) => ({ path, file: file(new Uint8Array(1)) }))), paths.join(' ')).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    }
    const { store } = await newStore();
    await expect(snapshot(store, [{ path: 'ok.txt', file: file(new Uint8Array(3)) }, { path: 'x/../y', file: file(new Uint8Array(4)) }])).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(await store.snapshots()).toHaveLength(0);
    expect((await store.stats()).chunks).toBe(0);
  });
});
