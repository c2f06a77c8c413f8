/**
 * Restore and snapshot defects a user's trial found (FORMAT.md §13, decision 0008's
 * amendments): the sticky bit, times cut to the ms on both sides, temporary files a killed
 * restore left, an empty directory argument, a read-only target, Ctrl-C during a snapshot. The
 * cases that need a user other than root are in packages/cli/test/restore-cli.test.ts.
 */
import { chmodSync, closeSync, lstatSync, openSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newStore, tempDir } from './helpers/store.js';
import type { Store } from '../src/node/index.js';

async function entries(store: Store, id: string): Promise<Record<string, { mode?: number; mtime?: number }>> {
  const out: Record<string, { mode?: number; mtime?: number }> = {};
  for await (const { path, entry } of store.snapshotEntries(id)) out[path] = entry.type === 'symlink' ? {} : { mode: entry.mode, ...(entry.mtime !== undefined ? { mtime: entry.mtime } : {}) };
  return out;
}

/** A file's or directory's modification time, in ns (bigint: exact). */
const mtimeNs = (path: string) => lstatSync(path, { bigint: true }).mtimeNs;

describe('restore: what the trial found', () => {
  it('restores the sticky bit (a 1777 directory came back 0777); set-id bits still are not restored', async () => {
    const { store } = await newStore();
    const src = join(tempDir(), 'src');
    mkdirSync(join(src, 'shared'), { recursive: true });
    chmodSync(join(src, 'shared'), 0o1777);
    writeFileSync(join(src, 'shared', 'f'), 'f');
    writeFileSync(join(src, 'tool'), '#!/bin/sh\n');
    chmodSync(join(src, 'tool'), 0o4755);
    const snap = await store.snapshot(src);
    expect(await entries(store, snap.id)).toMatchObject({ shared: { mode: 0o1777 }, tool: { mode: 0o4755 } });
    const out = join(tempDir(), 'out');
    await store.restore(snap.id, out);
    expect((statSync(join(out, 'shared')).mode & 0o7777).toString(8)).toBe('1777');
    expect((statSync(join(out, 'tool')).mode & 0o7777).toString(8)).toBe('755');
  });

  it('cuts times to the ms when it records them and restores exactly that ms: never the next one (23:59:59.9996 came back the next day)', async () => {
    const { store } = await newStore();
    const src = join(tempDir(), 'src');
    mkdirSync(join(src, 'late'), { recursive: true });
    writeFileSync(join(src, 'late', 'eve.txt'), 'eve');
    writeFileSync(join(src, 'before-1970.txt'), 'old');
    writeFileSync(join(src, 'ms.txt'), 'ms');
    // (Numeric strings: Node sets them as given, ns and all, negative ones too.)
    utimesSync(join(src, 'late', 'eve.txt'), '1577923199.9996', '1577923199.9996'); // 2020-01-01T23:59:59.9996Z
    utimesSync(join(src, 'before-1970.txt'), '-1.0004', '-1.0004'); // 1969-12-31T23:59:58.9996Z
    utimesSync(join(src, 'ms.txt'), new Date(1_700_000_000_123), new Date(1_700_000_000_123)); // (as Node sets a Date: …122.999 ms)
    utimesSync(join(src, 'late'), '1577923199.9996', '1577923199.9996');
    // (23:59:59.999599: Node sets a time to the µs below the double it makes of it.)
    const fine = mtimeNs(join(src, 'late', 'eve.txt'));
    if (fine % 1_000_000n === 0n) return; // (a file system without sub-ms times: nothing to cut)
    expect(fine).toBeGreaterThan(1_577_923_199_999_500_000n); // (rounded, it was the next day)
    const snap = await store.snapshot(src);
    expect(await entries(store, snap.id)).toMatchObject({
      late: { mtime: 1_577_923_199_999 },
      'late/eve.txt': { mtime: 1_577_923_199_999 },
      'before-1970.txt': { mtime: -1001 }, // floor, not toward zero (-1000) nor rounded
      'ms.txt': { mtime: 1_700_000_000_122 },
    });
    const out = join(tempDir(), 'out');
    await store.restore(snap.id, out);
    expect(mtimeNs(join(out, 'late', 'eve.txt'))).toBe(1_577_923_199_999_000_000n);
    expect(mtimeNs(join(out, 'late'))).toBe(1_577_923_199_999_000_000n);
    expect(mtimeNs(join(out, 'before-1970.txt'))).toBe(-1_001_000_000n);
    expect(mtimeNs(join(out, 'ms.txt'))).toBe(1_700_000_000_122_000_000n);
    // Restored exactly: a snapshot of the restored tree is the same tree.
    expect((await store.snapshot(out)).tree).toBe(snap.tree);
  });

  it('restores any ms exactly (a Date gave half of them back a µs early, a ms early once cut)', async () => {
    const { store } = await newStore();
    const src = join(tempDir(), 'src');
    mkdirSync(src);
    const times = [1_700_000_000_123, 1_700_000_607_643, 1_115_244_799_999, 1, -1, -1500, -86_400_001, -315_619_200_001];
    times.forEach((t, i) => {
      writeFileSync(join(src, `f${i}`), String(t));
      utimesSync(join(src, `f${i}`), `${t / 1000}`, `${t / 1000}`);
    });
    const snap = await store.snapshot(src);
    const tree = await entries(store, snap.id);
    const recorded = times.map((_, i) => tree[`f${i}`]!.mtime!);
    expect(recorded).toEqual(times.map((_, i) => Math.floor(statSync(join(src, `f${i}`)).mtimeMs)));
    const out = join(tempDir(), 'out');
    await store.restore(snap.id, out);
    expect(times.map((_, i) => mtimeNs(join(out, `f${i}`)))).toEqual(recorded.map((t) => BigInt(t) * 1_000_000n));
    expect(times.map((_, i) => Math.floor(statSync(join(out, `f${i}`)).mtimeMs))).toEqual(recorded);
  });

  it('a rerun removes the temporary files a killed restore left, and keeps a file of the snapshot with such a name', async () => {
    const { store } = await newStore();
    const src = join(tempDir(), 'src');
    mkdirSync(join(src, 'sub'), { recursive: true });
    writeFileSync(join(src, 'a.txt'), 'a');
    writeFileSync(join(src, 'sub', 'b.txt'), 'b');
    const snap = await store.snapshot(src);
    const out = join(tempDir(), 'out');
    mkdirSync(join(out, 'sub'), { recursive: true });
    // What `kill -9` during a restore leaves: a partial file under a temporary name.
    writeFileSync(join(out, 'sub', '.kura-restore-0dfe43edd071'), 'partial');
    writeFileSync(join(out, 'a.txt'), 'a');
    writeFileSync(join(out, '.kura-restore-notmine'), 'a user file: not the pattern'); // (not 12 hex digits)
    mkdirSync(join(out, '.kura-restore-aaaaaaaaaaaa')); // (a directory: not a file restore makes)
    await store.restore(snap.id, out, { overwrite: true });
    expect(readdirSync(join(out, 'sub'))).toEqual(['b.txt']);
    expect(readdirSync(out).sort()).toEqual(['.kura-restore-aaaaaaaaaaaa', '.kura-restore-notmine', 'a.txt', 'sub']);

    // A target holding only such leftovers (the restore was killed in its first file) is empty.
    const first = join(tempDir(), 'first');
    mkdirSync(first);
    writeFileSync(join(first, '.kura-restore-0123456789ab'), 'partial');
    await store.restore(snap.id, first);
    expect(readdirSync(first).sort()).toEqual(['a.txt', 'sub']);

    // A snapshot that recorded one (taken before this fix) restores it as any file.
    writeFileSync(join(src, '.kura-restore-abcdefabcdef'), 'recorded');
    const withTemp = await store.snapshot(src);
    const again = join(tempDir(), 'again');
    await store.restore(withTemp.id, again);
    await store.restore(withTemp.id, again, { overwrite: true });
    expect(readFileSync(join(again, '.kura-restore-abcdefabcdef'), 'utf8')).toBe('recorded');
  });

  it('a temporary file another restore into the same directory is writing is not a leftover: it stays', async () => {
    const { store } = await newStore();
    const src = join(tempDir(), 'src');
    mkdirSync(src);
    writeFileSync(join(src, 'a.txt'), 'a');
    const snap = await store.snapshot(src);
    const out = join(tempDir(), 'out');
    mkdirSync(out);
    const busy = join(out, '.kura-restore-00aa00aa00aa');
    const fd = openSync(busy, 'w'); // (held open for writing, as a restore writing it holds it)
    try {
      await store.restore(snap.id, out, { overwrite: true });
      expect(readdirSync(out).sort()).toEqual(['.kura-restore-00aa00aa00aa', 'a.txt']);
    } finally {
      closeSync(fd);
    }
  });

  it('an empty target or directory is INVALID_INPUT: it meant the current directory', async () => {
    const { store } = await newStore();
    const src = join(tempDir(), 'src');
    mkdirSync(src);
    writeFileSync(join(src, 'a.txt'), 'a');
    const snap = await store.snapshot(src);
    const cwd = process.cwd();
    const here = tempDir();
    process.chdir(here); // (so that the defect, were it back, would fill a temporary directory)
    try {
      await expect(store.restore(snap.id, '')).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'target', message: expect.stringContaining('""') });
      await expect(store.restore(snap.id, '', { overwrite: true })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'target' });
      await expect(store.snapshot('')).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'dir' });
      expect(readdirSync(here)).toEqual([]);
      expect((await store.snapshots()).length).toBe(1);
    } finally {
      process.chdir(cwd);
    }
  });

  it('a symbolic link given as the directory or the target is said to be one; a target that cannot be made is the system\'s error, a file in its way the caller\'s', async () => {
    const { store } = await newStore();
    const root = tempDir();
    const src = join(root, 'src');
    mkdirSync(src);
    writeFileSync(join(src, 'a.txt'), 'a');
    symlinkSync('src', join(root, 'link'));
    await expect(store.snapshot(join(root, 'link'))).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'dir', message: expect.stringMatching(/is a symbolic link \(to src\)/) });
    const snap = await store.snapshot(src);
    mkdirSync(join(root, 'elsewhere'));
    symlinkSync('elsewhere', join(root, 'to-dir'));
    await expect(store.restore(snap.id, join(root, 'to-dir'))).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'target', message: expect.stringMatching(/is a symbolic link \(to elsewhere\)/) });
    expect(readdirSync(join(root, 'elsewhere'))).toEqual([]);
    // A file on the way is the caller's to mend; a directory it may not write in is the system's.
    writeFileSync(join(root, 'file'), 'x');
    await expect(store.restore(snap.id, join(root, 'file', 'out'))).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'target' });
    if (process.getuid?.() !== 0) {
      mkdirSync(join(root, 'locked'), 0o500);
      await expect(store.restore(snap.id, join(root, 'locked', 'out'))).rejects.toMatchObject({ code: 'EACCES' });
    }
  });

  it('a read-only target is made writable while the restore writes, then gets its own mode back (the root has none recorded)', async () => {
    const { store } = await newStore();
    const src = join(tempDir(), 'src');
    mkdirSync(join(src, 'd'), { recursive: true });
    writeFileSync(join(src, 'a.txt'), 'a');
    writeFileSync(join(src, 'd', 'f'), 'f');
    chmodSync(src, 0o700);
    const snap = await store.snapshot(src);
    const out = join(tempDir(), 'out');
    mkdirSync(out, 0o555);
    chmodSync(out, 0o555);
    await store.restore(snap.id, out);
    expect(readFileSync(join(out, 'd', 'f'), 'utf8')).toBe('f');
    expect((statSync(out).mode & 0o7777).toString(8)).toBe('555');
    // A check that fails puts it back too (nothing was written): a directory where the
    // snapshot has a file.
    writeFileSync(join(src, 'd2'), 'now a file');
    const other = await store.snapshot(src);
    chmodSync(out, 0o700);
    mkdirSync(join(out, 'd2'));
    chmodSync(out, 0o500);
    await expect(store.restore(other.id, out, { overwrite: true })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/in the way/) });
    expect((statSync(out).mode & 0o7777).toString(8)).toBe('500');
    chmodSync(out, 0o700);
  });
});

describe('restore: the snapshot deleted meanwhile', () => {
  it('says the snapshot was deleted while it was restored (it said only "no document …")', async () => {
    const { store } = await newStore();
    const src = join(tempDir(), 'src');
    mkdirSync(src);
    for (let i = 0; i < 400; i++) writeFileSync(join(src, `f${i}.txt`), `file ${i} `.repeat(50));
    const snap = await store.snapshot(src);
    let deleting: Promise<unknown> | undefined;
    const restoring = store.restore(snap.id, join(tempDir(), 'out'), {
      onProgress: (p) => {
        if (p.files === 1) deleting ??= store.deleteSnapshot(snap.id).then(() => store.gc());
      },
    });
    await expect(restoring).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringMatching(/the snapshot was deleted while it was restored/) });
    await deleting;
  });
});

describe('snapshot: stopped by its signal', () => {
  it('records nothing and rejects with the reason; a signal aborted before it starts reads nothing', async () => {
    const { store } = await newStore();
    const src = join(tempDir(), 'src');
    for (let d = 0; d < 20; d++) {
      mkdirSync(join(src, `d${d}`), { recursive: true });
      for (let f = 0; f < 20; f++) writeFileSync(join(src, `d${d}`, `f${f}`), `${d}/${f}`);
    }
    const ac = new AbortController();
    let seen = 0;
    const run = store.snapshot(src, {
      signal: ac.signal,
      onProgress: () => {
        if (++seen === 3) ac.abort(new Error('stopped by SIGINT'));
      },
    });
    await expect(run).rejects.toThrow('stopped by SIGINT');
    expect(await store.snapshots()).toEqual([]);
    await expect(store.snapshot(src, { signal: AbortSignal.abort(new Error('before')) })).rejects.toThrow('before');
    expect(await store.snapshots()).toEqual([]);
    // Not stopped: recorded as ever.
    expect((await store.snapshot(src, { signal: new AbortController().signal })).files).toBe(400);
  });
});
