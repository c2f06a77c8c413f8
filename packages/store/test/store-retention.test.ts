/**
 * Retention (decision 0058; the snapshot rules are checked against restic itself in
 * packages/cli/test/forget-restic.test.ts): properties of the policy over any snapshots, pins
 * and policy; removals marked `policy` skipped when pinned or gone, applied to a real catalog;
 * versions forgotten in a real store — each path's newest and pinned versions stay and read
 * back, the removed ones are gone, GC frees only the bytes they alone held; snapshots' time,
 * tags and pins replayed the same by a database rebuilt from the log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { applySnapshotPolicy, parseDuration, type SnapshotPolicy } from '../src/retention/policy.js';
import { applyVersionPolicy } from '../src/retention/versions.js';
import { openSqlite } from '../src/node/sqlite.js';
import { migrate } from '../src/catalog/schema.js';
import { prepareStatements } from '../src/catalog/statements.js';
import { applyOp, type ApplyContext } from '../src/catalog/ops.js';
import { Store } from '../src/node/index.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tmp = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), `kura-${name}-`));
  dirs.push(d);
  return d;
};
const EMPTY = { type: 'dir' as const, name: '', mode: 0o755, entries: [] };
const enc = new TextEncoder();

const policy = fc.record(
  {
    last: fc.nat(6),
    hourly: fc.nat(6),
    daily: fc.nat(6),
    weekly: fc.nat(6),
    monthly: fc.nat(6),
    yearly: fc.nat(3),
    within: fc.constantFrom('3d', '2m', '1y', '12h').map(parseDuration),
    tags: fc.array(fc.subarray(['a', 'b'], { minLength: 1 }), { maxLength: 2 }),
  },
  { requiredKeys: [] },
);
const snapshots = fc.array(
  fc.record({ time: fc.integer({ min: Date.UTC(2019, 0, 1), max: Date.UTC(2025, 0, 1) }), tags: fc.subarray(['a', 'b']), pinned: fc.boolean() }),
  { maxLength: 60 },
);

describe('the snapshot policy', () => {
  it('any snapshots and policy: kept and removed split the list, every kept one has a reason, pinned ones are kept', () => {
    fc.assert(
      fc.property(snapshots, policy, (list, p: SnapshotPolicy) => {
        const empty = !Object.values(p).some((v) => (Array.isArray(v) ? v.length : v));
        const { keep, remove } = applySnapshotPolicy(list, p);
        expect(keep.length + remove.length).toBe(list.length);
        expect(new Set([...keep.map((k) => k.item), ...remove]).size).toBe(list.length);
        for (const k of keep) expect(k.reasons.length).toBeGreaterThan(0);
        for (const s of remove) expect(s.pinned).toBe(false);
        if (empty) expect(remove).toEqual([]);
        // Newest first, as restic lists them.
        for (let i = 1; i < keep.length; i++) expect(keep[i - 1]!.item.time).toBeGreaterThanOrEqual(keep[i]!.item.time);
      }),
      { numRuns: 500 },
    );
  });

  it('a larger count never lets go of a snapshot a smaller one kept', () => {
    fc.assert(
      fc.property(snapshots, fc.constantFrom('last', 'hourly', 'daily', 'weekly', 'monthly', 'yearly'), fc.nat(8), (list, kind, n) => {
        const kept = (count: number) => new Set(applySnapshotPolicy(list, { [kind]: count }).keep.map((k) => k.item));
        const small = kept(n + 1);
        const large = kept(n + 2);
        for (const s of small) expect(large.has(s)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('known answers: periods that have a snapshot are counted, not windows; within counts from the newest', () => {
    const at = (iso: string, tags: string[] = []) => ({ time: Date.parse(iso), tags, pinned: false });
    // Three days with snapshots, the last two a week apart: keep-daily 2 keeps one per day for
    // the two newest days that have one, however far apart.
    const list = [at('2024-03-01T09:00:00Z'), at('2024-03-01T18:00:00Z'), at('2024-03-02T08:00:00Z'), at('2024-03-09T10:00:00Z')];
    const old = process.env.TZ;
    process.env.TZ = 'UTC';
    try {
      expect(applySnapshotPolicy(list, { daily: 2 }).keep.map((k) => new Date(k.item.time).toISOString())).toEqual(['2024-03-09T10:00:00.000Z', '2024-03-02T08:00:00.000Z']);
      expect(applySnapshotPolicy(list, { within: parseDuration('8d') }, Date.parse('2030-01-01')).keep.map((k) => k.reasons)).toEqual([['within 8d'], ['within 8d'], ['within 8d']]);
      expect(applySnapshotPolicy(list, { last: 1, daily: 1 }).keep).toEqual([{ item: list[3], reasons: ['last snapshot', 'daily snapshot'] }]);
    } finally {
      if (old === undefined) delete process.env.TZ;
      else process.env.TZ = old;
    }
    expect(() => parseDuration('5w')).toThrow(/duration/);
    expect(() => parseDuration('')).toThrow(/duration/);
    // A window of nothing would keep nothing by time: refused, never read as "remove the rest".
    for (const zero of ['0d', '0h', '0y0m0d0h']) expect(() => parseDuration(zero)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', message: expect.stringMatching(/zero/) }));
    expect(parseDuration('1y2m3d4h')).toEqual({ years: 1, months: 2, days: 3, hours: 4 });
  });

  it('versions: the newest always stays, then the newest N and those within D of it, and pinned ones', () => {
    const v = (version: number, day: number, pinned = false) => ({ path: 'p', version, time: Date.UTC(2024, 0, day), pinned });
    const list = [v(1, 1, true), v(2, 2), v(3, 10), v(4, 20), v(5, 21)];
    const r = applyVersionPolicy(list, { keep: 2, within: parseDuration('15d') });
    expect(r.keep.map((k) => [k.item.version, k.reasons])).toEqual([
      [5, ['latest']],
      [4, ['last 2 versions', 'within 15d']],
      [3, ['within 15d']],
      [1, ['pinned']],
    ]);
    expect(r.remove.map((x) => x.version)).toEqual([2]);
    expect(() => applyVersionPolicy(list, { keep: 0 })).toThrow(/at least 1/);
    // A path deleted with its versions kept reads nothing: its history stays as it was at the
    // deletion for `within` after it (a trash bin), then goes — its last version too (counted
    // from its newest, no rule could ever remove it: found in a trial; counted from each
    // version's time, a note written long ago went the moment it was deleted: another trial).
    // `keep` N still keeps N, as it says. An unknown deletion time counts as long ago.
    const now = Date.UTC(2024, 1, 1); // 11 days after the newest
    expect(applyVersionPolicy(list, { within: parseDuration('15d') }, false, now).keep.map((k) => k.item.version)).toEqual([5, 4, 1]); // 1 pinned
    expect(applyVersionPolicy(list, { within: parseDuration('5d') }, false, now).keep.map((k) => k.item.version)).toEqual([1]);
    const deletedYesterday = Date.UTC(2024, 0, 31);
    expect(applyVersionPolicy(list, { within: parseDuration('5d') }, false, now, deletedYesterday).keep.map((k) => [k.item.version, k.reasons])).toEqual([
      [5, ['deleted within 5d']],
      [4, ['within 5d']],
      [1, ['pinned']],
    ]);
    expect(applyVersionPolicy(list, { within: parseDuration('5d') }, false, now, Date.UTC(2024, 0, 25)).keep.map((k) => k.item.version)).toEqual([1]); // deleted 7 days ago
    expect(applyVersionPolicy(list, { within: parseDuration('5d') }, true, now).keep.map((k) => k.item.version)).toEqual([5, 4, 1]); // (live: from its newest)
    expect(applyVersionPolicy(list, { keep: 1 }, false, now).keep.map((k) => [k.item.version, k.reasons])).toEqual([[5, ['last 1 version']], [1, ['pinned']]]);
  });
});

describe('removals by a policy, applied to a catalog', () => {
  it('are skipped when the snapshot or version is pinned or gone; a plain delete is not', () => {
    const dir = tmp('retention-ops');
    const db = openSqlite(join(dir, 'kura.db'));
    migrate(db);
    const c: ApplyContext = { db, st: prepareStatements(db) };
    const id = 'ab'.repeat(16);
    const digest = `sha256:${'11'.repeat(32)}`;
    db.transaction(() => {
      applyOp(c, { op: 'pack', name: 'cd'.repeat(16), writer: 'w' }, 1);
      for (let i = 0; i < 3; i++) {
        applyOp(c, { op: 'put', digest: `sha256:${String(i + 1).repeat(64)}`, size: 1, manifest: `${String(i + 1).repeat(64)}01000000`, packs: ['cd'.repeat(16)], places: [0, 0, 4 + i * 20, 9, 0], entry: { path: 'notes.md' } }, 1);
      }
      applyOp(c, { op: 'snapshot', root: { ...EMPTY, entries: [{ type: 'file', name: 'f', mode: 0o644, size: 1, digest }] }, label: null, id, time: 5, tags: ['x'] }, 1);
    });
    const versions = () => db.prepare<{ version: number }>('SELECT version FROM versions ORDER BY version').all().map((r) => r.version);
    const snapshotCount = () => db.prepare<{ n: number }>('SELECT COUNT(*) AS n FROM snapshots').get()!.n;
    expect(db.prepare<{ created_at: number; tags: string }>('SELECT created_at, tags FROM snapshots').get()).toEqual({ created_at: 5, tags: '["x"]' });
    db.transaction(() => {
      expect(applyOp(c, { op: 'pin', target: { path: 'notes.md', version: 1 }, pinned: true }, 2)).toBe(true);
      expect(applyOp(c, { op: 'pin', target: { path: 'notes.md', version: 9 }, pinned: true }, 2)).toBe(false);
      expect(applyOp(c, { op: 'pin', target: { snapshot: id }, pinned: true }, 2)).toBe(true);
    });
    db.transaction(() => {
      expect(applyOp(c, { op: 'delete-version', path: 'notes.md', version: 1, policy: true }, 3)).toBe(false); // pinned
      expect(applyOp(c, { op: 'delete-version', path: 'notes.md', version: 2, policy: true }, 3)).toBe(true);
      expect(applyOp(c, { op: 'delete-version', path: 'notes.md', version: 2, policy: true }, 3)).toBe(false); // gone: no error
      applyOp(c, { op: 'rm-snapshot', id, policy: true }, 3); // pinned: stays
      applyOp(c, { op: 'rm-snapshot', id: 'ef'.repeat(16), policy: true }, 3); // gone: no error
    });
    expect(versions()).toEqual([1, 3]);
    expect(snapshotCount()).toBe(1);
    // A person's own delete is theirs to make, pinned or not.
    db.transaction(() => {
      expect(applyOp(c, { op: 'delete-version', path: 'notes.md', version: 1 }, 4)).toBe(true);
      applyOp(c, { op: 'rm-snapshot', id }, 4);
    });
    expect(versions()).toEqual([3]);
    expect(snapshotCount()).toBe(0);
    db.close();
  });
});

describe('forget on a store', () => {
  it('versions: newest and pinned stay and read back, the rest go; GC frees only what they alone held', async () => {
    const dir = join(tmp('retention-versions'), 'store');
    const store = await Store.init(dir);
    try {
      // Six versions of notes.md, each 40 KB of its own bytes; version 2's bytes are also at keep.md.
      const bytes = (i: number) => enc.encode(`${i}`.repeat(40_000));
      for (let i = 1; i <= 6; i++) await store.put(bytes(i), { path: 'notes.md' });
      await store.put(bytes(2), { path: 'keep.md' });
      for (let i = 1; i <= 3; i++) await store.put(bytes(10 + i), { path: 'other/a.md' });
      await store.pin({ path: 'notes.md', version: 3 });
      await expect(store.pin({ path: 'notes.md', version: 99 })).rejects.toMatchObject({ code: 'NOT_FOUND' });

      const dry = await store.forgetVersions({ keep: 2, prefix: 'notes', dryRun: true });
      expect(dry.keep.map((k) => [k.version, k.reasons])).toEqual([
        [6, ['latest']],
        [5, ['last 2 versions']],
        [3, ['pinned']],
      ]);
      expect(dry.remove.map((r) => r.version)).toEqual([4, 2, 1]);
      expect((await store.versions('notes.md')).length).toBe(6); // a dry run changes nothing

      const before = await store.stats();
      const done = await store.forgetVersions({ keep: 2, prefix: 'notes' });
      expect(done).toEqual(dry);
      expect((await store.versions('notes.md')).map((v) => [v.version, v.pinned])).toEqual([
        [3, true],
        [5, false],
        [6, false],
      ]);
      expect(new TextDecoder().decode(await store.getBytes((await store.resolve('notes.md@3')) as string)).slice(0, 3)).toBe('333');
      await expect(store.resolve('notes.md@1')).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect((await store.versions('other/a.md')).length).toBe(3); // outside the prefix
      const gc = await store.gc();
      const after = await store.stats();
      // Versions 1 and 4 alone held their bytes; version 2's are still keep.md's.
      expect(after.uniqueChunkBytes).toBe(before.uniqueChunkBytes - 2 * 40_000);
      expect(gc.chunksRemoved).toBeGreaterThan(0);
      expect(new TextDecoder().decode(await store.getBytes((await store.resolve('keep.md')) as string)).slice(0, 3)).toBe('222');
      await expect(store.forgetVersions({})).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    } finally {
      await store.close();
    }
  });

  it('a deleted path keeps its history for the window after its deletion (a trash bin), however old its versions', async () => {
    const dir = join(tmp('trash-bin'), 'store');
    const enc = new TextEncoder();
    const store = await Store.init(dir);
    try {
      // A note written three hours ago (the clock set back while it is put).
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 3 * 3600_000 });
      try {
        await store.put(enc.encode('an old note'), { path: 'notes/old.md' });
      } finally {
        vi.useRealTimers();
      }
      await store.deletePath('notes/old.md', { keepVersions: true });
      const policy = { within: parseDuration('1h'), prefix: 'notes/' };
      expect((await store.forgetVersions({ ...policy, dryRun: true })).keep.map((k) => [k.version, k.reasons])).toEqual([[1, ['deleted within 1h']]]);
      expect((await store.forgetVersions(policy)).remove).toEqual([]);
      expect(new TextDecoder().decode(await store.getBytes(await store.resolve('notes/old.md@1')))).toBe('an old note');
    } finally {
      await store.close();
    }
  });

  it('path@<time> never answers with a version that was not the latest then: one removed between two kept is said', async () => {
    const dir = join(tmp('at-gap'), 'store');
    const enc = new TextEncoder();
    const store = await Store.init(dir);
    try {
      const times: string[] = [];
      for (const v of ['v1', 'v2', 'v3']) {
        await store.put(enc.encode(v), { path: 'n/f.md' });
        await new Promise((r) => setTimeout(r, 5));
        times.push(new Date().toISOString());
        await new Promise((r) => setTimeout(r, 5));
      }
      const at = async (t: string) => new TextDecoder().decode(await store.getBytes(await store.resolve(`n/f.md@${t}`)));
      expect(await at(times[1]!)).toBe('v2');
      await store.pin({ path: 'n/f.md', version: 1 });
      await store.forgetVersions({ keep: 1, prefix: 'n/' }); // v2 goes
      // It answered v1, which was not the latest then (a trial).
      await expect(store.resolve(`n/f.md@${times[1]}`)).rejects.toThrow(/latest at .* is not known here: versions between @1 .* and @3 .* are not kept/);
      // (When v2 was made is gone with it: any time between v1 and v3 may be after it.)
      await expect(store.resolve(`n/f.md@${times[0]}`)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await at(times[2]!)).toBe('v3');
      expect(await store.resolve('n/f.md@1')).toBe((await store.versions('n/f.md'))[0]!.digest);
    } finally {
      await store.close();
    }
  });

  it('a path deleted with its versions kept: gone from listing, search and reads by path; path@N stays; a put makes it again', async () => {
    const dir = join(tmp('deleted-path'), 'store');
    const store = await Store.init(dir);
    try {
      await store.put(enc.encode('first pelican'), { path: 'birds.md', tags: ['zoo'] });
      await store.put(enc.encode('second pelican'), { path: 'birds.md' });
      const before = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 5));
      expect(await store.deletePath('birds.md', { keepVersions: true })).toBe(true);
      expect(await store.deletePath('birds.md', { keepVersions: true })).toBe(false);
      expect((await store.list({})).items).toEqual([]);
      expect(await store.search('pelican', { mode: 'keyword' })).toEqual([]);
      await expect(store.resolve('birds.md')).rejects.toThrow(/was deleted at .*; its versions remain/);
      // So do its tags, metadata and stat (MCP's kura_get said only "no document at": a trial).
      await expect(store.stat('birds.md')).rejects.toThrow(/was deleted at .*; its versions remain \(birds\.md@N\)/);
      expect((await store.versions('birds.md')).map((v) => v.version)).toEqual([1, 2]);
      expect(new TextDecoder().decode(await store.getBytes(await store.resolve('birds.md@1')))).toBe('first pelican');
      expect(new TextDecoder().decode(await store.getBytes(await store.resolve(`birds.md@${before}`)))).toBe('second pelican');
      await expect(store.resolve(`birds.md@${new Date(Date.now() + 1000).toISOString()}`)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      // Searching through history finds its text.
      expect((await store.search('pelican', { allVersions: true })).map((h) => `${h.path}@${h.version}`).sort()).toEqual(['birds.md@1', 'birds.md@2']);
      // Retention: the newest version of a deleted path is history like the others.
      expect((await store.forgetVersions({ keep: 1, dryRun: true })).keep.map((k) => [k.version, k.reasons])).toEqual([[2, ['last 1 version']]]);
      // A put makes it again, with a new version even of the same bytes, and no old tags.
      const whileDeleted = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 5));
      await store.put(enc.encode('second pelican'), { path: 'birds.md' });
      expect((await store.versions('birds.md')).map((v) => v.version)).toEqual([1, 2, 3]);
      expect((await store.stat('birds.md')).tags).toEqual([]);
      // A time while it was deleted still finds nothing (it found @2 once the path was back: a trial).
      await expect(store.resolve(`birds.md@${whileDeleted}`)).rejects.toThrow(/was deleted at .*, and made again later: no version of it at/);
      expect(new TextDecoder().decode(await store.getBytes(await store.resolve(`birds.md@${before}`)))).toBe('second pelican');
      expect(await store.resolve(`birds.md@${new Date(Date.now() + 1000).toISOString()}`)).toBe((await store.versions('birds.md'))[2]!.digest);
      // Deleted with its versions kept, then deleted whole: nothing of it stays.
      await store.deletePath('birds.md', { keepVersions: true });
      expect(await store.deletePath('birds.md')).toBe(true);
      expect(await store.versions('birds.md')).toEqual([]);
      await expect(store.resolve('birds.md@1')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    } finally {
      await store.close();
    }
    // The same from the log alone.
    await Store.rebuild(dir);
    const again = await Store.open(dir, { readonly: true });
    try {
      expect(await again.versions('birds.md')).toEqual([]);
    } finally {
      await again.close();
    }
  });

  it('a version removed by a policy while another writer reads it: the read finishes, GC keeps its bytes for the margin', async () => {
    const dir = join(tmp('retention-reader'), 'store');
    const init = await Store.init(dir);
    const old = new Uint8Array(300_000).map((_, i) => (i * 7919) % 251);
    const first = await init.put(old, { path: 'big.bin' });
    for (let i = 2; i <= 3; i++) await init.put(enc.encode(`version ${i}`), { path: 'big.bin' });
    await init.close();
    const reader = await Store.open(dir); // another server, reading
    const keeper = await Store.open(dir, { gcMarginMs: 60_000 }); // the one applying the policy
    try {
      const doc = await reader.document(first.digest);
      const stream = doc.stream()[Symbol.asyncIterator]();
      const head = await stream.next(); // the read has begun
      expect((await keeper.forgetVersions({ keep: 1 })).remove.map((v) => v.version)).toEqual([2, 1]);
      const gc = await keeper.gc(); // another writer is alive: its chunks wait for the margin
      expect(gc.chunksRemoved).toBe(0);
      const pieces = [head.value as Uint8Array];
      for (let r = await stream.next(); !r.done; r = await stream.next()) pieces.push(r.value);
      expect(Buffer.concat(pieces).equals(Buffer.from(old))).toBe(true);
      await expect(reader.resolve('big.bin@1')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    } finally {
      await reader.close();
      await keeper.close();
    }
  });

  it("counts a snapshot's days in the time zone it was made in, wherever forget runs (as restic; it used the process's zone: a trial)", async () => {
    const zone = process.env.TZ;
    const dir = join(tmp('zones'), 'store');
    const store = await Store.init(dir);
    try {
      process.env.TZ = 'UTC';
      const a = await store.createSnapshot(EMPTY, { time: '2024-02-15T01:00:00Z' });
      await store.createSnapshot(EMPTY, { time: '2024-02-15T06:00:00Z' });
      expect(a.utcOffset).toBe(0);
      // In New York these are the 14th (20:00) and the 15th (01:00); where they were made, one day.
      process.env.TZ = 'America/New_York';
      const daily = await store.forgetSnapshots({ daily: 2, dryRun: true });
      expect([daily.keep.length, daily.remove.length]).toEqual([1, 1]);
      // One made in New York keeps its offset (-300 in February).
      const b = await store.createSnapshot(EMPTY, { time: '2024-02-20T12:00:00Z' });
      expect(b.utcOffset).toBe(-300);
      expect((await store.snapshotInfo(b.id)).utcOffset).toBe(-300);
      await expect(store.createSnapshot(EMPTY, { utcOffset: 30 * 60 })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'utcOffset' });
    } finally {
      process.env.TZ = zone;
      if (zone === undefined) delete process.env.TZ;
      await store.close();
    }
    // Replayed from the log (kura rebuild), the offsets are the same.
    await Store.rebuild(dir);
    const again = await Store.open(dir);
    try {
      expect((await again.snapshots()).map((x) => x.utcOffset)).toEqual([0, 0, -300]);
    } finally {
      await again.close();
    }
  });

  it('stored policies: the longest prefix decides a path, a label policy its snapshots; set and removed through the log', async () => {
    const dir = join(tmp('stored-policies'), 'store');
    const store = await Store.init(dir);
    try {
      for (let i = 1; i <= 5; i++) {
        for (const path of ['notes/a.md', 'notes/drafts/b.md', 'other/c.md']) await store.put(enc.encode(`${path} ${i}`), { path });
      }
      for (let d = 1; d <= 4; d++) {
        await store.createSnapshot(EMPTY, { time: `2024-02-0${d}T10:00:00Z`, label: 'home' });
        await store.createSnapshot(EMPTY, { time: `2024-02-0${d}T11:00:00Z` });
      }
      await store.setPolicy({ kind: 'versions', prefix: 'notes/', keep: 2 });
      await store.setPolicy({ kind: 'versions', prefix: 'notes/drafts/', keep: 4 });
      await store.setPolicy({ kind: 'snapshots', label: 'home', last: 1 });
      await store.setPolicy({ kind: 'snapshots', last: 3 });
      await expect(store.setPolicy({ kind: 'versions', prefix: 'x/' } as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      await expect(store.setPolicy({ kind: 'versions', prefix: 'x/', within: '2w' } as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      await expect(store.setPolicy({ kind: 'snapshots', bogus: 1 } as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      // Replaced, not added: one policy per prefix.
      await store.setPolicy({ kind: 'versions', prefix: 'notes/', keep: 3 });
      expect((await store.policies()).map((p) => p.kind === 'versions' ? `${p.prefix} ${p.keep}` : `snap ${p.label ?? '-'} ${p.last}`)).toEqual(['snap - 3', 'snap home 1', 'notes/ 3', 'notes/drafts/ 4']);

      const dry = await store.applyPolicies({ dryRun: true });
      expect((await store.versions('notes/a.md')).length).toBe(5);
      const applied = await store.applyPolicies();
      expect(applied.map((a) => a.report.remove.length)).toEqual(dry.map((a) => a.report.remove.length));
      expect((await store.versions('notes/a.md')).map((v) => v.version)).toEqual([3, 4, 5]);
      expect((await store.versions('notes/drafts/b.md')).map((v) => v.version)).toEqual([2, 3, 4, 5]);
      expect((await store.versions('other/c.md')).length).toBe(5); // under no policy
      const left = await store.snapshots();
      expect(left.filter((s) => s.label === 'home').map((s) => s.createdAt)).toEqual(['2024-02-04T10:00:00.000Z']);
      expect(left.filter((s) => s.label === null).map((s) => s.createdAt)).toEqual(['2024-02-02T11:00:00.000Z', '2024-02-03T11:00:00.000Z', '2024-02-04T11:00:00.000Z']);
      expect(await store.removePolicy({ kind: 'versions', prefix: 'notes/drafts/' })).toBe(true);
      expect(await store.removePolicy({ kind: 'versions', prefix: 'notes/drafts/' })).toBe(false);
    } finally {
      await store.close();
    }
    await Store.rebuild(dir);
    const again = await Store.open(dir, { readonly: true });
    try {
      expect((await again.policies()).length).toBe(3);
    } finally {
      await again.close();
    }
  });

  it("snapshots: pins and tags survive every policy; time, tags and pins replay the same from the log", async () => {
    const dir = join(tmp('retention-snapshots'), 'store');
    const store = await Store.init(dir);
    const ids: string[] = [];
    try {
      for (let d = 1; d <= 10; d++) ids.push((await store.createSnapshot(EMPTY, { time: `2024-01-${String(d).padStart(2, '0')}T12:00:00Z`, tags: d % 3 === 0 ? ['weekly-job'] : [] })).id);
      await store.pin({ snapshot: ids[0]!.slice(0, 8) });
      await expect(store.createSnapshot(EMPTY, { time: 'yesterday' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      await expect(store.createSnapshot(EMPTY, { tags: ['a,b'] })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      const r = await store.forgetSnapshots({ last: 2, tags: [['weekly-job']] });
      expect(r.keep.map((k) => [k.time.slice(0, 10), k.reasons])).toEqual([
        ['2024-01-10', ['last snapshot']],
        ['2024-01-09', ['has tags [weekly-job]', 'last snapshot']],
        ['2024-01-06', ['has tags [weekly-job]']],
        ['2024-01-03', ['has tags [weekly-job]']],
        ['2024-01-01', ['pinned']],
      ]);
      const left = await store.snapshots();
      expect(left.map((s) => s.createdAt.slice(0, 10)).sort()).toEqual(['2024-01-01', '2024-01-03', '2024-01-06', '2024-01-09', '2024-01-10']);
      expect(left.find((s) => s.id === ids[0])).toMatchObject({ pinned: true, tags: [] });
      expect(left.find((s) => s.id === ids[2])).toMatchObject({ pinned: false, tags: ['weekly-job'] });
      await store.pin({ snapshot: ids[0]! }, false);
      expect((await store.forgetSnapshots({ last: 1, dryRun: true })).remove.map((s) => s.id)).toContain(ids[0]);
      await store.pin({ snapshot: ids[0]! });
    } finally {
      await store.close();
    }
    // The database made again from the log alone: the same snapshots, times, tags and pins.
    const seen = async () => {
      const s = await Store.open(dir, { readonly: true });
      try {
        return (await s.snapshots()).map((x) => ({ ...x })).sort((a, b) => a.id.localeCompare(b.id));
      } finally {
        await s.close();
      }
    };
    const was = await seen();
    await Store.rebuild(dir);
    expect(await seen()).toEqual(was);
  });
});
