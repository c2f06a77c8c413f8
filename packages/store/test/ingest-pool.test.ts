/**
 * The ingest pool: workers hold the process only while they work, a dead worker fails its
 * work and retires its pool, and the one pool a Node process shares between stores keeps
 * each store's known-chunks table to that store's requests.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { IngestPoolCore, POOL_IDLE_MS, PoolShare, type PoolWorker } from '../src/ingest/pool.js';
import type { ErrorShape, FromWorker, ToWorker } from '../src/ingest/protocol.js';
import { packSmallResults, unpackSmallResults, type ReadyChunks, type TooLarge } from '../src/ingest/small-batch.js';
import { serveIngest } from '../src/ingest/serve.js';
import { leasePool } from '../src/node/ingest-pool.js';
import { expectSameBytes, newStore, tempDir, textBytes } from './helpers/store.js';

const run = promisify(execFile);
const options = { chunking: { avg: 65_536 }, compression: 3 as const };

/** Fake workers that answer nothing until told: enough to watch holds and failures. */
function fakePool(size: number) {
  const workers: { holds: boolean[]; posted: ToWorker<string>[]; receive: (m: FromWorker) => void; fail: (e: Error) => void }[] = [];
  const pool = new IngestPoolCore<string>(size, (onMessage, onError) => {
    const w = { holds: [] as boolean[], posted: [] as ToWorker<string>[], receive: onMessage, fail: onError };
    workers.push(w);
    return {
      post: (m) => void w.posted.push(m),
      terminate: () => undefined,
      hold: (busy) => void w.holds.push(busy),
    } satisfies PoolWorker<string>;
  });
  return { pool, workers };
}

describe('ingest pool', () => {
  it('a worker holds the process only while it has work', async () => {
    const { pool, workers } = fakePool(1);
    const w = workers[0]!;
    expect(w.holds).toEqual([false]); // idle from the start
    const batch = pool.ingestSmall(['a', 'b'], options);
    expect(w.holds).toEqual([false, true]);
    const second = pool.ingestSmall(['c'], options); // still busy: no change
    expect(w.holds).toEqual([false, true]);
    const id = (n: number) => (w.posted[n] as { id: number }).id;
    w.receive({ type: 'small', id: id(0), ...packSmallResults([{ error: { message: 'x', kura: false } }, { error: { message: 'y', kura: false } }]) });
    await batch;
    expect(w.holds).toEqual([false, true]);
    w.receive({ type: 'small', id: id(1), ...packSmallResults([{ error: { message: 'z', kura: false } }]) });
    await second;
    expect(w.holds).toEqual([false, true, false]);
  });

  it('a small batch carries the head of each source (for the search index) beside its stat, chunks and errors', () => {
    const stat = { mode: 0o100644, dev: 1, ino: 2, size: 5, mtimeMs: 3.5, ctimeMs: 4.5 };
    const chunk = { offset: 0, length: 5, key: 'ab'.repeat(32), codec: 0 as const, payload: new Uint8Array([104, 101, 108, 108, 111]) };
    const digest = `sha256:${'cd'.repeat(32)}` as const;
    const packed = packSmallResults([
      { chunks: [chunk], digest, size: 5, count: 1, stat, head: new Uint8Array([104, 101, 108, 108, 111]) },
      { error: { message: 'gone', kura: false } },
      { chunks: [chunk], digest, size: 5, count: 1, head: new Uint8Array(0) },
      { chunks: [chunk], digest, size: 5, count: 1 },
      { large: stat },
    ]);
    const [withBoth, error, emptyHead, none, large] = unpackSmallResults(packed) as [ReadyChunks, ErrorShape, ReadyChunks, ReadyChunks, TooLarge];
    expect(withBoth).toMatchObject({ result: { digest, size: 5, chunks: 1, head: new Uint8Array([104, 101, 108, 108, 111]) }, stat });
    expect(withBoth.chunks[0]!.payload).toEqual(chunk.payload);
    expect(error).toMatchObject({ message: 'gone' });
    expect(emptyHead.result.head).toEqual(new Uint8Array(0));
    expect(none.result.head).toBeUndefined();
    expect(large).toEqual({ large: stat });
  });

  it('a worker that dies fails the work it had and marks the pool broken', async () => {
    const { pool, workers } = fakePool(2);
    expect(pool.broken).toBe(false);
    const batch = pool.ingestSmall(['a'], options);
    const owner = workers.find((w) => w.posted.length === 1)!;
    owner.fail(new Error('worker died'));
    await expect(batch).rejects.toThrow('worker died');
    expect(pool.broken).toBe(true);
    // Later work goes to the worker alive (the dead one, least busy once its work failed, was
    // chosen and answered nothing: a put waited for ever); with none alive it fails at once.
    const next = pool.ingestSource('c', options);
    const alive = workers.find((w) => w !== owner)!;
    expect(alive.posted.at(-1)).toMatchObject({ type: 'file', source: 'c' });
    expect(owner.posted).toHaveLength(1);
    await next.return(undefined as never);
    alive.fail(new Error('the other died too'));
    await expect(pool.ingestSource('d', options).next()).rejects.toThrow('worker died');
    await expect(pool.ingestSmall(['e'], options)).rejects.toThrow('worker died');
  });

  it('leases share one pool, which a later lease reuses warm', () => {
    const a = leasePool();
    const b = leasePool();
    expect(b.pool).toBe(a.pool);
    a.release();
    b.release();
    b.release(); // twice: no effect
    const c = leasePool();
    expect(c.pool).toBe(a.pool);
    c.release();
  });

  it('a shared pool closes POOL_IDLE_MS after its last release, and a broken one is replaced at once', async () => {
    vi.useFakeTimers();
    try {
      const made: { broken: boolean; closed: boolean; close(): Promise<void> }[] = [];
      const share = new PoolShare(() => {
        const p = { broken: false, closed: false, close: async () => void (p.closed = true) };
        made.push(p);
        return p;
      });
      const a = share.lease();
      const b = share.lease();
      expect([a.fresh, b.fresh, b.pool === a.pool]).toEqual([true, false, true]);
      a.release();
      b.release();
      vi.advanceTimersByTime(POOL_IDLE_MS - 1);
      const c = share.lease(); // within the idle time: the same pool, warm
      expect(c.pool).toBe(a.pool);
      c.release();
      vi.advanceTimersByTime(POOL_IDLE_MS);
      expect(made[0]!.closed).toBe(true);
      const d = share.lease(); // after it: a new one
      expect([d.fresh, made.length]).toEqual([true, 2]);
      made[1]!.broken = true;
      const e = share.lease();
      expect([e.fresh, made.length]).toEqual([true, 3]);
      d.release(); // the broken one closes with its last user, without waiting
      expect(made[1]!.closed).toBe(true);
      e.release();
    } finally {
      vi.useRealTimers();
    }
  });

  it('two stores sharing the pool at once each get their own known-chunks table', async () => {
    // Store A holds the text's chunks; B does not. If B's requests carried A's table, B's
    // worker would send them raw (as "known") and B would store them uncompressed.
    const text = textBytes(5, 2 << 20);
    const dir = tempDir();
    const path = join(dir, 'text.txt');
    writeFileSync(path, text);
    const { store: a } = await newStore();
    const { store: b } = await newStore();
    const putFile = async (store: typeof a) => {
      for await (const o of store.putFiles([{ path }])) {
        if (o.error) throw o.error;
        return o.result!;
      }
      throw new Error('no outcome');
    };
    await putFile(a);
    const [again, fresh] = await Promise.all([putFile(a), putFile(b)]);
    expect(again.newChunks).toBe(0);
    expect(fresh.newChunks).toBe(fresh.chunks);
    const stats = await b.stats();
    expect(stats.storedBytes).toBeLessThan(stats.uniqueChunkBytes / 2); // compressed
    expectSameBytes(await b.getBytes(fresh.digest), text);
    await Promise.all([a.close(), b.close()]);
  });

  it('a stream given up before its first read stops its worker and frees it', async () => {
    const { pool, workers } = fakePool(1);
    const w = workers[0]!;
    const stream = pool.ingestSource('a', options);
    expect(w.holds).toEqual([false, true]);
    const id = (w.posted[0] as { id: number }).id;
    await stream.return(undefined as never); // a generator's own finally does not run here
    expect(w.posted.slice(1)).toEqual([{ type: 'cancel', id }]);
    expect(w.holds).toEqual([false, true, false]);
    await stream.return(undefined as never); // once only
    expect(w.posted).toHaveLength(2);
    // Read to its end, nothing is cancelled; the worker is free once the end is read.
    const second = pool.ingestSource('b', options);
    const id2 = (w.posted[2] as { id: number }).id;
    w.receive({ type: 'end', id: id2, digest: `sha256:${'00'.repeat(32)}`, size: 0, chunks: 0 });
    expect(await second.next()).toMatchObject({ done: true, value: { size: 0 } });
    expect(w.posted).toHaveLength(3);
    expect(w.holds).toEqual([false, true, false, true, false]);
  });

  it('a put refused before its worker was read does not keep the process alive', async () => {
    const dir = tempDir();
    const file = join(dir, 'large.txt');
    writeFileSync(file, textBytes(5, 3_000_000)); // streamed by a worker, not batched
    const started = Date.now();
    const fixture = fileURLToPath(new URL('./fixtures/refused-put-exit.mjs', import.meta.url));
    const { stdout } = await run(process.execPath, [fixture, join(dir, 'store'), file], { timeout: 25_000 }); // the pool idles 30 s (POOL_IDLE_MS)
    expect(stdout.trim()).toBe('INVALID_INPUT');
    expect(Date.now() - started).toBeLessThan(25_000);
  }, 30_000);

  it('an idle pool does not keep a process alive', async () => {
    const dir = tempDir();
    const tree = join(dir, 'tree');
    mkdirSync(tree);
    for (let i = 0; i < 300; i++) writeFileSync(join(tree, `f${i}.txt`), `file ${i} `.repeat(50)); // enough for workers
    const started = Date.now();
    const fixture = fileURLToPath(new URL('./fixtures/snapshot-exit.mjs', import.meta.url));
    const { stdout } = await run(process.execPath, [fixture, join(dir, 'store'), tree], { timeout: 25_000 }); // the pool idles 30 s (POOL_IDLE_MS)
    expect(stdout.trim()).toBe('300');
    expect(Date.now() - started).toBeLessThan(25_000);
  }, 30_000);
});

describe('packed small batches', () => {
  const hex = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
  const chunk = fc.record({ length: fc.nat({ max: 1 << 20 }), key: hex, codec: fc.constantFrom(0, 1), payload: fc.uint8Array({ maxLength: 300 }) });
  const ok = fc.record({ digest: hex.map((h) => `sha256:${h}` as const), size: fc.nat({ max: 2 ** 40 }), chunks: fc.array(chunk, { maxLength: 4 }) });
  const failed = fc.record({ message: fc.string(), code: fc.option(fc.constantFrom('ENOENT', 'INVALID_INPUT'), { nil: undefined }), kura: fc.boolean() });

  it('unpack(pack(results)) gives every result back, payloads byte for byte, offsets from lengths', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(ok, failed), { maxLength: 12 }), (items) => {
        const results = items.map((r) =>
          'digest' in r
            ? { digest: r.digest, size: r.size, count: r.chunks.length, chunks: r.chunks.map((c) => ({ ...c, offset: -1 })) }
            : { error: Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) as ErrorShape },
        );
        const back = unpackSmallResults(structuredClone(packSmallResults(results)));
        expect(back).toHaveLength(results.length);
        results.forEach((r, i) => {
          const b = back[i]!;
          if ('error' in r) return expect(b).toEqual(r.error);
          if (!('chunks' in b)) throw new Error(`result ${i} came back as an error`);
          expect(b.result).toEqual({ digest: r.digest, size: r.size, chunks: r.count });
          let offset = 0;
          b.chunks.forEach((c, j) => {
            const sent = r.chunks[j]!;
            expect({ offset: c.offset, length: c.length, key: c.key, codec: c.codec }).toEqual({ offset, length: sent.length, key: sent.key, codec: sent.codec });
            expect(Buffer.from(c.payload).equals(Buffer.from(sent.payload))).toBe(true);
            offset += sent.length;
          });
          expect(b.chunks).toHaveLength(r.chunks.length);
        });
      }),
    );
  });
});

describe('packed small batches with groups', () => {
  it("a group's members, spread over the batch's documents, come back sharing one group: its frame, raw length and members in order of place", () => {
    const hex = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
    const member = fc.record({ key: hex, length: fc.integer({ min: 1, max: 5000 }), group: fc.nat({ max: 2 }), raw: fc.boolean(), payload: fc.uint8Array({ maxLength: 50 }) });
    fc.assert(
      fc.property(fc.array(fc.array(member, { maxLength: 5 }), { minLength: 1, maxLength: 6 }), fc.array(fc.uint8Array({ minLength: 1, maxLength: 200 }), { minLength: 3, maxLength: 3 }), (docs, frames) => {
        const groups = frames.map((frame) => ({ frame, rawLen: 0, members: [] as { key: string; length: number }[] }));
        const results = docs.map((chunks, d) => ({
          digest: `sha256:${String(d).padStart(64, '0')}` as const,
          size: 0,
          count: chunks.length,
          chunks: chunks.map((c) => {
            if (c.raw) return { offset: 0, length: c.length, key: c.key, codec: 0 as const, payload: c.payload };
            const g = groups[c.group]!;
            const at = g.rawLen;
            g.rawLen += c.length;
            g.members.push({ key: c.key, length: c.length });
            return { offset: 0, length: c.length, key: c.key, codec: 0 as const, payload: new Uint8Array(0), group: g, at };
          }),
        }));
        const back = unpackSmallResults(structuredClone(packSmallResults(results)));
        const seen = new Map<object, object>();
        results.forEach((r, i) => {
          const b = back[i]!;
          if (!('chunks' in b)) throw new Error(`result ${i} came back as an error`);
          b.chunks.forEach((c, j) => {
            const sent = r.chunks[j]!;
            expect([c.key, c.length, c.at]).toEqual([sent.key, sent.length, sent.at]);
            if (!sent.group) return expect([c.group, Buffer.from(c.payload).equals(Buffer.from(sent.payload))]).toEqual([undefined, true]);
            const g = c.group!;
            expect(seen.get(sent.group) ?? g).toBe(g); // one object per group, whichever document names it
            seen.set(sent.group, g);
            expect({ rawLen: g.rawLen, members: g.members, frame: Buffer.from(g.frame).toString('hex') }).toEqual({ rawLen: sent.group.rawLen, members: sent.group.members, frame: Buffer.from(sent.group.frame).toString('hex') });
          });
        });
      }),
    );
  });
});

describe('a worker reading a batch with readMany (browsers: Blob reads overlapped)', () => {
  it('ingests every source it read and answers an error for the one it could not', async () => {
    const texts = ['first', 'second', 'third'].map((w) => new TextEncoder().encode(w.repeat(300)));
    let handle!: ReturnType<typeof serveIngest<number>>;
    const answer = new Promise<FromWorker>((resolve) => {
      handle = serveIngest<number>({
        post: (m) => resolve(m),
        open: () => [],
        readWhole: () => {
          throw new Error('readMany must be used for a batch');
        },
        readMany: async (sources) => sources.map((i) => (i === 1 ? new Error('blob gone') : texts[i]!)),
      });
    });
    handle({ type: 'small', id: 7, sources: [0, 1, 2], options });
    const m = await answer;
    if (m.type !== 'small') throw new Error(`unexpected ${m.type}`);
    const [a, b, c] = unpackSmallResults(m);
    expect(b).toMatchObject({ message: 'blob gone' });
    for (const [r, i] of [[a, 0], [c, 2]] as const) {
      if (!r || !('chunks' in r)) throw new Error(`source ${i} failed`);
      expect(r.result.digest).toBe(`sha256:${createHash('sha256').update(texts[i]!).digest('hex')}`);
    }
  });
});
