/**
 * putReady: documents whose chunks an ingest worker produced whole, stored a batch at a time
 * (one pass, no stream per document, one commit job each). Checked against put() of the same
 * bytes in another store, across pack rotations in the middle of a batch, with chunks shared
 * within the batch, a document given twice, and documents refused for different reasons
 * among the good ones.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, readdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ingester, type IngestChunk } from '@kura/core';
import type { Store } from '../src/node/index.js';
import { concatBytes, expectSameBytes, newStore, randomBytes, recordsEnd, reopen, textBytes } from './helpers/store.js';

const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** What an ingest worker sends back for one source: the kernel's chunks and result. */
function ingestWhole(store: Store, bytes: Uint8Array) {
  const ingester = new Ingester(store.ingestOptions());
  const chunks: IngestChunk[] = [...ingester.update(bytes), ...ingester.finish()];
  return { chunks, result: ingester.result! };
}

function packFiles(dir: string): string[] {
  const root = join(dir, 'packs');
  return readdirSync(root).flatMap((sub) => readdirSync(join(root, sub)).map((f) => join(root, sub, f)));
}

describe('putReady', () => {
  it('stores a batch as put() would, through pack rotations, with shared chunks and refused documents among the good ones', async () => {
    const chunking = { avg: 1024 };
    const { store: first, dir } = await newStore({ chunking, compression: 3 });
    await first.close();
    const store = await reopen(dir, { packSize: 16_384 }); // a pack holds a few documents: rotations mid-batch
    const { store: reference } = await newStore({ chunking, compression: 3 });

    const shared = textBytes(50, 6_000); // chunks several documents share
    const docs = Array.from({ length: 40 }, (_, i) =>
      i % 4 === 0 ? concatBytes([randomBytes(i, 2_000 + 97 * i), shared]) : i % 4 === 1 ? textBytes(i, 500 + 300 * i) : randomBytes(i, 100 + 211 * i),
    );
    docs[7] = docs[6]!; // the same document twice in one batch
    docs[9] = new Uint8Array(0); // an empty document

    const inputs: Parameters<Store['putReady']>[0][number][] = docs.map((bytes) => ingestWhole(store, bytes));
    const refused = new Map<number, string>();
    inputs[12] = new Error('the worker could not read it');
    refused.set(12, 'the worker could not read it');
    inputs[15] = { ...ingestWhole(store, docs[15]!), meta: { expectDigest: sha(docs[14]!) } };
    refused.set(15, 'DIGEST_MISMATCH');
    inputs[20] = { ...ingestWhole(store, docs[20]!), meta: { tags: [42 as unknown as string] } };
    refused.set(20, 'INVALID_INPUT');
    // A forged chunk above the store's max: refused, nothing of that document is stored.
    const forged = ingestWhole(store, docs[25]!);
    forged.chunks[0] = { ...forged.chunks[0]!, length: 8_192, payload: randomBytes(99, 8_192) };
    inputs[25] = forged;
    refused.set(25, 'INVALID_INPUT');

    const results = await store.putReady(inputs, {});
    expect(results).toHaveLength(docs.length);
    for (let i = 0; i < docs.length; i++) {
      const r = results[i]!;
      if (refused.has(i)) {
        expect(r, `document ${i}`).toBeInstanceOf(Error);
        const why = refused.get(i)!;
        if (why === 'DIGEST_MISMATCH' || why === 'INVALID_INPUT') expect(r).toMatchObject({ code: why });
        else expect((r as Error).message).toBe(why);
        if (i !== 12) expect(await store.has(sha(docs[i]!))).toBe(false);
        continue;
      }
      expect(r, `document ${i}`).not.toBeInstanceOf(Error);
      const alone = await reference.put(docs[i]!);
      expect(r).toMatchObject({ digest: alone.digest, size: alone.size, chunks: alone.chunks });
      expectSameBytes(await store.getBytes(alone.digest), docs[i]!);
    }
    expect(results[7]).toMatchObject({ newChunks: 0 }); // its twin wrote them
    // Every chunk is stored once, as in the store that took the documents one by one.
    const [a, b] = [await store.stats(), await reference.stats()];
    expect(a.uniqueChunkBytes).toBe(b.uniqueChunkBytes);
    expect(a.chunks).toBe(b.chunks);
    expect(a.documents).toBe(b.documents);
    expect(packFiles(dir).length).toBeGreaterThan(3);
    expect((await store.verify()).ok).toBe(true);
    await store.close();
    const again = await reopen(dir);
    for (let i = 0; i < docs.length; i++) if (!refused.has(i)) expectSameBytes(await again.getBytes(sha(docs[i]!)), docs[i]!);
    await again.close();
    await reference.close();
  });

  it('writes a fresh copy of a chunk verify found damaged, and the document reads again', async () => {
    const { store, dir } = await newStore();
    const data = randomBytes(9, 30_000);
    const { digest } = await store.put(data);
    await store.close();
    const pack = packFiles(dir)[0]!;
    const fd = openSync(pack, 'r+');
    const b = Buffer.alloc(1);
    const at = recordsEnd(pack) - 5; // in the last record, before the pack's index
    readSync(fd, b, 0, 1, at);
    b[0]! ^= 0x40;
    writeSync(fd, b, 0, 1, at);
    closeSync(fd);
    const s = await reopen(dir);
    expect((await s.verify()).damagedChunks).toHaveLength(1);
    const [again] = await s.putReady([ingestWhole(s, data)], { listed: false });
    expect(again).toMatchObject({ digest, newChunks: 1 });
    expectSameBytes(await s.getBytes(digest), data);
    expect((await s.verify()).ok).toBe(true);
    await s.close();
  });

  it('refuses the whole batch on a read-only store, and tells its commit order it is done', async () => {
    const { store, dir } = await newStore();
    await store.close();
    const ro = await reopen(dir, { readonly: true });
    await expect(ro.putReady([ingestWhole(ro, textBytes(1, 100))])).rejects.toMatchObject({ code: 'READ_ONLY' });
    await ro.close();
  });
});
