/**
 * grep on worker threads (node/grep-away.ts): asked for (`workers: 2`), a store in a local
 * directory with more than a few MiB of text is scanned by workers that open it read-only. Checked against the scan on
 * one thread (`workers: 1`) of the same store: the same events in the same order for every
 * option — context, the limit (cut where it falls, mid-file and mid-batch), -l, case folding,
 * filters — and only a cut scan's `bytes` may differ. Also: damage is an error event in its
 * place, a scan is on this thread by default until the text it must read passes its bound,
 * and a closed store lets its workers go.
 */
import { availableParallelism } from 'node:os';
import { closeSync, openSync, readSync, readdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GrepPool } from '../src/node/grep-away.js';
import { TextCache } from '../src/search/text-cache.js';
import { Reader } from '../src/bytes/read.js';
import type { GrepEvent } from '../src/search/grep.js';
import type { Store } from '../src/node/index.js';
import { newStore, recordsEnd, reopen, textBytes } from './helpers/store.js';

const enc = new TextEncoder();
const parallel = availableParallelism() >= 2;

async function all(store: Store, pattern: string, options = {}): Promise<GrepEvent[]> {
  const out: GrepEvent[] = [];
  for await (const e of store.grep(pattern, options)) out.push(e);
  return out;
}

/** `count` files of ~64 KiB of text: a word on every 40th line of every third file, another in a few. */
async function fill(store: Store, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const lines = new TextDecoder().decode(textBytes(100 + i, 64 * 1024)).split('\n');
    const marked = lines.map((l, k) => (i % 3 === 0 && k % 40 === 7 ? `${l} Harbour ${k}` : i % 50 === 1 && k === 3 ? `${l} zzrare` : l));
    await store.put(enc.encode(marked.join('\n')), { path: `t/${i % 2 ? 'odd' : 'even'}/f${String(i).padStart(3, '0')}.txt`, tags: [i % 2 ? 'odd' : 'even'] });
  }
}

afterEach(() => vi.restoreAllMocks());

describe('grep on worker threads', () => {
  it('gives the events of the scan on one thread, in order, for every option', { timeout: 120_000 }, async () => {
    const { store } = await newStore();
    await fill(store, 300); // ~19 MiB, half of it under each filter: past PARALLEL_MIN_BYTES
    // And a document larger than WORKER_DOC_MAX, scanned on this thread in its turn.
    const big = new TextDecoder().decode(textBytes(7, 6 << 20)).split('\n').map((l, k) => (k % 500 === 3 ? `${l} Harbour big ${k}` : l));
    await store.put(enc.encode(big.join('\n')), { path: 't/even/f150-big.txt', tags: ['even'] });
    const scans = vi.spyOn(GrepPool.prototype, 'scan');
    const cases: [string, object][] = [
      ['harbour', { ignoreCase: true }],
      ['Harbour \\d+', {}],
      ['Harbour (big )?\\d+|\\bHarb', { onlyMatching: true, context: 1 }],
      ['Harbour', { context: 2 }],
      ['Harbour', { firstPerFile: true }],
      ['Harbour', { limit: 1 }],
      ['Harbour', { limit: 777, context: 1 }], // cut mid-file, inside a batch
      ['Harbour', { limit: 5000 }], // more than there are: not cut
      ['zzrare|Harbour 47\\b', { prefixes: ['t/odd/'] }],
      ['Harbour', { tag: 'even', context: 1 }],
      ['no such words anywhere', {}],
      ['Harbour', { count: true }],
      ['harbour', { count: true, ignoreCase: true, tag: 'even' }],
      ['Harbour', { count: true, limit: 777 }], // cut inside a file's count
    ];
    for (const [pattern, options] of cases) {
      const one = await all(store, pattern, { ...options, workers: 1 });
      const many = await all(store, pattern, { ...options, workers: 2 });
      const summary = (e: GrepEvent[]) => e.at(-1) as Extract<GrepEvent, { type: 'summary' }>;
      expect(summary(one).files, `${pattern} ${JSON.stringify(options)}`).toBeGreaterThan(0);
      // A cut scan's workers may have scanned more text than the one thread did before the cut.
      if (summary(one).truncated) expect(summary(many).bytes).toBeGreaterThanOrEqual(summary(one).bytes);
      const same = (e: GrepEvent[]) => e.map((x) => (x.type === 'summary' && x.truncated ? { ...x, bytes: 0 } : x));
      expect(same(many), `${pattern} ${JSON.stringify(options)}`).toEqual(same(one));
    }
    expect(scans).toHaveBeenCalledTimes(parallel ? cases.length : 0);
    // Counts are the lines' counts, file by file, and send no line.
    const lines = await all(store, 'Harbour', { workers: 2 });
    const counted = await all(store, 'Harbour', { count: true, workers: 2 });
    expect(counted.filter((e) => e.type === 'match' || e.type === 'context')).toEqual([]);
    const perFile = (e: GrepEvent[]) => e.filter((x) => x.type === 'end').map((x) => [x.path, (x as { matches: number }).matches]);
    expect(perFile(counted)).toEqual(perFile(lines));
    expect(counted.at(-1)).toEqual(lines.at(-1));
    // (The limit holds: 777 matches, the last one's file ended at it.)
    const cut = await all(store, 'Harbour', { limit: 777, workers: 2 });
    expect(cut.filter((e) => e.type === 'match')).toHaveLength(777);
    expect(cut.at(-1)).toMatchObject({ type: 'summary', matches: 777, truncated: true });
    expect(cut.at(-2)).toMatchObject({ type: 'end' });
    await expect(all(store, '(unclosed', { workers: 2 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(all(store, 'x', { workers: 2, context: 101 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    for (const workers of [0, 1.5, Number.NaN]) await expect(all(store, 'x', { workers })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect((await all(store, 'Harbour big 3\\b')).at(-1)).toMatchObject({ type: 'summary', matches: 1 }); // (a bad `workers` left nothing behind)
  });

  it('keeps the texts it read and checked: a second grep reads none again, on one thread or on the workers, and finds the same', { timeout: 120_000 }, async () => {
    const { store, dir } = await newStore();
    await fill(store, 200);
    // The same bytes as text and as a type that is no text: the key is the media type's too.
    await store.put(enc.encode('Harbour in a text\n'), { path: 'same/a.txt', mediaType: 'text/plain' });
    await store.put(enc.encode('Harbour in a text\n'), { path: 'same/b.bin', mediaType: 'application/octet-stream' });
    await store.close();
    for (const workers of [1, 2]) {
      const s = await reopen(dir);
      const kept = vi.spyOn(TextCache.prototype, 'put');
      const reads = vi.spyOn(Reader.prototype, 'bytes');
      const first = await all(s, 'Harbour', { workers });
      const read = { kept: kept.mock.calls.length, here: reads.mock.calls.length };
      expect(read.kept, `workers ${workers}`).toBeGreaterThan(100); // (the workers lend theirs back)
      const second = await all(s, 'Harbour', { workers });
      expect(second).toEqual(first);
      // Nothing read again: no text read on this thread, none lent back by a worker.
      expect([kept.mock.calls.length, reads.mock.calls.length], `workers ${workers}`).toEqual([read.kept, read.here]);
      expect(first.filter((e) => e.type === 'begin' && e.path.startsWith('same/')).map((e) => (e as { path: string }).path)).toEqual(['same/a.txt']);
      vi.restoreAllMocks();
      await s.close();
    }
  });

  it('finds every path while puts change them: what is listed here is committed for the workers (found in review)', { timeout: 120_000 }, async () => {
    const { store } = await newStore();
    const n = 3000;
    const path = (i: number) => `t/f${String(i).padStart(5, '0')}.txt`;
    const body = (i: number, extra = '') => enc.encode(extra + Array.from({ length: 75 }, (_, k) => `line ${k} of file ${i} Harbour dolor sit amet`).join('\n'));
    for (let i = 0; i < n; i += 100) await Promise.all(Array.from({ length: 100 }, (_, k) => store.put(body(i + k), { path: path(i + k) })));
    for (let trial = 0; trial < 15; trial++) {
      let stop = false;
      const writes = (async () => {
        while (!stop) {
          const k = Math.floor(Math.random() * n);
          await store.put(body(k, `v${trial} ${Math.random()}\n`), { path: path(k) });
        }
      })();
      const seen = new Set<string>();
      for await (const e of store.grep('Harbour', { firstPerFile: true })) if (e.type === 'end') seen.add(e.path);
      stop = true;
      await writes;
      expect(seen.size, `trial ${trial}`).toBe(n); // (the code before lost a path in 2 of 15 trials)
    }
  });

  it('a damaged document is an error event in its place; the rest is scanned', { timeout: 120_000 }, async () => {
    const { store, dir } = await newStore();
    await fill(store, 150);
    await store.close();
    // Damage the last record of the first pack.
    const root = join(dir, 'packs');
    const [pack] = readdirSync(root)
      .flatMap((sub) => readdirSync(join(root, sub)).map((f) => join(root, sub, f)))
      .sort();
    const fd = openSync(pack!, 'r+');
    const b = Buffer.alloc(1);
    const at = recordsEnd(pack!) - 10;
    readSync(fd, b, 0, 1, at);
    b[0]! ^= 0x40;
    writeSync(fd, b, 0, 1, at);
    closeSync(fd);
    const s2 = await reopen(dir);
    const events = await all(s2, 'Harbour', { workers: 2 });
    const errors = events.filter((e) => e.type === 'error');
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) expect(e).toMatchObject({ code: 'CORRUPT_DATA' });
    const files = new Set(events.filter((e) => e.type === 'end').map((e) => (e as { path: string }).path));
    expect(files.size).toBeGreaterThan(40); // the others, matched
    expect(events.at(-1)).toMatchObject({ type: 'summary', files: 150 });
  });

  it.each([1, 2])('a store closed while its reader still pulls ends the scan with STORE_CLOSED (workers: %i)', { timeout: 120_000 }, async (workers) => {
    const { store } = await newStore();
    await fill(store, 600);
    const it = store.grep('Harbour', { workers })[Symbol.asyncIterator]();
    await it.next();
    await new Promise((r) => setTimeout(r, 300)); // (the workers' batches in flight answered)
    void store.close();
    await expect(
      (async () => {
        for (let r = await it.next(); !r.done; r = await it.next());
      })(),
    ).rejects.toMatchObject({ code: 'STORE_CLOSED' });
  });

  it('scans a literal here by default until the text it must read passes the bound (512 MiB while no workers run, 8 MiB while they do), then starts them; `workers: 2` asks for them; a closed store lets its workers go', { timeout: 120_000 }, async () => {
    const { store } = await newStore();
    await fill(store, 10);
    const scans = vi.spyOn(GrepPool.prototype, 'scan');
    const close = vi.spyOn(GrepPool.prototype, 'close');
    expect((await all(store, 'Harbour')).at(-1)).toMatchObject({ type: 'summary', files: 10, filesMatched: 4 });
    expect(scans).not.toHaveBeenCalled();
    await fill(store, 320); // ~10 MiB under t/even/, ~10 MiB under t/odd/
    // No workers run: 10 MiB to read back is scanned here (starting them would cost more).
    const warm = vi.spyOn(GrepPool.prototype, 'warm');
    const even = await all(store, 'Harbour', { prefixes: ['t/even/'] });
    expect(even.at(-1)).toMatchObject({ type: 'summary', files: 160 });
    expect(scans).not.toHaveBeenCalled();
    // ...and the workers start then, for the greps to come.
    expect(warm).toHaveBeenCalledTimes(parallel ? 1 : 0);
    // Asked for, the workers scan it (8 MiB of text, kept or not), and find the same.
    expect(await all(store, 'Harbour', { prefixes: ['t/even/'], workers: 2 })).toEqual(even);
    expect(scans).toHaveBeenCalledTimes(parallel ? 1 : 0);
    // While they run, text not kept past 8 MiB goes to them; kept text is scanned here.
    const odd = await all(store, 'Harbour', { prefixes: ['t/odd/'] });
    expect(odd.at(-1)).toMatchObject({ type: 'summary', files: 160 });
    expect(scans).toHaveBeenCalledTimes(parallel ? 2 : 0);
    expect(await all(store, 'Harbour', { prefixes: ['t/odd/'] })).toEqual(odd);
    expect(scans).toHaveBeenCalledTimes(parallel ? 2 : 0);
    await store.close();
    expect(close).toHaveBeenCalledTimes(parallel ? 1 : 0);
  });
  it('a pattern that is no literal goes to the workers once the scan holds 8 MiB of text, kept or not (its matching is the work)', { timeout: 120_000 }, async () => {
    const { store } = await newStore();
    await fill(store, 160); // ~10 MiB
    const scans = vi.spyOn(GrepPool.prototype, 'scan');
    const first = await all(store, 'Harbour \\d+');
    expect(first.at(-1)).toMatchObject({ type: 'summary', files: 160 });
    expect(scans).toHaveBeenCalledTimes(parallel ? 1 : 0);
    expect(await all(store, 'Harbour \\d+')).toEqual(first);
    expect(scans).toHaveBeenCalledTimes(parallel ? 2 : 0);
    // A literal over kept text stays here, workers or not.
    expect((await all(store, 'Harbour')).at(-1)).toMatchObject({ type: 'summary', files: 160 });
    expect(scans).toHaveBeenCalledTimes(parallel ? 2 : 0);
    await store.close();
  });
});
