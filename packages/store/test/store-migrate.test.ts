/**
 * A store made by the schema-5 release (test/fixtures/store-schema5, made with that release's
 * CLI: its README says how) opens with today's code and is converted once, nothing lost:
 * every path, version, tag, metadata key, snapshot and byte is still there, in the entry model
 * of decision 0025.
 */
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalDump } from './helpers/dump.js';
import { reopen, tempDir } from './helpers/store.js';

const utf8 = (s: string) => new TextEncoder().encode(s);
const FIXTURE = join(import.meta.dirname, 'fixtures', 'store-schema5');

const LICENSE = 'sha256:d525107c3ccd8ed5cee7b08640f50360d70137c3bd2169f10675ddd42466062c';
const SHARED = 'sha256:b4fe763c9b6ad2a60842f3e342ac01f1e85da4dbe850c304b1565d358a013762';
const README = 'sha256:89a094c1be544cef8022aba995aac55c265ea06aaf550e08260f54dbc5a07325';
const TODAY_1 = 'sha256:4053adc452eb03a00b423a0806ca147c13c2ea3a39a00791e2919c2e2225cafc';
const TODAY_2 = 'sha256:084e158e7df2631105d0016a350e6b46362fe1fb3aa61d30d4c0aed1981e8673';
const STDIN = 'sha256:789785d57ce88a40d9ee787690eb0bc544f1aea43ee3927fac241a366a97940a';
const REMOVED = 'sha256:802e759519141488209a99f8cb814d8a6674d5c2b99996fbe0b20a41881b4c27';

async function converted() {
  return (await convertedIn()).store;
}

async function convertedIn() {
  const dir = join(tempDir(), 'store');
  cpSync(FIXTURE, dir, { recursive: true });
  return { store: await reopen(dir), dir };
}

describe('a schema-5 store', () => {
  it('becomes one entry per path and per pathless put, with the tags and metadata it showed', async () => {
    const store = await converted();
    const { items } = await store.list({ limit: 100 });
    const shown = items.map((e) => ({ path: e.path, digest: e.digest, version: e.version, tags: e.tags, meta: e.meta, mediaType: e.mediaType }));
    expect(shown).toEqual([
      { path: 'LICENSE', digest: LICENSE, version: 1, tags: ['fixture'], meta: { author: 'ada', src: 'v5' }, mediaType: null },
      // (added in one commit: the same first-version time, then by path)
      { path: 'readme-copy.md', digest: README, version: 1, tags: ['fixture'], meta: { src: 'v5' }, mediaType: 'text/markdown' },
      { path: 'shared.txt', digest: SHARED, version: 1, tags: ['fixture'], meta: { src: 'v5' }, mediaType: 'text/plain' },
      { path: 'today.md', digest: TODAY_2, version: 2, tags: ['notes', 'reviewed'], meta: {}, mediaType: 'text/markdown' },
      { path: null, digest: STDIN, version: null, tags: [], meta: {}, mediaType: null },
    ]);
    const stats = await store.stats();
    expect({ entries: stats.entries, documents: stats.documents, logical: stats.logicalBytes }).toEqual({ entries: 5, documents: 5, logical: 34 + 16 + 12_561 + 28 + 26 });
  });

  it('keeps every version, byte and snapshot', async () => {
    const store = await converted();
    expect((await store.versions('today.md')).map((v) => [v.version, v.digest])).toEqual([
      [1, TODAY_1],
      [2, TODAY_2],
    ]);
    expect(new TextDecoder().decode(await store.getBytes(await store.resolve('today.md@1')))).toBe('harbour notes, first draft\n');
    // And searching through history finds it (the history index and spans of schema 19).
    expect((await store.search('"first draft"', { allVersions: true })).map((h) => `${h.path}@${h.version}`)).toEqual(['today.md@1']);
    expect(await store.getBytes(LICENSE)).toEqual(utf8('MIT License\nCopyright (c) fixture\n'));
    // The old version has no entry of its own: its content shows, without attributes.
    expect(await store.stat(TODAY_1)).toMatchObject({ path: null, digest: TODAY_1, tags: [] });
    // The deleted put that a snapshot still held stays out of sight, and the snapshot whole.
    expect(await store.has(REMOVED)).toBe(false);
    const [snap] = await store.snapshots();
    expect(snap).toMatchObject({ label: 'fixture', files: 2 });
    const files = [];
    for await (const e of store.snapshotEntries(snap!.id)) if (e.entry.type === 'file') files.push([e.path, e.entry.digest]);
    expect(files).toEqual([
      ['only.txt', REMOVED],
      ['sub/shared.txt', SHARED],
    ]);
    expect((await store.verify()).ok).toBe(true);
  });

  it('searches the converted entries, and takes new puts at new paths beside the old ones', async () => {
    const store = await converted();
    expect((await store.search('harbour')).map((h) => h.path)).toEqual(['today.md', 'readme-copy.md']);
    await store.put(utf8('MIT License\nCopyright (c) fixture\n'), { path: 'b/LICENSE', tags: ['b'] });
    expect((await store.stat('LICENSE')).tags).toEqual(['fixture']);
    expect((await store.stat('b/LICENSE')).tags).toEqual(['b']);
    await expect(store.addTags(LICENSE, ['x'])).rejects.toMatchObject({ code: 'AMBIGUOUS', paths: ['LICENSE', 'b/LICENSE'] });
  });

  it('starts a log: its catalog is checkpointed at seq 0, and kura.db is rebuilt from checkpoint + commits', async () => {
    const { store, dir } = await convertedIn();
    expect(existsSync(join(dir, 'kura-store.json'))).toBe(true);
    expect(readdirSync(join(dir, 'checkpoints'))).toEqual(['00000000000000000000']);
    await store.put(utf8('after the log began\n'), { path: 'new.txt', tags: ['fresh'] });
    await store.addTags('LICENSE', ['logged']);
    await store.close();
    const dump = canonicalDump(join(dir, 'kura.db'));
    for (const f of ['kura.db', 'kura.db-wal', 'kura.db-shm']) rmSync(join(dir, f), { force: true });
    const rebuilt = await reopen(dir);
    expect((await rebuilt.stat('LICENSE')).tags).toEqual(['fixture', 'logged']);
    expect((await rebuilt.search('harbour')).map((h) => h.path)).toEqual(['today.md', 'readme-copy.md']);
    await rebuilt.close();
    expect(canonicalDump(join(dir, 'kura.db'))).toBe(dump);
  });
});
