/**
 * The library's calls as a developer meets them (a library trial): a misspelt option is refused
 * with INVALID_INPUT and changes nothing — `deletePath(p, { keepversions: true })` deleted the
 * history it meant to keep, `forgetSnapshots({ within: '5d' })` removed every snapshot not kept
 * otherwise — options given first to verify are its options, an unknown search mode is
 * INVALID_INPUT (it was "needs a model"), and the error helpers ERRORS.md names come with
 * @kura/store.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isKuraError, KURA_ERROR_CODES, storageError, type KuraErrorCode } from '../src/index.js';
import { newStore, reopen, tempDir } from './helpers/store.js';
import { Store } from '../src/node/index.js';
import { MemoryObjectStore } from '../src/objects/memory-objects.js';

const text = (t: string) => new TextEncoder().encode(t);
const refused = (field?: string) => ({ code: 'INVALID_INPUT', ...(field ? { field } : {}) });

describe('options a developer gives the library', () => {
  it('a misspelt option is refused, and nothing changes', async () => {
    const { store } = await newStore();
    await store.put(text('v1'), { path: 'plan.md' });
    await store.put(text('v2'), { path: 'plan.md' });
    await expect(store.deletePath('plan.md', { keepversions: true } as object)).rejects.toMatchObject(refused('keepversions'));
    expect((await store.versions('plan.md')).map((v) => v.version)).toEqual([1, 2]);
    const src = tempDir('kura-options-src-');
    mkdirSync(join(src, 'node_modules'));
    writeFileSync(join(src, 'node_modules', 'x.js'), 'x');
    await expect(store.snapshot(src, { exlude: ['node_modules'] } as object)).rejects.toMatchObject(refused('exlude'));
    expect(await store.snapshots()).toEqual([]);
    const snap = await store.snapshot(src, { exclude: ['node_modules'] });
    await expect(store.restore(snap.id, join(src, 'out'), { overwrit: true } as object)).rejects.toMatchObject(refused('overwrit'));
    const outcomes = [];
    await expect(async () => {
      for await (const o of store.putFiles([{ path: join(src, 'node_modules', 'x.js') }], { worker: 0 } as object)) outcomes.push(o);
    }).rejects.toMatchObject(refused('worker'));
    await expect(store.indexStatus({ wiat: true } as object)).rejects.toMatchObject(refused('wiat'));
    await expect(store.deletePath('plan.md', null as unknown as object)).rejects.toMatchObject(refused());
  });

  it('every call with options refuses one it does not know, or of the wrong type, and changes nothing (applyPolicies({ dryrun }) removed versions: a trial)', async () => {
    const { store } = await newStore();
    for (let v = 1; v <= 3; v++) await store.put(text(`build v${v}`), { path: 'cache/out.js' });
    await store.setPolicy({ kind: 'versions', prefix: 'cache/', keep: 1 });
    await expect(store.applyPolicies({ dryrun: true } as object)).rejects.toMatchObject(refused('dryrun'));
    await expect(store.applyPolicies({ dryRun: 'yes' } as object)).rejects.toMatchObject(refused('dryRun'));
    expect((await store.versions('cache/out.js')).map((v) => v.version)).toEqual([1, 2, 3]);
    await expect(store.put(text('x'), { path: 'a.txt' }, { lsited: false } as object)).rejects.toMatchObject(refused('lsited'));
    await expect(store.put(text('x'), { path: 'a.txt' }, { listed: 'no' } as object)).rejects.toMatchObject(refused('listed'));
    await expect(store.put(text('x'), {}, { onChunk: 5 } as object)).rejects.toMatchObject(refused('onChunk'));
    expect((await store.list()).items.map((i) => i.path)).toEqual(['cache/out.js']);
    const digest = (await store.versions('cache/out.js'))[0]!.digest;
    await expect(store.document(digest, { unlsited: true } as object)).rejects.toMatchObject(refused('unlsited'));
    await expect(store.manifest(digest, { unlisted: 1 } as object)).rejects.toMatchObject(refused('unlisted'));
    await expect(store.pathVersion('cache/out.js', { verison: 1 } as object)).rejects.toMatchObject(refused('verison'));
    await expect(store.deletedPaths({ prefix: 'cache/' } as object)).rejects.toMatchObject(refused('prefix'));
    await expect(store.link(digest, { path: 'b.js' }, { newversion: true } as object)).rejects.toMatchObject(refused('newversion'));
    await expect(store.putChunk(text('c'), { holdms: 5 } as object)).rejects.toMatchObject(refused('holdms'));
    await expect(store.commitChunks([], { path: 'c.js' }, { maxsize: 5 } as object)).rejects.toMatchObject(refused('maxsize'));
    await expect(store.gc(123 as unknown as () => void)).rejects.toMatchObject(refused('onProgress'));
    expect((await store.list()).items.map((i) => i.path)).toEqual(['cache/out.js']);
    // The right spellings work.
    expect((await store.applyPolicies({ dryRun: true }))[0]!.report.remove).toHaveLength(2);
    expect((await store.pathVersion('cache/out.js', { version: 2 })).version).toBe(2);
  });

  it("a string given to put is a file's path: one that is not there, or a directory, is a KuraError naming it (it was Node's ENOENT)", async () => {
    const { store } = await newStore();
    const missing = await store.put('hello world').catch((e: unknown) => e);
    expect(isKuraError(missing)).toBe(true);
    expect(missing).toMatchObject({ code: 'NOT_FOUND', message: expect.stringMatching(/no file "hello world": a string given to put is a file's path/) });
    await expect(store.put(tempDir('kura-put-dir-'))).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'input', message: expect.stringMatching(/is a directory/) });
    expect((await store.list()).items).toEqual([]);
  });

  it('reading a large document gives the event loop turns: timers run while it is read (a trial: 0 of 318 in 3.2 s)', async () => {
    const { store } = await newStore();
    const big = new Uint8Array(48 << 20);
    for (let i = 0; i < big.length; i += 512) big[i] = (i * 2654435761) >>> 24;
    const { digest } = await store.put(big);
    for (const read of [async () => { for await (const p of store.get(digest)) void p; }, () => store.getBytes(digest), async () => { for await (const p of (await store.document(digest)).range(0, big.length)) void p; }]) {
      let fired = 0;
      const timer = setInterval(() => fired++, 5);
      const started = performance.now();
      try {
        await read();
      } finally {
        clearInterval(timer);
      }
      // A turn every 25 ms of reading at most (breather.ts): at least one per 100 ms.
      expect(fired).toBeGreaterThanOrEqual(Math.floor((performance.now() - started) / 100));
    }
  }, 60_000);

  it('forget reads within as a duration or its text, and refuses any other shape before it removes anything', async () => {
    const { store } = await newStore();
    const src = tempDir('kura-options-forget-');
    for (const days of [30, 2, 1]) {
      writeFileSync(join(src, 'f'), `day ${days}`);
      await store.snapshot(src, { time: Date.now() - days * 86_400_000 });
    }
    // Within 5 days of the newest: the two recent ones, whichever way it is written.
    for (const within of ['5d', { days: 5 }, { years: 0, months: 0, days: 5, hours: 0 }]) {
      expect((await store.forgetSnapshots({ within, dryRun: true })).remove.length, JSON.stringify(within)).toBe(1);
    }
    for (const within of [5, {}, { day: 5 }, { days: -1 }, { days: 1.5 }, 'five days', null]) {
      await expect(store.forgetSnapshots({ within: within as unknown as string })).rejects.toMatchObject(refused('within'));
    }
    await expect(store.forgetSnapshots({ keepLast: 1 } as object)).rejects.toMatchObject(refused('keepLast'));
    await expect(store.forgetSnapshots({ tags: ['x'] } as unknown as object)).rejects.toMatchObject(refused('tags'));
    expect(await store.snapshots()).toHaveLength(3);
    await store.put(text('a'), { path: 'p' });
    await store.put(text('b'), { path: 'p' });
    await expect(store.forgetVersions({ within: { dayz: 3 } } as unknown as object)).rejects.toMatchObject(refused('within'));
    await expect(store.forgetVersions({ keep: 1, prefx: 'p' } as object)).rejects.toMatchObject(refused('prefx'));
    expect((await store.versions('p')).map((v) => v.version)).toEqual([1, 2]);
    expect((await store.forgetVersions({ within: '3d' })).remove).toEqual([]); // (both made now)
  });

  it("verify takes its options first too; an unknown search mode is INVALID_INPUT with or without a model", async () => {
    const { store } = await newStore();
    await store.put(text('a note'), { path: 'n.txt' });
    expect(await store.verify({ readData: false })).toMatchObject({ ok: true, dataRead: false });
    await expect(store.verify(undefined, { readdata: false } as object)).rejects.toMatchObject(refused('readdata'));
    await expect(store.search('note', { mode: 'fuzzy' as 'keyword' })).rejects.toMatchObject(refused('mode'));
  });

  it('a reader or stream taken before close() fails with STORE_CLOSED after it (it was a TypeError of SQLite)', async () => {
    const { store: first, dir } = await newStore();
    const { digest } = await first.put(new Uint8Array(8 << 20).map((_, i) => (i * 7919) & 255), { path: 'a' });
    await first.close();
    const store = await reopen(dir);
    const stream = store.get(digest);
    const reader = await store.document(digest);
    await store.close();
    await expect((async () => {
      for await (const _ of stream) void _;
    })()).rejects.toMatchObject({ code: 'STORE_CLOSED' });
    await expect(reader.bytes()).rejects.toMatchObject({ code: 'STORE_CLOSED' });
  });

  it('Store.init of a plain directory says why an option its type offers does not apply (it was zod\'s "Unrecognized key")', async () => {
    const dir = tempDir('kura-options-init-');
    await expect(Store.init(join(dir, 'a'), { cacheDir: join(dir, 'c') })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'cacheDir', message: expect.stringMatching(/object storage or an encrypted one/) });
    await expect(Store.init(join(dir, 'b'), { password: 'p' })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'password', message: expect.stringMatching(/only with encryption/) });
    const s = await Store.init(join(dir, 'd'), { password: 'correct horse battery', encryption: {}, cacheDir: join(dir, 'cache') });
    await s.close();
  });

  it('a store opened read-only says how many changes its keyword index lacks (a writer has not indexed them yet)', async () => {
    const { store: writer, dir } = await newStore();
    const reader = await reopen(dir, { readonly: true });
    try {
      await writer.put(text('okapi sighting report'), { path: 'okapi.txt' });
      // Right after the put the writer's indexer is still waiting for puts to pause (QUIET_MS):
      // the reader either finds it already, or is told it could not.
      const hits = await reader.search('okapi');
      expect(hits.length + (hits.notIndexed ?? 0)).toBe(1);
      await writer.indexStatus({ wait: true });
      const after = await reader.search('okapi');
      expect([after.length, after.notIndexed]).toEqual([1, undefined]);
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  it("a put at a path answers the path's version: the one it made, or the latest that already had its bytes", async () => {
    for (const objects of [false, true]) {
      const { store } = objects ? { store: await Store.initObjects(new MemoryObjectStore(), { cacheDir: tempDir('kura-options-cache-') }) } : await newStore();
      expect(await store.put(text('a'), { path: 'n.md' })).toMatchObject({ version: 1, versionMade: true });
      expect(await store.put(text('b'), { path: 'n.md' })).toMatchObject({ version: 2, versionMade: true });
      expect(await store.put(text('b'), { path: 'n.md' })).toMatchObject({ version: 2, versionMade: false });
      const pathless = await store.put(text('c'));
      expect('version' in pathless).toBe(false);
      // Many at once at one path: each answer is its own version, as versions() lists them.
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => store.put(text(`v${i}`), { path: 'busy.md' })));
      const listed = new Map((await store.versions('busy.md')).map((v) => [v.digest, v.version]));
      for (const a of answers) expect([a.version, a.versionMade]).toEqual([listed.get(a.digest), true]);
      expect(new Set(answers.map((a) => a.version)).size).toBe(40);
      // Through the workers too (putFiles).
      const dir = tempDir('kura-options-files-');
      writeFileSync(join(dir, 'f.txt'), 'file one');
      for await (const o of store.putFiles([{ path: join(dir, 'f.txt'), meta: { path: 'n.md' } }], { workers: 1 })) expect(o.result).toMatchObject({ version: 3, versionMade: true });
      await store.close();
    }
  });

  it('the error helpers ERRORS.md names come with @kura/store; a browser past its quota is STORAGE_FULL', () => {
    const code: KuraErrorCode = 'STORAGE_FULL';
    expect(KURA_ERROR_CODES).toContain(code);
    const full = storageError(new DOMException('No space available for this operation', 'QuotaExceededError'), 'pack p');
    expect(isKuraError(full) && full.code).toBe('STORAGE_FULL');
  });
});
