/**
 * Regression tests for races found in review (each failed before its fix): GC acting on stale
 * snapshots, durability 'full' racing pack sealing, search-index entries of a reused id,
 * verify racing GC, and the Node worker path.
 */
import { describe, expect, it } from 'vitest';
import { newStore } from './helpers/store.js';
import { rnd, streamOf, trackedCore } from './helpers/backends.js';

describe('gc while a put that held a pack commits', () => {
  // avg 1024: chunks up to 4 KiB (max = 4 x avg), so the hand-made chunks below are valid ones.
  it.each([0, 3, 10])('keeps the pack (%i garbage packs before it)', async (garbage) => {
    const { store } = await trackedCore({ compression: false, chunking: { avg: 1024 } });
    for (let i = 0; i < garbage; i++) await store.delete((await store.putChunks(streamOf([rnd(3500)]))).digest);
    let gc: Promise<unknown> | undefined;
    let n = 0;
    // Chunk 1 goes to pack P1; chunk 2 does not fit, so P1 is sealed while the put runs.
    const put = store.putChunks(streamOf([rnd(3000), rnd(2000)], async () => {
      if (++n === 2) gc = store.gc();
    }));
    const r = await put;
    await gc;
    expect((await store.getBytes(r.digest)).length).toBe(5000);
    expect((await store.verify()).ok).toBe(true);
    await store.close();
  });

  it('keeps a pack opened while an orphan listing is in flight', async () => {
    const { store, packs } = await trackedCore({ compression: false, chunking: { avg: 1024 } });
    await store.putChunks(streamOf([rnd(3000)]));
    packs.listDelayMs = 20; // an object store: listing takes time
    const gc = store.gc();
    await new Promise((r) => setTimeout(r, 25));
    const a = await store.putChunks(streamOf([rnd(2000)])); // rotates: new pack row and file
    expect((await gc as { orphansDeleted: number }).orphansDeleted).toBe(0);
    expect((await store.getBytes(a.digest)).length).toBe(2000);
    await store.close();
  });
});

describe("durability 'full'", () => {
  // Rounds: the race it guards (an append landing in a pack whose seal had started its sync,
  // between the room check and the append) showed in about 1 run of 12.
  it.each([
    [0, 15],
    [5, 2],
  ])('every acknowledged put is fdatasynced when put() resolves (sync delay %i ms, %i rounds)', async (delay, rounds) => {
    for (let round = 0; round < rounds; round++) await acknowledgedAreDurable(delay);
  });
});

async function acknowledgedAreDurable(delay: number): Promise<void> {
  {
    const { store, db, packs } = await trackedCore({ durability: 'full', compression: false, chunking: { avg: 256 } });
    packs.syncDelayMs = delay;
    const manifest = db.prepare<{ manifest: Uint8Array }>('SELECT manifest FROM documents WHERE digest = unhex(?)');
    const where = db.prepare<{ offset: number; stored_len: number; name: string }>(
      'SELECT c.offset, c.stored_len, p.name FROM chunks c JOIN packs p ON p.id = c.pack_id WHERE c.key = ?',
    );
    const unsynced: string[] = [];
    await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        store.put(rnd(300 + ((i * 997) % 2500))).then((r) => {
          const m = manifest.get(r.digest.slice(7))!.manifest;
          for (let at = 0; at < m.length; at += 36) {
            const c = where.get(m.subarray(at, at + 32))!;
            if (c.offset + 48 + c.stored_len > (packs.durable.get(c.name) ?? 0)) unsynced.push(r.digest);
          }
        }),
      ),
    );
    expect(unsynced).toEqual([]);
    await store.close();
  }
}

describe('search index and verify under concurrent changes', () => {
  it('a deleted document never lends its index entry to a new one', async () => {
    const { store } = await newStore();
    const enc = new TextEncoder();
    const old = await store.put(enc.encode('alpha '.repeat(200_000)), { path: 'old/secret.txt', mediaType: 'text/plain' });
    const first = store.search('alpha'); // drains: reads the old text, awaiting per chunk
    const del = store.delete(old.digest);
    const neu = store.put(enc.encode('bravo'), { path: 'new/public.txt', mediaType: 'text/plain' });
    await Promise.all([first, del, neu]);
    expect(await store.search('alpha')).toEqual([]);
    expect((await store.search('bravo')).map((h) => h.path)).toEqual(['new/public.txt']);
  });

  it('verify during a delete and gc reports no damage on a healthy store', async () => {
    const { store } = await trackedCore({ compression: false, chunking: { avg: 256 } });
    await store.putChunks(streamOf([rnd(1000)]));
    const doomed = await store.putChunks(streamOf([rnd(1000)]));
    const v = store.verify();
    await store.delete(doomed.digest);
    await store.gc();
    const r = await v;
    expect(r.damagedChunks).toEqual([]);
    expect(r.ok).toBe(true);
    await store.close();
  });
});

describe('Node worker path', () => {
  it('put(Buffer) of 64 KiB or more leaves the caller its bytes', async () => {
    const { store } = await newStore();
    const buf = Buffer.alloc(100_000, 7);
    const r = await store.put(buf);
    expect(buf.length).toBe(100_000);
    expect(buf[99_999]).toBe(7);
    expect(r.size).toBe(100_000);
  });

  it('a refused large put starts no work: bad metadata, a closed store', async () => {
    const { store } = await newStore();
    const big = new Uint8Array(200_000);
    await expect(store.put(big, { mediaType: 'nonsense' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await store.close();
    await expect(store.put(big)).rejects.toMatchObject({ code: 'STORE_CLOSED' });
  });

  it('updateMeta refuses what put refuses', async () => {
    const { store } = await newStore();
    const { digest } = await store.put(new Uint8Array([1]));
    await expect(store.updateMeta([{ digest, mediaType: 'not a media type' }])).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(store.updateMeta([{ digest, path: 'a\u0000b' }])).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    const many = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`k${i}`, 'v']));
    await expect(store.setMeta(digest, many)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});
