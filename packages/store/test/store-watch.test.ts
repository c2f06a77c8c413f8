/**
 * Watching a folder (decision 0059) with real files and the real watcher (@parcel/watcher on
 * inotify): create, modify, an editor's atomic save, a rename, a delete (versions kept), a
 * directory moved in, a burst of 10,000 small files, a file written slowly over three seconds
 * by a writer holding it open (stored once, whole, when closed), appends that close the file
 * each time (a version each), a restart that catches up, excludes and stores inside the tree, a
 * symlink pointing out of the tree; each change visible to listing and search within a bound.
 */
import { appendFileSync, closeSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Store, type WatchEvent } from '../src/node/index.js';
import { eventually, sleep } from './helpers/eventually.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'kura-watch-'));
  dirs.push(d);
  return d;
}

async function paths(store: Store, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ pathPrefix: prefix, limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...page.items.map((d) => d.path!));
    cursor = page.nextCursor;
  } while (cursor);
  return out.sort();
}
const text = async (store: Store, ref: string) => new TextDecoder().decode(await store.getBytes(await store.resolve(ref)));

describe('kura watch', () => {
  it('follows creates, edits, atomic saves, renames, deletes and directories moved in', { timeout: 60_000 }, async () => {
    const root = tmp();
    const tree = join(root, 'notes');
    mkdirSync(join(tree, 'sub'), { recursive: true });
    writeFileSync(join(tree, 'a.md'), 'the lighthouse keeper\n');
    const store = await Store.init(join(root, 'store'));
    const events: WatchEvent[] = [];
    const w = store.watch(tree, { settleMs: 200, onEvent: (e) => events.push(e) });
    try {
      await w.ready;
      expect(events.find((e) => e.type === 'ready')).toMatchObject({ stored: 1, deleted: 0 });
      expect(await paths(store, 'notes/')).toEqual(['notes/a.md']);

      // Create and modify: each a version, found by search within a bound.
      writeFileSync(join(tree, 'sub', 'b.md'), 'a cormorant on the pier\n');
      appendFileSync(join(tree, 'a.md'), 'keeps the lamp lit\n');
      const took = await eventually(async () => {
        expect(await paths(store, 'notes/')).toEqual(['notes/a.md', 'notes/sub/b.md']);
        expect((await store.versions('notes/a.md')).length).toBe(2);
        expect((await store.search('cormorant', { mode: 'keyword' })).map((h) => h.path)).toEqual(['notes/sub/b.md']);
      });
      expect(took).toBeLessThan(5_000);

      // An editor's atomic save: a temporary file renamed over the old one. One version, and
      // the temporary is never stored.
      writeFileSync(join(tree, '.a.md.swp'), 'the lighthouse keeper\nsaved atomically\n');
      renameSync(join(tree, '.a.md.swp'), join(tree, 'a.md'));
      await eventually(async () => expect(await text(store, 'notes/a.md')).toContain('saved atomically'));
      await sleep(400);
      expect((await store.versions('notes/a.md')).length).toBe(3);
      expect(await paths(store, 'notes/')).toEqual(['notes/a.md', 'notes/sub/b.md']);

      // A rename: the old path deleted with its versions kept, the new one stored, no bytes again.
      renameSync(join(tree, 'sub', 'b.md'), join(tree, 'sub', 'c.md'));
      await eventually(async () => expect(await paths(store, 'notes/')).toEqual(['notes/a.md', 'notes/sub/c.md']));
      expect(events.filter((e) => e.type === 'stored' && e.path === 'notes/sub/c.md')).toMatchObject([{ newChunks: 0 }]);
      expect(await text(store, 'notes/sub/b.md@1')).toBe('a cormorant on the pier\n');
      await expect(store.resolve('notes/sub/b.md')).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await store.search('cormorant', { mode: 'keyword' })).toHaveLength(1);

      // A directory moved in from outside the tree, then deleted whole.
      const outside = join(root, 'incoming');
      mkdirSync(join(outside, 'deep'), { recursive: true });
      writeFileSync(join(outside, 'deep', 'x.txt'), 'x');
      writeFileSync(join(outside, 'y.txt'), 'y');
      renameSync(outside, join(tree, 'incoming'));
      await eventually(async () => expect(await paths(store, 'notes/incoming/')).toEqual(['notes/incoming/deep/x.txt', 'notes/incoming/y.txt']));
      rmSync(join(tree, 'incoming'), { recursive: true });
      await eventually(async () => expect(await paths(store, 'notes/incoming/')).toEqual([]));
      expect(await text(store, 'notes/incoming/y.txt@1')).toBe('y');
      // Recreated: a new version of the same bytes.
      writeFileSync(join(tree, 'sub', 'b.md'), 'a cormorant on the pier\n');
      await eventually(async () => expect((await store.versions('notes/sub/b.md')).map((v) => v.version)).toEqual([1, 2]));
      expect(events.filter((e) => e.type === 'error')).toEqual([]);
    } finally {
      await w.close();
      await store.close();
    }
  });

  it('stores a file written slowly once, whole; a burst of 10,000 files, all of them', { timeout: 120_000 }, async () => {
    const root = tmp();
    const tree = join(root, 'data');
    mkdirSync(tree);
    const store = await Store.init(join(root, 'store'));
    const events: WatchEvent[] = [];
    const w = store.watch(tree, { onEvent: (e) => events.push(e) });
    try {
      await w.ready;
      // Ten writes 300 ms apart by a writer that holds the file open: longer pauses than the
      // quiet time a closed file needs (50 ms), but the file is still being written.
      const fd = openSync(join(tree, 'slow.log'), 'w');
      for (let i = 0; i < 10; i++) {
        writeSync(fd, `line ${i} ${'x'.repeat(1000)}\n`);
        await sleep(300);
      }
      closeSync(fd);
      await eventually(async () => expect(await text(store, 'data/slow.log')).toContain('line 9'));
      await sleep(800);
      expect((await store.versions('data/slow.log')).length).toBe(1);
      // Appends that each open and close the file, 400 ms apart (under the settle time): each
      // closed file is a whole one, stored as its writer closes it — a version per append.
      for (let i = 0; i < 3; i++) {
        appendFileSync(join(tree, 'appended.log'), `entry ${i}\n`);
        await sleep(400);
      }
      await eventually(async () => expect(await text(store, 'data/appended.log')).toContain('entry 2'));
      expect((await store.versions('data/appended.log')).length).toBe(3);

      const started = Date.now();
      for (let d = 0; d < 100; d++) {
        mkdirSync(join(tree, `d${d}`));
        for (let f = 0; f < 100; f++) writeFileSync(join(tree, `d${d}`, `f${f}.txt`), `file ${d}/${f}`);
      }
      await eventually(async () => expect((await store.stats()).entries).toBe(10_002), 90_000); // and slow.log, appended.log
      const ms = Date.now() - started;
      expect(await text(store, 'data/d57/f3.txt')).toBe('file 57/3');
      expect(events.filter((e) => e.type === 'error')).toEqual([]);
      console.log(`watch: 10,000 files stored in ${(ms / 1000).toFixed(1)} s`);
    } finally {
      await w.close();
      await store.close();
    }
  });

  it('catches up after a restart; leaves out excludes, stores inside the tree and links out of it', { timeout: 60_000 }, async () => {
    const root = tmp();
    const tree = join(root, 'proj');
    mkdirSync(join(tree, '.git'), { recursive: true });
    mkdirSync(join(tree, 'node_modules', 'dep'), { recursive: true });
    mkdirSync(join(tree, 'logs'));
    writeFileSync(join(tree, '.git', 'HEAD'), 'ref');
    writeFileSync(join(tree, 'node_modules', 'dep', 'index.js'), 'dep');
    writeFileSync(join(tree, 'logs', 'run.log'), 'noise');
    writeFileSync(join(tree, 'keep.txt'), 'v1');
    writeFileSync(join(tree, 'gone.txt'), 'bye');
    writeFileSync(join(root, 'secret.txt'), 'outside the tree');
    writeFileSync(join(tree, 'odd\\name.txt'), 'a name a tree cannot hold'); // left out, and said
    symlinkSync(join(root, 'secret.txt'), join(tree, 'link.txt'));
    symlinkSync(root, join(tree, 'up'));
    // The store itself inside the tree.
    const store = await Store.init(join(tree, 'store-inside'));
    try {
      const first: WatchEvent[] = [];
      let w = store.watch(tree, { exclude: ['*.log'], onEvent: (e) => first.push(e) });
      await w.ready;
      expect(await paths(store, '')).toEqual(['proj/gone.txt', 'proj/keep.txt']);
      expect(first.filter((e) => e.type === 'error')).toEqual([{ type: 'error', path: join(tree, 'odd\\name.txt'), message: expect.stringMatching(/^left out: /), code: 'INVALID_INPUT' }]);
      await w.close();

      // While no watch runs: an edit, a delete, a new file.
      await sleep(50);
      writeFileSync(join(tree, 'keep.txt'), 'v2');
      rmSync(join(tree, 'gone.txt'));
      writeFileSync(join(tree, 'new.txt'), 'new');
      const events: WatchEvent[] = [];
      w = store.watch(tree, { exclude: ['*.log'], onEvent: (e) => events.push(e) });
      await w.ready;
      expect(events.find((e) => e.type === 'ready')).toMatchObject({ stored: 2, deleted: 1 });
      expect(await paths(store, '')).toEqual(['proj/keep.txt', 'proj/new.txt']);
      expect(await text(store, 'proj/keep.txt')).toBe('v2');
      expect(await text(store, 'proj/gone.txt@1')).toBe('bye');
      await w.close();

      // Started again with nothing changed: nothing stored. Files changed less than 2 s before a
      // scan are read every time (their stamps are not trusted yet, FORMAT.md §13.4); once they
      // have settled, a scan records their stamps and the next one reads nothing.
      await sleep(2_100);
      const reread: WatchEvent[] = [];
      w = store.watch(tree, { exclude: ['*.log'], onEvent: (e) => reread.push(e) });
      await w.ready;
      await w.close();
      // (Read again, and found as the store has them: unchanged — they were counted nowhere.)
      expect(reread.find((e) => e.type === 'ready')).toMatchObject({ stored: 0, deleted: 0, unchanged: 2 });
      const again: WatchEvent[] = [];
      w = store.watch(tree, { exclude: ['*.log'], onEvent: (e) => again.push(e) });
      await w.ready;
      expect(again.find((e) => e.type === 'ready')).toMatchObject({ stored: 0, deleted: 0, unchanged: 2 });
      expect(again.filter((e) => e.type === 'stored')).toEqual([]);
      writeFileSync(join(tree, 'node_modules', 'dep', 'more.js'), 'x');
      writeFileSync(join(tree, 'logs', 'more.log'), 'x');
      // Editors' files beside a note: a swap file held open while the editor runs was stored,
      // and kept as a deleted path once it quit (a trial). A directory of such a name is watched.
      for (const name of ['.visible.txt.swp', '.visible.txt.swo', 'visible.txt~', '.#visible.txt', '#visible.txt#', '4913', '.~lock.report.odt#']) writeFileSync(join(tree, name), 'editor');
      mkdirSync(join(tree, 'old~'));
      writeFileSync(join(tree, 'old~', 'kept.txt'), 'kept');
      writeFileSync(join(tree, 'visible.txt'), 'seen');
      await eventually(async () => expect(await paths(store, '')).toEqual(['proj/keep.txt', 'proj/new.txt', 'proj/old~/kept.txt', 'proj/visible.txt']));
      await w.close();
    } finally {
      await store.close();
    }
  });

  it('keeps what is made while its first catch-up runs; leaves out a directory excluded by name, or made a store, after it started', { timeout: 120_000 }, async () => {
    const root = tmp();
    const tree = join(root, 'notes');
    // Enough directories that the catch-up is still running when the new files come.
    for (let d = 0; d < 400; d++) {
      mkdirSync(join(tree, `d${d}`), { recursive: true });
      for (let f = 0; f < 10; f++) writeFileSync(join(tree, `d${d}`, `f${f}.md`), `note ${d}/${f}\n`);
    }
    const store = await Store.init(join(root, 'store'));
    const events: WatchEvent[] = [];
    // (Settling at once: a change heard during the catch-up is stored while it would still run.)
    const w = store.watch(tree, { settleMs: 1, exclude: ['build/'], onEvent: (e) => events.push(e) });
    try {
      // Written into directories the scan may already have read, while it runs (before ready).
      let made = 0;
      while (!events.some((e) => e.type === 'ready') && made < 400) {
        writeFileSync(join(tree, `d${made}`, 'new.md'), 'made during the catch-up\n');
        made++;
        await sleep(1);
      }
      await w.ready;
      const expected = new Set<string>();
      for (let d = 0; d < 400; d++) for (let f = 0; f < 10; f++) expected.add(`notes/d${d}/f${f}.md`);
      for (let d = 0; d < made; d++) expected.add(`notes/d${d}/new.md`);
      await eventually(async () => expect(await paths(store, 'notes/')).toEqual([...expected].sort()), 30_000);
      expect(events.filter((e) => e.type === 'deleted')).toEqual([]);
      // After it started: a directory the exclude names only as a directory, and a store made in the tree.
      mkdirSync(join(tree, 'build'));
      writeFileSync(join(tree, 'build', 'out.bin'), 'built');
      await (await Store.init(join(tree, 'inner-store'))).close();
      writeFileSync(join(tree, 'after.md'), 'seen');
      await eventually(async () => expect(await paths(store, 'notes/after')).toEqual(['notes/after.md']));
      await sleep(600); // (past the settle time of what came before after.md)
      expect((await paths(store, 'notes/')).filter((p) => p.startsWith('notes/build') || p.startsWith('notes/inner-store'))).toEqual([]);
    } finally {
      await w.close();
      await store.close();
    }
  });

  it('tries a change again when storing it failed (the storage did not answer), and says so', { timeout: 30_000 }, async () => {
    const root = tmp();
    const tree = join(root, 'notes');
    mkdirSync(tree);
    const store = await Store.init(join(root, 'store'));
    const events: WatchEvent[] = [];
    const w = store.watch(tree, { settleMs: 100, onEvent: (e) => events.push(e) });
    try {
      await w.ready;
      // The faulty twin: the next put fails as a commit to unreachable storage would — and the
      // file changes again meanwhile (its event, heard after the failure, waits out RETRY_MS too).
      const putFiles = store.putFiles.bind(store);
      let failures = 1;
      store.putFiles = ((...args: Parameters<Store['putFiles']>) => {
        if (failures-- > 0) {
          writeFileSync(join(tree, 'kept.md'), 'stored on the second try\n');
          throw Object.assign(new Error('the storage did not answer'), { code: 'STORAGE_UNREACHABLE' });
        }
        return putFiles(...args);
      }) as Store['putFiles'];
      writeFileSync(join(tree, 'kept.md'), 'stored on the second try\n');
      await eventually(() => expect(events).toContainEqual({ type: 'error', message: 'the storage did not answer', code: 'STORAGE_UNREACHABLE' }));
      const waited = await eventually(async () => expect(await paths(store, 'notes/')).toEqual(['notes/kept.md']), 15_000);
      expect(waited).toBeGreaterThan(1_000); // after RETRY_MS, not at once
      expect(await text(store, 'notes/kept.md')).toBe('stored on the second try\n');
    } finally {
      await w.close();
      await store.close();
    }
  });

  it('goes on past a path it cannot look at; never reads through a directory replaced by a link; a file made a directory and back; a writer that pauses; its directory replaced', { timeout: 60_000 }, async () => {
    // Found by a new user's trial: one ENOTDIR stopped every later change from being stored (the
    // whole batch failed, and was tried again forever); a pending file under a directory swapped
    // for a link to outside the tree was read through it; a file that became a directory stayed;
    // a writer's pause longer than the settle time stored a partial version; a folder moved away
    // and made again was never heard of again.
    const root = tmp();
    const tree = join(root, 'notes');
    const outside = join(root, 'outside');
    mkdirSync(join(tree, 'proj'), { recursive: true });
    mkdirSync(join(tree, 'd'));
    mkdirSync(join(tree, 'y'));
    mkdirSync(outside);
    writeFileSync(join(tree, 'a.md'), 'a\n');
    writeFileSync(join(tree, 'proj', 'p.md'), 'p\n');
    writeFileSync(join(tree, 'd', 'f.md'), 'my note\n');
    writeFileSync(join(tree, 'x'), 'x\n');
    writeFileSync(join(tree, 'y', 'inner.md'), 'y\n');
    writeFileSync(join(outside, 'f.md'), 'SECRET outside the tree\n');
    const store = await Store.init(join(root, 'store'));
    const events: WatchEvent[] = [];
    const w = store.watch(tree, { settleMs: 200, onEvent: (e) => events.push(e) });
    try {
      await w.ready;
      // A directory made a file, with a file inside it pending: ENOTDIR for that one path.
      rmSync(join(tree, 'proj'), { recursive: true });
      writeFileSync(join(tree, 'proj'), 'now a file\n');
      // A pending file whose directory is swapped for a link out of the tree, at once.
      appendFileSync(join(tree, 'd', 'f.md'), 'edited\n');
      renameSync(join(tree, 'd'), join(tree, 'd.old'));
      symlinkSync(outside, join(tree, 'd'));
      // A file made a directory, a directory made a file.
      rmSync(join(tree, 'x'));
      mkdirSync(join(tree, 'x'));
      writeFileSync(join(tree, 'x', 'inner.md'), 'inner\n');
      rmSync(join(tree, 'y'), { recursive: true });
      writeFileSync(join(tree, 'y'), 'y is a file now\n');
      await sleep(400);
      writeFileSync(join(tree, 'a.md'), 'important edit\n');
      writeFileSync(join(tree, 'b.md'), 'new note\n');
      await eventually(async () => {
        expect(await paths(store, 'notes/')).toEqual(['notes/a.md', 'notes/b.md', 'notes/d.old/f.md', 'notes/proj', 'notes/x/inner.md', 'notes/y']);
        expect(await text(store, 'notes/a.md')).toBe('important edit\n');
      });
      expect(await text(store, 'notes/proj')).toBe('now a file\n');
      expect(await text(store, 'notes/d.old/f.md')).toBe('my note\nedited\n');
      const search = await store.search('SECRET', { allVersions: true });
      expect(search.map((h) => h.path)).toEqual([]);
      for (const v of await store.versions('notes/d/f.md')) expect(new TextDecoder().decode(await store.getBytes(v.digest))).not.toContain('SECRET');
      expect(events.filter((e) => e.type === 'error')).toEqual([]);

      // A writer that holds its file open and pauses longer than the settle time: one version, whole.
      const fd = openSync(join(tree, 'export.csv'), 'w');
      for (let i = 0; i < 3; i++) {
        writeSync(fd, `row ${i}\n`);
        await sleep(600);
      }
      closeSync(fd);
      await eventually(async () => expect(await text(store, 'notes/export.csv')).toBe('row 0\nrow 1\nrow 2\n'));
      await sleep(500);
      expect((await store.versions('notes/export.csv')).length).toBe(1);

      // The folder moved away and another made at its path: said, and that one followed.
      renameSync(tree, join(root, 'notes.moved'));
      mkdirSync(tree);
      writeFileSync(join(tree, 'fresh.md'), 'written after the swap\n');
      await eventually(async () => expect(await paths(store, 'notes/')).toEqual(['notes/fresh.md']), 15_000);
      expect(events).toContainEqual(expect.objectContaining({ type: 'error', message: expect.stringMatching(/replaced by another/) }));
      writeFileSync(join(tree, 'later.md'), 'heard\n');
      writeFileSync(join(root, 'notes.moved', 'a.md'), 'the old folder: no longer watched\n');
      await eventually(async () => expect(await paths(store, 'notes/')).toEqual(['notes/fresh.md', 'notes/later.md']));
      expect(await store.versions('notes/a.md')).toHaveLength(2); // kept, deleted from the listing only

      // Moved away (said), then back at its path: said too, and caught up with (it resumed
      // without a word: a trial).
      const readyBefore = events.filter((e) => e.type === 'ready').length;
      renameSync(tree, join(root, 'notes.away'));
      await eventually(() => expect(events).toContainEqual(expect.objectContaining({ type: 'error', message: expect.stringMatching(/moved away or deleted/) })), 15_000);
      writeFileSync(join(root, 'notes.away', 'while-away.md'), 'written while away\n');
      renameSync(join(root, 'notes.away'), tree);
      await eventually(() => expect(events).toContainEqual(expect.objectContaining({ type: 'scanning', reason: expect.stringMatching(/is back at/) })), 15_000);
      await eventually(() => expect(events.filter((e) => e.type === 'ready').length).toBe(readyBefore + 1), 15_000);
      await eventually(async () => expect(await paths(store, 'notes/')).toContain('notes/while-away.md'));
    } finally {
      await w.close();
      await store.close();
    }
  });

  it('stores only states a file really had while it is rewritten in place, again and again, as it is read', { timeout: 90_000 }, async () => {
    const root = tmp();
    const tree = join(root, 'notes');
    mkdirSync(tree, { recursive: true });
    const store = await Store.init(join(root, 'store'));
    const events: WatchEvent[] = [];
    const w = store.watch(tree, { settleMs: 50, onEvent: (e) => events.push(e) });
    await w.ready;
    const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
    // Two states of a large file (read as a stream) and of a small one (read whole).
    const states = {
      'big.bin': [randomBytes(6 << 20), randomBytes(6 << 20)],
      'small.txt': [new TextEncoder().encode('a'.repeat(40_000)), new TextEncoder().encode('b'.repeat(30_000))],
    };
    // Rewritten in place (truncated, then written a piece at a time) with pauses the watch
    // settles in: a read that starts in a pause ends in the next rewrite.
    for (let round = 0; round < 12; round++) {
      for (const [name, both] of Object.entries(states)) {
        const bytes = both[round % 2]!;
        const fd = openSync(join(tree, name), 'w');
        for (let at = 0; at < bytes.length; at += 256 << 10) {
          writeSync(fd, bytes, at, Math.min(256 << 10, bytes.length - at));
          await sleep(2);
        }
        closeSync(fd);
      }
      await sleep(60 + 40 * (round % 3));
    }
    // The last state is stored in the end; every version is one of the states.
    await eventually(async () => {
      for (const [name, both] of Object.entries(states)) expect(await store.resolve(`notes/${name}`)).toBe(sha(both[1]!));
    }, 30_000);
    await w.close();
    for (const [name, both] of Object.entries(states)) {
      const good = new Set(both.map(sha));
      const versions = await store.versions(`notes/${name}`);
      expect(versions.length).toBeGreaterThan(0);
      for (const v of versions) expect(good.has(v.digest), `${name}@${v.version}: ${v.size} bytes, no state the file had`).toBe(true);
    }
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
    await store.close();
  });

  it('a file held open and written to without pause is still stored once it has waited the most it may (it was refused at every read)', { timeout: 60_000 }, async () => {
    const root = tmp();
    const tree = join(root, 'logs');
    mkdirSync(tree, { recursive: true });
    const store = await Store.init(join(root, 'store'));
    const w = store.watch(tree, { settleMs: 50, openMaxMs: 1500 });
    await w.ready;
    const fd = openSync(join(tree, 'daemon.log'), 'a');
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        writeSync(fd, `line ${i} of a log that never pauses\n`);
        await sleep(5);
      }
    })();
    try {
      await eventually(async () => expect((await store.versions('logs/daemon.log')).length).toBeGreaterThan(0), 20_000);
      // What was stored is the log as it was then: a prefix of it, whole lines.
      const [first] = await store.versions('logs/daemon.log');
      const bytes = new TextDecoder().decode(await store.getBytes(first!.digest));
      expect(bytes).toMatch(/^(line \d+ of a log that never pauses\n)+/);
    } finally {
      writing = false;
      await writer;
      closeSync(fd);
      await w.close();
      await store.close();
    }
  });

  it('says each file whose name is not UTF-8, at the catch-up and as it changes (it stored nothing, and said nothing)', { timeout: 30_000 }, async () => {
    const root = tmp();
    const tree = join(root, 'u');
    mkdirSync(tree, { recursive: true });
    writeFileSync(join(tree, 'ok.txt'), 'ok');
    const badPath = (name: string) => Buffer.concat([Buffer.from(`${tree}/${name}`), Buffer.from([0xff]), Buffer.from('.txt')]);
    writeFileSync(badPath('before'), 'x');
    const store = await Store.init(join(root, 'store'));
    const events: WatchEvent[] = [];
    const w = store.watch(tree, { settleMs: 50, onEvent: (e) => events.push(e) });
    await w.ready;
    const said = () => events.filter((e) => e.type === 'error' && /not valid UTF-8/.test(e.message)).map((e) => (e as { path: string }).path);
    expect(said()).toEqual([expect.stringMatching(/before\\xff\.txt$/)]);
    writeFileSync(badPath('during'), 'y');
    await eventually(() => expect(said()).toHaveLength(2));
    expect(said()[1]).toMatch(/during\uFFFD\.txt$/);
    expect(await paths(store, 'u/')).toEqual(['u/ok.txt']);
    await w.close();
    await store.close();
  });

  it('closing the store closes its watches: nothing runs on a closed store afterwards', { timeout: 30_000 }, async () => {
    const root = tmp();
    const tree = join(root, 'notes');
    mkdirSync(tree);
    const store = await Store.init(join(root, 'store'));
    const events: WatchEvent[] = [];
    const polled = store.watch(tree, { pollMs: 100, onEvent: (e) => events.push(e) });
    const heard = store.watch(tree, { prefix: 'heard/', onEvent: (e) => events.push(e) });
    await Promise.all([polled.ready, heard.ready]);
    await store.close(); // (no watch.close(): their timers kept running, each tick on a closed store)
    writeFileSync(join(tree, 'late.md'), 'after the close\n');
    await sleep(2_500);
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
    await polled.close(); // harmless again
  });

  it('polls a folder instead of listening to the OS when asked (network file systems)', { timeout: 30_000 }, async () => {
    const root = tmp();
    const tree = join(root, 'share');
    mkdirSync(tree);
    writeFileSync(join(tree, 'a.txt'), 'one');
    const store = await Store.init(join(root, 'store'));
    const events: WatchEvent[] = [];
    expect(() => store.watch(tree, { pollMs: 5 })).toThrow(/pollMs/);
    // A prefix no put may make is refused before anything is stored (each file failed, while
    // the watch said it was watching: a trial).
    for (const prefix of ['/', '/abs/', '../up/', 'a//b/', './a/']) expect(() => store.watch(tree, { prefix }), prefix).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', field: 'prefix' }));
    // A folder named like a version is a folder: its files' paths are valid (found in review).
    const dated = store.watch(tree, { prefix: 'photos@2/', pollMs: 1000 });
    await dated.close();
    const w = store.watch(tree, { pollMs: 200, onEvent: (e) => events.push(e) });
    try {
      await w.ready;
      expect(events[0]).toMatchObject({ type: 'scanning', reason: expect.stringMatching(/polling/) });
      writeFileSync(join(tree, 'b.txt'), 'two');
      writeFileSync(join(tree, 'a.txt'), 'one, edited');
      await eventually(async () => {
        expect(await paths(store, 'share/')).toEqual(['share/a.txt', 'share/b.txt']);
        expect(await text(store, 'share/a.txt')).toBe('one, edited');
      });
      rmSync(join(tree, 'b.txt'));
      await eventually(async () => expect(await paths(store, 'share/')).toEqual(['share/a.txt']));
    } finally {
      await w.close();
      await store.close();
    }
  });
});

describe('watch: folders renamed, swapped, deleted (a trial)', () => {
  it('a folder renamed and one made at its old name at once: the old folder\'s other files go; swapped folders match the disk; closing after moves never fails', { timeout: 60_000 }, async () => {
    const root = tmp();
    const tree = join(root, 'notes');
    mkdirSync(tree);
    const store = await Store.init(join(root, 'store'));
    const w = store.watch(tree, { settleMs: 200 });
    try {
      await w.ready;
      mkdirSync(join(tree, 'x'));
      writeFileSync(join(tree, 'x', '1.md'), 'x1\n');
      writeFileSync(join(tree, 'x', '2.md'), 'x2\n');
      await eventually(async () => expect(await paths(store, 'notes/')).toEqual(['notes/x/1.md', 'notes/x/2.md']));
      renameSync(join(tree, 'x'), join(tree, 'y'));
      mkdirSync(join(tree, 'x'));
      writeFileSync(join(tree, 'x', '1.md'), 'new x\n');
      // notes/x/2.md stayed, as if on disk, until the hourly check.
      await eventually(async () => expect(await paths(store, 'notes/')).toEqual(['notes/x/1.md', 'notes/y/1.md', 'notes/y/2.md']));
      expect(await text(store, 'notes/x/1.md')).toBe('new x\n');
      // Two folders swapped at once.
      mkdirSync(join(tree, 'z'));
      writeFileSync(join(tree, 'z', '3.md'), 'z3\n');
      await eventually(async () => expect(await paths(store, 'notes/z/')).toEqual(['notes/z/3.md']));
      renameSync(join(tree, 'x'), join(tree, 'tmp'));
      renameSync(join(tree, 'z'), join(tree, 'x'));
      renameSync(join(tree, 'tmp'), join(tree, 'z'));
      await eventually(async () => expect(await paths(store, 'notes/')).toEqual(['notes/x/3.md', 'notes/y/1.md', 'notes/y/2.md', 'notes/z/1.md']));
      // Trees moved out, back in and deleted: the OS's watches of them are gone.
      for (let i = 0; i < 10; i++) {
        mkdirSync(join(tree, 'burst', `d${i}`, 'e'), { recursive: true });
        writeFileSync(join(tree, 'burst', `d${i}`, 'e', 'f'), `${i}`);
      }
      await eventually(async () => expect(await paths(store, 'notes/burst/')).toHaveLength(10));
      renameSync(join(tree, 'burst'), join(root, 'out'));
      await eventually(async () => expect(await paths(store, 'notes/burst/')).toEqual([]));
      renameSync(join(root, 'out'), join(tree, 'b2'));
      await eventually(async () => expect(await paths(store, 'notes/b2/')).toHaveLength(10));
      rmSync(join(tree, 'b2'), { recursive: true });
      await eventually(async () => expect(await paths(store, 'notes/b2/')).toEqual([]));
    } finally {
      await w.close(); // ("Unable to remove watcher: Invalid argument": it threw)
      await store.close();
    }
  });
});
