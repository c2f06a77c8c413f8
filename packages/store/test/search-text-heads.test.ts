/**
 * The first bytes of documents just put, kept for the search index (search/text-heads.ts): an
 * ingest worker sends back the head of each listed file it read, and the index takes its text
 * from there instead of reading the document back. What gets indexed must be exactly what a
 * read back would give (the same 1 MiB cap, the same sniffing): checked against a store that
 * put the same files on this thread, where no head is kept.
 */
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TextHeads } from '../src/search/text-heads.js';
import { INDEXED_TEXT_MAX } from '../src/search/text.js';
import { KIND_HEAD } from '../src/extract/kind.js';
import type { StoreContext } from '../src/store-context.js';
import type { Store } from '../src/node/index.js';
import { newStore, randomBytes, recordsEnd, tempDir, textBytes } from './helpers/store.js';

const enc = new TextEncoder();
const heads = (s: Store) => (s as unknown as { ctx: StoreContext }).ctx.indexer.heads;

describe('TextHeads', () => {
  it('keeps text-like heads within its budget, oldest out first; answers a head only as long as asked', () => {
    const h = new TextHeads(10_000);
    h.keep('sha256:a', enc.encode('a'.repeat(4000)), 4000);
    h.keep('sha256:bin', new Uint8Array([104, 105, 0, 1]), 4); // a NUL: binary, not kept
    h.keep('sha256:b', enc.encode('b'.repeat(4000)), 4000);
    expect(h.bytes).toBe(8000);
    expect(h.head('sha256:bin', 1)).toBeUndefined();
    expect(new TextDecoder().decode(h.head('sha256:a', 3))).toBe('aaa');
    expect(h.head('sha256:a', 4001)).toBeUndefined(); // (shorter than asked: read back instead)
    h.keep('sha256:c', enc.encode('c'.repeat(4000)), 4000); // over the budget: `a` goes
    expect([h.head('sha256:a', 1), h.bytes]).toEqual([undefined, 8000]);
    h.forget('sha256:b');
    h.forget('sha256:b');
    expect(h.bytes).toBe(4000);
    h.keep('sha256:huge', enc.encode('x'.repeat(10_001)), 10_001); // larger than the whole budget
    expect(h.bytes).toBe(4000);
  });

  it('remembers a binary document only when its head shows what a read back would: no text, no extractor', () => {
    const h = new TextHeads(10_000);
    const bin = randomBytes(1, KIND_HEAD + 10);
    bin[0] = 0; // (binary whatever the rest)
    h.keep('sha256:whole', bin.subarray(0, 100), 100);
    h.keep('sha256:enough', bin.subarray(0, KIND_HEAD), KIND_HEAD + 10); // (the kind is told from KIND_HEAD bytes)
    h.keep('sha256:short', bin.subarray(0, 100), 101); // a head shorter than what the kind is told from
    h.keep('sha256:pdf', Buffer.concat([bin.subarray(0, 100), enc.encode('%PDF-1.4')]), 108);
    h.keep('sha256:docx', Buffer.concat([enc.encode('PK\x03\x04'), bin.subarray(0, 100), enc.encode('word/document.xml')]), 121);
    expect(['whole', 'enough', 'short', 'pdf', 'docx'].map((d) => h.binary(`sha256:${d}`))).toEqual([true, true, false, false, false]);
    expect([h.bytes, h.head('sha256:whole', 1)]).toEqual([0, undefined]); // (no bytes kept for them)
    h.forget('sha256:whole');
    expect(h.binary('sha256:whole')).toBe(false);
    h.clear();
    expect(h.binary('sha256:enough')).toBe(false);
  });

});

describe('text past the keyword index\'s cap', () => {
  it('is counted in the index status (textCapped): text files over 1 MiB are searched by their first MiB', async () => {
    const { store } = await newStore();
    const long = new TextEncoder().encode(`${'a line of text\n'.repeat(Math.ceil(INDEXED_TEXT_MAX / 15) + 10)}zanzibar at the end\n`);
    // (Typed as `kura add` and HTTP type them: detected from the name and the first bytes.)
    await store.put(long, { path: 'long.log', mediaType: 'text/plain' });
    await store.put(long, { path: 'copy.log', mediaType: 'text/plain' }); // two entries, one document: two
    await store.put(new TextEncoder().encode('short'), { path: 'short.txt' });
    await store.put(randomBytes(3, INDEXED_TEXT_MAX + 1000), { path: 'blob.bin', mediaType: 'application/octet-stream' });
    const status = await store.indexStatus({ wait: true });
    expect(status.textCapped).toBe(2);
    expect((await store.search('zanzibar')).map((h) => h.path)).toEqual([]); // (what the count warns of)
  });
});

describe('the search index of files put by ingest workers', () => {
  it('indexes the heads the workers sent, as a read back would have, and keeps none after', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const write = (name: string, bytes: Uint8Array) => {
      writeFileSync(join(dir, name), bytes);
      return join(dir, name);
    };
    const cat = (...parts: Uint8Array[]) => Buffer.concat(parts);
    const files = [
      write('a.txt', cat(enc.encode('zebraquartz opens the file\n'), textBytes(1, 200_000))),
      // Over the cap: a word past the first MiB is not indexed, read back or not.
      write('big.txt', cat(enc.encode('beforethecut\n'), textBytes(2, INDEXED_TEXT_MAX), enc.encode('\nafterthecut\n'))),
      write('bin.dat', cat(randomBytes(3, 100_000), enc.encode(' zebraquartz '))),
      write('é.md', cat(enc.encode('# ünïcode héad\n'), textBytes(4, 90_000))),
      // Small files: read whole by the workers in batches (small-batch.ts), heads and all.
      write('small.txt', cat(enc.encode('smallword here\n'), textBytes(5, 2_000))),
      write('small.dat', cat(randomBytes(6, 3_000), enc.encode(' smallword '))),
    ];
    const { store } = await newStore();
    const { store: here } = await newStore();
    const digests = new Map<string, string>();
    for await (const o of store.putFiles(files.map((path) => ({ path, meta: { path: path.slice(dir.length + 1) } })), { workers: 2 })) {
      expect(o.error).toBeUndefined();
      digests.set(o.path, o.result!.digest);
    }
    const kept = heads(store).bytes; // (before the background indexer, 200 ms after the last put, takes them)
    // Of the binary files, only that they are binary (they are not read back to learn it).
    expect(files.map((f) => heads(store).binary(digests.get(f)!))).toEqual(files.map((f) => f.endsWith('.dat')));
    for (const path of files) await here.put(path, { path: path.slice(dir.length + 1) });
    // The text files' heads are kept (the cap's worth of the large one); not the binary files'.
    expect(kept).toBe(files.filter((f) => !f.endsWith('.dat')).reduce((n, f) => n + Math.min(statSync(f).size, INDEXED_TEXT_MAX), 0));
    expect(heads(here).bytes).toBe(0);
    for (const q of ['zebraquartz', 'beforethecut', 'afterthecut', 'ünïcode héad', 'smallword', 'the']) {
      const found = (await store.search(q, { mode: 'keyword' })).map((h) => [h.path, h.score]);
      expect(found, q).toEqual((await here.search(q, { mode: 'keyword' })).map((h) => [h.path, h.score]));
    }
    expect((await store.search('zebraquartz', { mode: 'keyword' })).map((h) => h.path)).toEqual(['a.txt']); // (not the binary file)
    expect((await store.search('smallword', { mode: 'keyword' })).map((h) => h.path)).toEqual(['small.txt']);
    expect((await store.search('beforethecut', { mode: 'keyword' })).map((h) => h.path)).toEqual(['big.txt']);
    expect((await store.search('"ünïcode héad"', { mode: 'keyword' })).map((h) => h.path)).toEqual(['é.md']);
    expect(await store.search('afterthecut', { mode: 'keyword' })).toEqual([]);
    expect(heads(store).bytes).toBe(0); // each forgotten once indexed
  });

  it('takes the text from the heads, not from the packs (damaged here after the put, the text is still indexed)', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const path = join(dir, 'n.txt');
    writeFileSync(path, Buffer.concat([enc.encode('quokkaword in the first line\n'), textBytes(9, 300_000)]));
    const { store, dir: storeDir } = await newStore();
    for await (const o of store.putFiles([{ path, meta: { path: 'n.txt' } }], { workers: 2 })) expect(o.error).toBeUndefined();
    // Every pack's bytes flipped where records lie: a read back of n.txt fails from here on.
    for (const f of readdirSync(join(storeDir, 'packs'), { recursive: true }).map(String)) {
      const file = join(storeDir, 'packs', f);
      if (!statSync(file).isFile()) continue;
      const b = readFileSync(file);
      for (let at = 64; at < recordsEnd(file) - 16; at += 4096) b[at]! ^= 0x55;
      writeFileSync(file, b);
    }
    await expect(store.getBytes((await store.stat('n.txt')).digest)).rejects.toMatchObject({ code: 'CORRUPT_DATA' });
    expect((await store.search('quokkaword', { mode: 'keyword' })).map((h) => h.path)).toEqual(['n.txt']);
  });
});
