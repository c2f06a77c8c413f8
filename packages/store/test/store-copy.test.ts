/**
 * copyStore (decision 0061) as a property: after any sequence of changes to a source store —
 * puts of versions to a few paths (repeated and shared contents), puts without a path, tag and
 * metadata changes, deleted paths and versions, pins, snapshots — a copy makes the destination
 * show the same entries, versions (digests and times), tags, metadata, snapshots and pins; a
 * second copy right after changes nothing; more changes and another copy bring it level again.
 * And the pieces it rests on: a put's `time` and `version`, `link`, a snapshot's given id.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { copyStore } from '../src/copy/copy-store.js';
import { Store } from '../src/node/index.js';
import { flipByte, tempDir } from './helpers/store.js';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { cpSync } from 'node:fs';
import { rmSync } from 'node:fs';
import { MemoryObjectStore } from '../src/objects/memory-objects.js';
import { HookedObjectStore } from './helpers/hooked-objects.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const fresh = async () => {
  const d = tempDir('kura-copy-');
  dirs.push(d);
  return Store.init(d, { chunking: { avg: 1024 } });
};
const enc = new TextEncoder();
const text = (n: number) => enc.encode(`content ${n}\n`.repeat(1 + (n % 7) * 50));

/** What a user sees of a store, in one value. */
async function seen(s: Store) {
  const entries = [];
  let cursor: string | undefined;
  do {
    const page = await s.list({ limit: 1000, ...(cursor ? { cursor } : {}) });
    entries.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  const key = (e: { path: string | null; digest: string }) => e.path ?? e.digest;
  entries.sort((a, b) => key(a).localeCompare(key(b))); // (the order they were made in may differ)
  const versions = [];
  for (const e of entries) if (e.path !== null) versions.push(await s.versions(e.path));
  // Paths deleted with their versions kept: not listed, yet their history is the store's (a
  // copy left them out, found by a new user's trial), and when they went (it was the copy's
  // time, and retention counts from it: a trial).
  const deleted = [];
  for (const d of await s.deletedPaths({ limit: 10_000 })) deleted.push({ deletedAt: d.deletedAt, versions: await s.versions(d.path) });
  // An entry's createdAt is when its first version still there was made, in a copy: the
  // source's may be older (a version deleted since). Versions keep their numbers and times.
  return { entries: entries.map(({ createdAt: _, ...e }) => e), versions, deleted, snapshots: await s.snapshots() };
}

type Change =
  | { kind: 'put'; path: number; content: number }
  | { kind: 'loose'; content: number }
  | { kind: 'tag'; path: number; tag: number; remove: boolean }
  | { kind: 'meta'; path: number; value: number | null }
  | { kind: 'delete-path'; path: number }
  | { kind: 'delete-path-keep'; path: number; back: boolean }
  | { kind: 'delete-version'; path: number }
  | { kind: 'pin'; path: number }
  | { kind: 'snapshot'; contents: number[] };

const change: fc.Arbitrary<Change> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('put' as const), path: fc.nat(5), content: fc.nat(12) }) },
  fc.record({ kind: fc.constant('loose' as const), content: fc.nat(12) }),
  fc.record({ kind: fc.constant('tag' as const), path: fc.nat(5), tag: fc.nat(3), remove: fc.boolean() }),
  fc.record({ kind: fc.constant('meta' as const), path: fc.nat(5), value: fc.option(fc.nat(3), { nil: null }) }),
  fc.record({ kind: fc.constant('delete-path' as const), path: fc.nat(5) }),
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('delete-path-keep' as const), path: fc.nat(5), back: fc.boolean() }) },
  fc.record({ kind: fc.constant('delete-version' as const), path: fc.nat(5) }),
  fc.record({ kind: fc.constant('pin' as const), path: fc.nat(5) }),
  fc.record({ kind: fc.constant('snapshot' as const), contents: fc.array(fc.nat(20), { minLength: 1, maxLength: 4 }) }),
);

async function apply(s: Store, changes: Change[]): Promise<void> {
  const p = (n: number) => `docs/p${n}.md`;
  const exists = async (path: string) => (await s.versions(path)).length > 0;
  const shown = (path: string) => s.stat(path).then(() => true, () => false); // (deleted with its versions kept: not shown)
  for (const c of changes) {
    if (c.kind === 'put') await s.put(text(c.content), { path: p(c.path), tags: [`t${c.content % 3}`] });
    else if (c.kind === 'loose') await s.put(text(100 + c.content), { tags: ['loose'] });
    else if (!['snapshot'].includes(c.kind) && !(await exists(p((c as { path: number }).path)))) continue;
    else if (['tag', 'meta', 'delete-path-keep'].includes(c.kind) && !(await shown(p((c as { path: number }).path)))) continue;
    else if (c.kind === 'tag') await s.updateMeta([{ path: p(c.path), ...(c.remove ? { removeTags: [`t${c.tag}`] } : { addTags: [`t${c.tag}`] }) }]);
    else if (c.kind === 'meta') await s.updateMeta([{ path: p(c.path), meta: { owner: c.value === null ? null : `o${c.value}` } }]);
    else if (c.kind === 'delete-path') await s.deletePath(p(c.path));
    else if (c.kind === 'delete-path-keep') {
      // Deleted with its versions kept — and (`back`) put again unchanged, as watch does when a file goes and comes back.
      const bytes = c.back ? await s.getBytes((await s.stat(p(c.path))).digest) : undefined;
      await s.deletePath(p(c.path), { keepVersions: true });
      if (bytes) await s.put(bytes, { path: p(c.path) });
    }
    else if (c.kind === 'delete-version') {
      const v = await s.versions(p(c.path));
      if (v.length > 1) await s.deleteVersion(p(c.path), v[0]!.version);
    } else if (c.kind === 'pin') await s.pin({ path: p(c.path), version: (await s.versions(p(c.path)))[0]!.version });
    else if (c.kind === 'snapshot') {
      const files = [];
      for (const [i, n] of c.contents.entries()) {
        const r = await s.put(text(200 + n), {}, { listed: false });
        files.push({ type: 'file' as const, name: `f${i}`, mode: 0o644, size: r.size, digest: r.digest });
      }
      await s.createSnapshot({ type: 'dir', name: '', mode: 0o755, entries: [{ type: 'dir', name: 'sub', mode: 0o700, entries: files }] }, { label: 'l', tags: ['x'] });
    }
  }
}

describe('copyStore', () => {
  it('after any changes, a copy shows what the source shows; again, it changes nothing', { timeout: 240_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(change, { minLength: 1, maxLength: 25 }), fc.array(change, { maxLength: 10 }), async (first, then) => {
        const src = await fresh();
        const dst = await fresh();
        try {
          await apply(src, first);
          const r1 = await copyStore(src, dst);
          expect(r1.errors).toEqual([]);
          expect(await seen(dst)).toEqual(await seen(src));
          const r2 = await copyStore(src, dst);
          expect({ ...r2, versionsPresent: 0, snapshotsPresent: 0, entries: 0 }).toEqual({ ...r2, versionsPresent: 0, snapshotsPresent: 0, entries: 0, versionsCopied: 0, documentsSent: 0, bytesSent: 0, documentsLinked: 0, entriesUpdated: 0, snapshotsCopied: 0, pins: 0 });
          await apply(src, then);
          await copyStore(src, dst);
          // A copy adds, it never deletes: what the source deleted since stays in the
          // destination. So: every entry of the source shows the same content, type, tags and
          // metadata, and every version of the source (its document and time) is among the
          // destination's — also one of the document the path showed there already (a path
          // deleted and put again unchanged).
          const a = await seen(src);
          const b = await seen(dst);
          const shown = (e: (typeof a.entries)[number]) => ({ path: e.path, digest: e.digest, mediaType: e.mediaType, tags: e.tags, meta: e.meta });
          const there = new Map(b.entries.map((e) => [e.path ?? e.digest, e]));
          for (const e of a.entries) expect(shown(there.get(e.path ?? e.digest)!)).toEqual(shown(e));
          for (const vs of [...a.versions, ...a.deleted.map((d) => d.versions)]) {
            const have = (await dst.versions(vs[0]!.path)).map((v) => `${v.digest} ${v.createdAt}`);
            for (const v of vs) {
              const at = have.indexOf(`${v.digest} ${v.createdAt}`);
              expect(at, `${v.path}@${v.version} in the destination`).toBeGreaterThanOrEqual(0);
              have.splice(at, 1);
            }
          }
          expect(b.snapshots.filter((x) => a.snapshots.some((y) => y.id === x.id))).toEqual(a.snapshots);
          expect((await dst.verify()).ok).toBe(true);
        } finally {
          await src.close();
          await dst.close();
        }
      }),
      { numRuns: 40 },
    );
  });

  it('versions of the same bytes at the same time are paired one for one: a copy stopped between them is completed (found in review)', async () => {
    const src = await fresh();
    const dst = await fresh();
    try {
      // Puts of one commit share its time: X, Y, X at one path.
      await Promise.all([src.put(text(1), { path: 'a.txt' }), src.put(text(2), { path: 'a.txt' }), src.put(text(1), { path: 'a.txt' })]);
      const versions = await src.versions('a.txt');
      expect(versions.map((v) => v.createdAt).every((t) => t === versions[0]!.createdAt)).toBe(true);
      await src.pin({ path: 'a.txt', version: 3 });
      await copyStore(src, dst);
      // As if the copy had been stopped before the third version: its last version gone.
      await dst.deleteVersion('a.txt', 3);
      expect(Buffer.from(await dst.getBytes((await dst.stat('a.txt')).digest)).equals(Buffer.from(text(2)))).toBe(true);
      const again = await copyStore(src, dst);
      expect(again).toMatchObject({ versionsCopied: 1, versionsPresent: 2, errors: [] });
      expect((await dst.stat('a.txt')).digest).toBe((await src.stat('a.txt')).digest);
      // The pin lands on the version that stands for the source's third, not on the first X.
      expect((await dst.versions('a.txt')).map((v) => [v.digest === versions[0]!.digest, v.pinned])).toEqual([
        [true, false],
        [false, false],
        [true, true],
      ]);
    } finally {
      await src.close();
      await dst.close();
    }
  });

  it('a store onto itself is refused; a file copy of a store (the same store id) is another store, kept up to date', async () => {
    const dir = tempDir('kura-copy-');
    dirs.push(dir);
    const s = await Store.init(dir, { chunking: { avg: 1024 } });
    try {
      await s.put(text(1), { path: 'a' });
      await expect(copyStore(s, s)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'dst' });
      await s.close();
      const twin = tempDir('kura-copy-');
      dirs.push(twin);
      cpSync(dir, twin, { recursive: true });
      const again = await Store.open(dir);
      await again.put(text(2), { path: 'b' });
      const src = await Store.open(dir, { readonly: true });
      const dst = await Store.open(twin);
      try {
        await copyStore(src, dst);
        expect((await dst.list()).items.map((i) => i.path).sort()).toEqual(['a', 'b']);
      } finally {
        await Promise.all([src.close(), dst.close(), again.close()]);
      }
    } finally {
      await s.close().catch(() => undefined);
    }
  });

  it('a put keeps a given time; link names content without bytes; a snapshot keeps a given id, once', async () => {
    const s = await fresh();
    try {
      const r = await s.put(text(1), { path: 'a', time: '2020-02-03T04:05:06.007Z' });
      expect((await s.versions('a'))[0]!.createdAt).toBe('2020-02-03T04:05:06.007Z');
      await expect(s.put(text(2), { path: 'a', time: 'yesterday' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      // A version number asked for is taken when higher than the path's last, else the next.
      await s.put(text(3), { path: 'a', version: 5 });
      await s.put(text(4), { path: 'a', version: 3 });
      expect((await s.versions('a')).map((v) => v.version)).toEqual([1, 5, 6]);
      const linked = await s.link(r.digest, { path: 'b', time: 5000 });
      expect(linked).toMatchObject({ digest: r.digest, newChunks: 0, newBytesStored: 0 });
      expect(await s.versions('b')).toMatchObject([{ version: 1, digest: r.digest, createdAt: new Date(5000).toISOString() }]);
      expect(new TextDecoder().decode(await s.getBytes((await s.stat('b')).digest))).toBe(new TextDecoder().decode(text(1)));
      await expect(s.link(`sha256:${'0'.repeat(64)}`, { path: 'c' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      const id = 'ab'.repeat(16);
      const snap = await s.createSnapshot({ type: 'dir', name: '', mode: 0o755, entries: [] }, { id });
      expect(snap.id).toBe(id);
      await expect(s.createSnapshot({ type: 'dir', name: '', mode: 0o755, entries: [] }, { id })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      await expect(s.createSnapshot({ type: 'dir', name: '', mode: 0o755, entries: [] }, { id: 'nope' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      expect((await s.snapshots()).length).toBe(1);
    } finally {
      await s.close();
    }
  });

  it('deletePath takes when a path went (a copy carries it), only with its versions kept, and only a date', async () => {
    const s = await fresh();
    try {
      await s.put(text(1), { path: 'a.md' });
      await s.put(text(2), { path: 'b.md' });
      await expect(s.deletePath('a.md', { time: '2020-01-02T03:04:05.000Z' })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'time' });
      await expect(s.deletePath('a.md', { keepVersions: true, time: 'not a date' })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'time' });
      expect(await s.stat('a.md')).toMatchObject({ path: 'a.md' }); // (nothing changed)
      await s.deletePath('a.md', { keepVersions: true, time: '2020-01-02T03:04:05.000Z' });
      const b = await s.deletePath('b.md', { keepVersions: true });
      expect(b).toBe(true);
      const gone = await s.deletedPaths();
      expect(gone[0]).toEqual({ path: 'a.md', deletedAt: '2020-01-02T03:04:05.000Z' });
      expect(Date.parse(gone[1]!.deletedAt)).toBeGreaterThan(Date.now() - 60_000);
    } finally {
      await s.close();
    }
  });

  it('a path deleted with its versions kept and put again unchanged has both versions in the copy (left in 0061, now copied)', async () => {
    const src = await fresh();
    const dst = await fresh();
    try {
      await src.put(text(1), { path: 'w.txt', tags: ['kept'], meta: { owner: 'me' } });
      await src.deletePath('w.txt', { keepVersions: true }); // what watch does when the file goes
      await src.put(text(1), { path: 'w.txt' }); // ... and comes back unchanged
      const versions = await src.versions('w.txt');
      expect(versions.map((v) => v.version)).toEqual([1, 2]);
      const first = await copyStore(src, dst);
      expect(first).toMatchObject({ versionsCopied: 2, errors: [] });
      expect(await seen(dst)).toEqual(await seen(src));
      expect(await copyStore(src, dst)).toMatchObject({ versionsCopied: 0, versionsPresent: 2, entriesUpdated: 0 });
      // newVersion names a version of a path: without one it is refused, and nothing changes.
      await expect(dst.link(versions[0]!.digest, {}, { newVersion: true })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      // On its own: the entry is made again with what the link gives.
      await dst.link(versions[0]!.digest, { path: 'w.txt', tags: ['given'] }, { newVersion: true });
      expect((await dst.versions('w.txt')).map((v) => v.version)).toEqual([1, 2, 3]);
      expect(await dst.stat('w.txt')).toMatchObject({ tags: ['given'], meta: {} });
    } finally {
      await src.close();
      await dst.close();
    }
  });

  it('a path the source deleted (versions kept) since an earlier copy is deleted there too; one the destination shows of its own stays', async () => {
    const src = await fresh();
    const dst = await fresh();
    try {
      await src.put(text(1), { path: 'gone.md' });
      await src.put(text(2), { path: 'gone.md' });
      await src.put(text(3), { path: 'mine.md' });
      await copyStore(src, dst);
      await src.deletePath('gone.md', { keepVersions: true }); // (as a killed copy would leave it too: live there, deleted here)
      await src.deletePath('mine.md', { keepVersions: true });
      await dst.put(text(4), { path: 'mine.md' }); // the destination's own, newer
      const r = await copyStore(src, dst);
      expect(r.errors).toEqual([]);
      await expect(dst.stat('gone.md')).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect((await dst.versions('gone.md')).map((v) => v.version)).toEqual([1, 2]);
      expect((await dst.stat('mine.md')).digest).toBe((await dst.versions('mine.md')).at(-1)!.digest);
      expect(await copyStore(src, dst)).toMatchObject({ versionsCopied: 0, documentsSent: 0 });
    } finally {
      await src.close();
      await dst.close();
    }
  });

  it('a path changed in the destination since is a conflict: left as it is there (its newer version, tags and metadata), nothing of it copied', async () => {
    const src = await fresh();
    const dst = await fresh();
    try {
      await src.put(text(1), { path: 'p.txt' });
      await src.put(text(2), { path: 'other.txt' });
      await copyStore(src, dst);
      await src.put(text(3), { path: 'p.txt' }); // the source's v2...
      await new Promise((r) => setTimeout(r, 5));
      await dst.put(text(4), { path: 'p.txt' }); // ...and the destination's own, newer
      await dst.updateMeta([{ path: 'p.txt', addTags: ['reviewed'], meta: { approver: 'carol' } }]);
      await dst.put(text(7), { path: 'other.txt' }); // the destination's own, older than...
      await new Promise((r) => setTimeout(r, 5));
      await src.put(text(5), { path: 'other.txt' }); // ...the source's newer version: copied on top
      const before = await dst.versions('p.txt');
      const r = await copyStore(src, dst);
      // It was copied as @3, older than @2, and shown: the destination's newer bytes hidden,
      // `p.txt@<@2's time>` answered with @3's, its tags and metadata wiped (a trial).
      expect(r.conflicts).toEqual([{ path: 'p.txt', message: expect.stringMatching(/changed in the destination since .*left as it is there/) }]);
      expect(r.errors).toEqual([]);
      expect(await dst.versions('p.txt')).toEqual(before);
      expect(await dst.stat('p.txt')).toMatchObject({ digest: before.at(-1)!.digest, tags: ['reviewed'], meta: { approver: 'carol' } });
      expect((await dst.stat('other.txt')).digest).toBe((await src.stat('other.txt')).digest);
      expect((await dst.versions('other.txt')).length).toBe(3); // v1, its own v2, the source's v2 (newest)
      // Nothing missing, its own version newer: its tags and metadata stay its own (found in review).
      await src.put(text(8), { path: 'third.txt' });
      await copyStore(src, dst);
      await new Promise((r) => setTimeout(r, 5));
      await dst.put(text(9), { path: 'third.txt' });
      await dst.updateMeta([{ path: 'third.txt', addTags: ['mine'] }]);
      const third = await copyStore(src, dst);
      expect(third.conflicts.map((c) => c.path)).toContain('third.txt');
      expect((await dst.stat('third.txt')).tags).toEqual(['mine']);
    } finally {
      await src.close();
      await dst.close();
    }
  });

  it('reads a source on object storage a pack at a time: each pack fetched whole once, the copy whole and checked', async () => {
    const objects = new HookedObjectStore(new MemoryObjectStore());
    const cache = () => {
      const d = tempDir('kura-copy-cache-');
      dirs.push(d);
      return d;
    };
    await (await Store.initObjects(objects, { cacheDir: cache() })).close();
    const writer = await Store.openObjects(objects, { cacheDir: cache(), packSize: 1 << 20 });
    const docs = Array.from({ length: 24 }, () => randomBytes(300 * 1024)); // (over CARRY_MAX: packs of their own, not carried in commits)
    try {
      for (const [i, d] of docs.entries()) await writer.put(d, { path: `bin/${i}` });
    } finally {
      await writer.close();
    }
    // A reader with an empty cache: every pack comes from the object store.
    const src = await Store.openObjects(objects, { cacheDir: cache() });
    const dst = await fresh();
    const packGets = new Map<string, number>();
    objects.before = (op, key) => {
      if (op === 'get' && key.startsWith('packs/')) packGets.set(key, (packGets.get(key) ?? 0) + 1);
    };
    try {
      const report = await copyStore(src, dst);
      expect([report.versionsCopied, report.errors]).toEqual([24, []]);
      for (const [i, d] of docs.entries()) expect(Buffer.from(await dst.getBytes((await dst.pathVersion(`bin/${i}`)).digest)).equals(d)).toBe(true);
      // Several packs, each asked for once (ranged reads of a 300 KiB document take two: 256 KiB, then the rest).
      expect(packGets.size).toBeGreaterThanOrEqual(4);
      expect([...packGets.values()].every((n) => n === 1), JSON.stringify([...packGets])).toBe(true);
      // After the copy, reads are ranged again (a random read must not fetch a whole pack).
      packGets.clear();
      const fresh2 = await Store.openObjects(objects, { cacheDir: cache() });
      try {
        fresh2.fetchWholePacks(false);
        expect((await fresh2.getBytes((await fresh2.pathVersion("bin/3")).digest)).length).toBe(300 * 1024);
        expect([...packGets.values()]).toEqual([2]);
      } finally {
        await fresh2.close();
      }
    } finally {
      objects.before = () => undefined;
      await src.close();
      await dst.close();
    }
  });
});

describe('a copy mends what the destination found damaged', () => {
  it("puts again a document whose chunks the destination's verify found damaged — at a path, an older version, a snapshot's file (verify's advice sent nothing: a trial)", { timeout: 120_000 }, async () => {
    const src = await fresh();
    const srcDir = dirs.at(-1)!;
    const bytes = (seed: number) => Uint8Array.from(randomBytes(40_000 + seed));
    const latest = await src.put(bytes(1), { path: 'a.bin' });
    const older = await src.put(bytes(2), { path: 'b.bin' });
    await src.put(bytes(3), { path: 'b.bin' });
    const tree = mkdtempSync(join(tmpdir(), 'kura-copy-mend-'));
    dirs.push(tree);
    const snapshotFile = bytes(4);
    writeFileSync(join(tree, 'only-in-snapshot.bin'), snapshotFile);
    const snap = await src.snapshot(tree);
    const dst = await fresh();
    const dstDir = dirs.at(-1)!;
    await copyStore(src, dst);
    await dst.close();
    // Damage, in the destination's packs, a chunk of each of the three documents.
    const onlyInSnapshot = `sha256:${createHash('sha256').update(snapshotFile).digest('hex')}`;
    const victims = [latest.digest, older.digest, onlyInSnapshot];
    const probe = await Store.open(dstDir);
    const keys = await Promise.all(victims.map(async (d) => (await probe.manifest(d, { unlisted: true }))[1]!.key));
    await probe.close();
    const db = new Database(join(dstDir, 'kura.db'), { readonly: true });
    const place = db.prepare('SELECT p.name AS pack, c.offset AS offset, c.stored_len AS stored FROM chunks c JOIN packs p ON p.id = c.pack_id WHERE c.key = ?');
    const places = keys.map((k) => place.get(Buffer.from(k, 'hex')) as { pack: string; offset: number; stored: number });
    db.close();
    for (const p of places) flipByte(join(dstDir, 'packs', p.pack.slice(0, 2), `${p.pack}.pack`), p.offset + p.stored - 8);
    const damaged = await Store.open(dstDir);
    const found = (await damaged.verify()).damagedDocuments.map((d) => d.digest);
    expect(found).toEqual(expect.arrayContaining(victims));
    const report = await copyStore(src, damaged);
    expect(report).toMatchObject({ documentsMended: found.length, versionsCopied: 0 });
    expect(await damaged.verify()).toMatchObject({ ok: true, damagedChunks: [] });
    const read = async (st: Store, d: string) => Buffer.from(await (await st.document(d, { unlisted: true })).bytes());
    for (const d of victims) expect((await read(damaged, d)).equals(await read(src, d))).toBe(true);
    // Nothing else changed: the same entries and versions, none made for the snapshot's file.
    expect((await damaged.list()).items.map((e) => [e.path, e.version]).sort()).toEqual([['a.bin', 1], ['b.bin', 2]]);
    expect((await copyStore(src, damaged)).documentsMended).toBe(0);
    await damaged.close();
    expect(srcDir).toBeDefined();
  });
});
