import { createHash } from 'node:crypto';
import { blake3, chunk } from '@kura/core';
import { describe, expect, it } from 'vitest';
import { concatBytes, expectSameBytes, newStore, randomBytes, reopen, textBytes } from './helpers/store.js';

const sha256 = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** What a syncing client does: chunk with the store's parameters, key each chunk. */
function clientChunks(data: Uint8Array, avg: number) {
  return chunk(data, { avg }).map((s) => {
    const bytes = data.subarray(s.offset, s.offset + s.length);
    return { key: blake3(bytes), bytes };
  });
}

describe('chunk-level sync', () => {
  it('a second upload with one changed region sends only the changed chunks', async () => {
    const { store } = await newStore({ chunking: { avg: 4096 } });
    const v1 = concatBytes([textBytes(1, 200_000), randomBytes(2, 100_000)]);
    const v2 = new Uint8Array(v1);
    v2.set(textBytes(99, 300), 120_000); // one region rewritten in place

    const c1 = clientChunks(v1, 4096);
    expect(await store.missingChunks(c1.map((c) => c.key))).toEqual([...new Set(c1.map((c) => c.key))]);
    for (const c of c1) await store.putChunk(c.bytes, { expectKey: c.key });
    const r1 = await store.commitChunks(c1.map((c) => c.key), { path: 'doc.txt', expectDigest: sha256(v1) });
    expect(r1.digest).toBe(sha256(v1));
    expect(r1.size).toBe(v1.length);

    const c2 = clientChunks(v2, 4096);
    const missing = await store.missingChunks(c2.map((c) => c.key));
    expect(missing.length).toBeGreaterThan(0);
    expect(missing.length).toBeLessThanOrEqual(3); // the edited chunk and its neighbours at most
    const sent = c2.filter((c) => missing.includes(c.key));
    for (const c of sent) expect((await store.putChunk(c.bytes)).stored).toBe(true);
    const r2 = await store.commitChunks(c2.map((c) => c.key), { path: 'doc.txt' });
    expect(r2.digest).toBe(sha256(v2));
    expectSameBytes(await store.getBytes(r2.digest), v2);
    expect((await store.versions('doc.txt')).map((v) => v.digest)).toEqual([r1.digest, r2.digest]);
    // A document committed from chunks is the same document a plain put makes.
    expect((await store.put(v2)).newChunks).toBe(0);
    expect((await store.verify()).ok).toBe(true);
  });

  it('refuses a chunk whose bytes do not hash to the claimed key, storing nothing', async () => {
    const { store } = await newStore();
    const bytes = randomBytes(3, 5000);
    const wrong = blake3(randomBytes(4, 5000));
    await expect(store.putChunk(bytes, { expectKey: wrong })).rejects.toMatchObject({ code: 'DIGEST_MISMATCH', expected: wrong, found: blake3(bytes) });
    expect(await store.missingChunks([blake3(bytes), wrong])).toEqual([blake3(bytes), wrong]);
    expect((await store.stats()).chunks).toBe(0);
  });

  it('rejects bad keys, empty and oversized chunks as INVALID_INPUT', async () => {
    const { store } = await newStore({ chunking: { avg: 4096 } });
    await expect(store.missingChunks(['abc'])).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'keys[0]' });
    await expect(store.missingChunks('x' as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(store.putChunk(new Uint8Array(0))).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(store.putChunk(randomBytes(5, 4 * 4096 + 1))).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(store.putChunk(randomBytes(5, 100), { expectKey: 'A'.repeat(64) })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(store.commitChunks(['0'.repeat(63)])).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('a commit naming absent chunks lists every one of them and stores nothing', async () => {
    const { store } = await newStore();
    const have = randomBytes(6, 3000);
    const k = (await store.putChunk(have)).key;
    const absent = [blake3(randomBytes(7, 10)), blake3(randomBytes(8, 10))];
    await expect(store.commitChunks([k, absent[0]!, k, absent[1]!, absent[0]!])).rejects.toMatchObject({ code: 'MISSING_CHUNKS', missing: absent });
    expect((await store.stats()).documents).toBe(0);
  });

  it('a commit whose bytes differ from the expected digest stores nothing', async () => {
    const { store } = await newStore();
    const a = randomBytes(9, 3000);
    const k = (await store.putChunk(a)).key;
    await expect(store.commitChunks([k], { path: 'x', expectDigest: sha256(randomBytes(10, 3000)) })).rejects.toMatchObject({
      code: 'DIGEST_MISMATCH',
      found: sha256(a),
    });
    expect((await store.stats()).documents).toBe(0);
    expect(await store.versions('x')).toEqual([]);
    // The same commit with the right digest (bare hex accepted) succeeds.
    const r = await store.commitChunks([k, k], { expectDigest: sha256(concatBytes([a, a])).slice(7).toUpperCase() });
    expect(r.size).toBe(6000);
  });

  it('GC keeps uploaded chunks until their hold expires, then reclaims them', async () => {
    const { store, dir } = await newStore();
    const held = randomBytes(11, 20_000);
    const brief = randomBytes(12, 20_000);
    const kh = (await store.putChunk(held)).key;
    const kb = (await store.putChunk(brief, { holdMs: 0 })).key;
    const report = await store.gc();
    expect(report.chunksRemoved).toBe(1);
    expect(await store.missingChunks([kh, kb])).toEqual([kb]);
    await store.close();
    const s = await reopen(dir); // holds are on disk, not in memory
    expect((await s.gc()).chunksRemoved).toBe(0);
    const r = await s.commitChunks([kh]);
    expectSameBytes(await s.getBytes(r.digest), held);
  });

  it('a plain put with the wrong expected digest stores nothing reachable', async () => {
    const { store } = await newStore();
    const data = randomBytes(13, 300_000);
    await expect(store.put(data, { path: 'p', expectDigest: sha256(randomBytes(14, 10)) })).rejects.toMatchObject({ code: 'DIGEST_MISMATCH' });
    await expect(store.put(textBytes(15, 2000), { expectDigest: sha256(textBytes(16, 2000)) })).rejects.toMatchObject({ code: 'DIGEST_MISMATCH' });
    const stats = await store.stats();
    expect(stats.documents).toBe(0);
    expect(stats.chunks).toBe(0);
    expect(await store.versions('p')).toEqual([]);
    await expect(store.put(data, { expectDigest: 'sha256:nothex' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect((await store.put(data, { expectDigest: sha256(data) })).digest).toBe(sha256(data));
  });
});
