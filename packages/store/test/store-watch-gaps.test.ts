/**
 * What the OS's notifications miss, and the watch finds anyway (decision 0067): directories
 * inside a directory that appeared while watching (`mkdir -p`, a tree moved in), which
 * @parcel/watcher never follows; a directory whose notice was lost with its first files (a
 * faulty twin of the OS watcher drops them, as @parcel/watcher does under a burst); a file
 * whose every notice was lost, found by the periodic check.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { subscribe } from '@parcel/watcher';
import { afterAll, describe, expect, it } from 'vitest';
import { Store, type OsWatcher, type WatchEvent } from '../src/node/index.js';
import { eventually, sleep } from './helpers/eventually.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'kura-watch-gaps-'));
  dirs.push(d);
  return d;
}
const text = async (store: Store, ref: string) => new TextDecoder().decode(await store.getBytes(await store.resolve(ref)));

/** The real OS watcher, with every notice of a path `drop` names thrown away (as a lost event is). */
function dropping(drop: (path: string) => boolean): OsWatcher {
  return (dir, onEvents, opts) => subscribe(dir, (err, events) => onEvents(err, events.filter((e) => !drop(e.path))), opts);
}

describe('kura watch: changes the OS does not report', () => {
  it('hears files made later in directories made with mkdir -p and in a tree moved in', { timeout: 60_000 }, async () => {
    const root = tmp();
    const tree = join(root, 'notes');
    mkdirSync(tree);
    const store = await Store.init(join(root, 'store'));
    const events: WatchEvent[] = [];
    const w = store.watch(tree, { onEvent: (e) => events.push(e) });
    try {
      await w.ready;
      // Empty directories: nothing to store, the OS watcher follows only `a`.
      mkdirSync(join(tree, 'a', 'b', 'c', 'd'), { recursive: true });
      // A tree moved in from outside: the OS watcher follows only `proj`.
      const outside = join(root, 'proj');
      mkdirSync(join(outside, 'src', 'deep'), { recursive: true });
      writeFileSync(join(outside, 'src', 'deep', 'x.txt'), 'moved in');
      renameSync(outside, join(tree, 'proj'));
      await eventually(async () => expect(await text(store, 'notes/proj/src/deep/x.txt')).toBe('moved in'));
      await sleep(300);
      // Later changes in those directories, and in a directory made inside one of them.
      writeFileSync(join(tree, 'a', 'b', 'c', 'd', 'late.txt'), 'deep and late');
      writeFileSync(join(tree, 'a', 'b', 'late2.txt'), 'halfway');
      writeFileSync(join(tree, 'proj', 'src', 'deep', 'x.txt'), 'edited in place');
      mkdirSync(join(tree, 'proj', 'src', 'deep', 'newer'));
      await sleep(200);
      writeFileSync(join(tree, 'proj', 'src', 'deep', 'newer', 'y.txt'), 'in a directory made later');
      await eventually(async () => {
        expect(await text(store, 'notes/a/b/c/d/late.txt')).toBe('deep and late');
        expect(await text(store, 'notes/a/b/late2.txt')).toBe('halfway');
        expect(await text(store, 'notes/proj/src/deep/x.txt')).toBe('edited in place');
        expect(await text(store, 'notes/proj/src/deep/newer/y.txt')).toBe('in a directory made later');
      });
      // Deleted there too: heard, the path deleted (its versions kept).
      rmSync(join(tree, 'proj', 'src', 'deep', 'x.txt'));
      await eventually(async () => expect(await store.resolve('notes/proj/src/deep/x.txt').catch((e: { code?: string }) => e.code)).toBe('NOT_FOUND'));
      // A followed directory deleted whole, and one made again at its path: heard again.
      rmSync(join(tree, 'proj'), { recursive: true });
      await eventually(async () => expect((await store.list({ pathPrefix: 'notes/proj/' })).items).toEqual([]));
      mkdirSync(join(tree, 'proj', 'src'), { recursive: true });
      await sleep(300);
      writeFileSync(join(tree, 'proj', 'src', 'again.txt'), 'made again');
      await eventually(async () => expect(await text(store, 'notes/proj/src/again.txt')).toBe('made again'));
      expect(events.filter((e) => e.type === 'error')).toEqual([]);
    } finally {
      await w.close();
      await store.close();
    }
  });

  it('scans a directory whose notice was lost, with its first files, when a change under it is heard', { timeout: 60_000 }, async () => {
    const root = tmp();
    const tree = join(root, 'data');
    mkdirSync(tree);
    const store = await Store.init(join(root, 'store'));
    const events: WatchEvent[] = [];
    // As @parcel/watcher loses them in a burst: the directory's notice, and those of the files
    // made in it before it was followed.
    // (`inner`, made at once inside it, is one of those: its notice would have `lost` scanned.)
    const lost = (p: string) => /\/lost(\/inner)?$|\/lost\/(inner\/)?early/.test(p);
    const w = store.watch(tree, { osWatcher: dropping(lost), onEvent: (e) => events.push(e) });
    try {
      await w.ready;
      mkdirSync(join(tree, 'lost', 'inner'), { recursive: true });
      writeFileSync(join(tree, 'lost', 'early1.txt'), 'first');
      writeFileSync(join(tree, 'lost', 'early2.txt'), 'second');
      writeFileSync(join(tree, 'lost', 'inner', 'early3.txt'), 'third, deeper');
      await sleep(600); // nothing heard: nothing stored
      expect((await store.list({ pathPrefix: 'data/' })).items).toEqual([]);
      writeFileSync(join(tree, 'lost', 'late.txt'), 'heard');
      await eventually(async () => {
        expect(await text(store, 'data/lost/late.txt')).toBe('heard');
        expect(await text(store, 'data/lost/early1.txt')).toBe('first');
        expect(await text(store, 'data/lost/early2.txt')).toBe('second');
        expect(await text(store, 'data/lost/inner/early3.txt')).toBe('third, deeper');
      });
      expect(events.filter((e) => e.type === 'error')).toEqual([]);
    } finally {
      await w.close();
      await store.close();
    }
  });

  it('stores, at the periodic check, a change whose every notice was lost, and says so', { timeout: 60_000 }, async () => {
    const root = tmp();
    const tree = join(root, 'docs');
    mkdirSync(tree);
    writeFileSync(join(tree, 'kept.txt'), 'v1');
    writeFileSync(join(tree, 'unheard-gone.txt'), 'deleted unheard');
    const store = await Store.init(join(root, 'store'));
    const events: WatchEvent[] = [];
    const w = store.watch(tree, { osWatcher: dropping((p) => p.includes('unheard')), rescanMs: 1500, onEvent: (e) => events.push(e) });
    try {
      await w.ready;
      expect(await text(store, 'docs/unheard-gone.txt')).toBe('deleted unheard');
      writeFileSync(join(tree, 'unheard.txt'), 'never reported');
      rmSync(join(tree, 'unheard-gone.txt'));
      writeFileSync(join(tree, 'kept.txt'), 'v2'); // heard: stored before the check
      await eventually(async () => expect(await text(store, 'docs/kept.txt')).toBe('v2'), 1000);
      expect(await store.resolve('docs/unheard.txt').catch((e: { code?: string }) => e.code)).toBe('NOT_FOUND');
      await eventually(async () => {
        expect(await text(store, 'docs/unheard.txt')).toBe('never reported');
        expect(await store.resolve('docs/unheard-gone.txt').catch((e: { code?: string }) => e.code)).toBe('NOT_FOUND');
      });
      const said = events.filter((e) => e.type === 'scanning');
      expect(said).toHaveLength(1);
      expect(said[0]).toMatchObject({ reason: expect.stringMatching(/periodic check .* found 1 file\(s\) changed and 1 deleted that had not been heard of/) });
      // kept.txt is stored once (v1 at the catch-up, v2 heard): the check does not store it again.
      expect((await store.versions('docs/kept.txt')).length).toBe(2);
      // A check that finds nothing says nothing.
      await sleep(2000);
      expect(events.filter((e) => e.type === 'scanning')).toHaveLength(1);
    } finally {
      await w.close();
      await store.close();
    }
  });

  it('follows a tree the periodic check found (all its notices lost): a later change in it is heard, not left for the next check', { timeout: 60_000 }, async () => {
    const root = tmp();
    const tree = join(root, 'docs');
    mkdirSync(tree);
    const store = await Store.init(join(root, 'store'));
    const events: WatchEvent[] = [];
    // Every notice of ghost/ and below is lost (the OS watcher's); the watch's own are not.
    const w = store.watch(tree, { osWatcher: dropping((p) => p.includes('/ghost')), rescanMs: 3000, onEvent: (e) => events.push(e) });
    try {
      await w.ready;
      mkdirSync(join(tree, 'ghost', 'sub'), { recursive: true });
      writeFileSync(join(tree, 'ghost', 'sub', 'a.txt'), 'found by the check');
      await eventually(() => expect(events.some((e) => e.type === 'scanning')).toBe(true));
      expect(await text(store, 'docs/ghost/sub/a.txt')).toBe('found by the check');
      writeFileSync(join(tree, 'ghost', 'sub', 'late.txt'), 'heard at once');
      await eventually(async () => expect(await text(store, 'docs/ghost/sub/late.txt')).toBe('heard at once'), 1200);
    } finally {
      await w.close();
      await store.close();
    }
  });
});
