/**
 * A pack's buffer is reused by the packs after it once its upload and local copy settle
 * (bytes/object-packs.ts): no pack may carry another's bytes, whether the upload before it
 * succeeded, failed before it was sent, or happened with its answer lost.
 */
import { describe, expect, it } from 'vitest';
import { ObjectPackStore, packKey } from '../src/bytes/object-packs.js';
import { FaultyObjectStore } from '../src/objects/faulty-objects.js';
import { MemoryObjectStore } from '../src/objects/memory-objects.js';
import { randomBytes } from './helpers/store.js';

const name = (i: number) => i.toString(16).padStart(32, '0');

describe('ObjectPackStore buffers', () => {
  it('gives every pack exactly its own bytes, large after small and small after large, through failed uploads', async () => {
    const inner = new MemoryObjectStore();
    const objects = new FaultyObjectStore(inner, [
      { op: 'create', key: /0{31}3\.pack$/, when: 'before' },
      { op: 'create', key: /0{31}5\.pack$/, when: 'after' },
    ]);
    const kept = new Map<string, Buffer>();
    // The local copy is taken late: a buffer handed on before it settled would show in it.
    const packs = new ObjectPackStore(objects, async (n, bytes) => {
      await new Promise((r) => setTimeout(r, 3));
      kept.set(n, Buffer.from(bytes));
    });
    // Sizes that grow, shrink and grow past the buffers before them (3 MiB > 2 MiB doubled).
    const sizes = [3 << 20, 1000, 5 << 20, 70_000, 2 << 20, 17, 4 << 20];
    const wrote = new Map<string, Uint8Array>();
    const closing: Promise<void>[] = [];
    for (const [i, size] of sizes.entries()) {
      const w = await packs.create(name(i));
      const bytes = randomBytes(100 + i, size);
      // In parts, as a writer appends records (a header, then its payload).
      for (let at = 0; at < size; at += 40_000) expect(w.append(bytes.subarray(at, Math.min(at + 25_000, size)), bytes.subarray(Math.min(at + 25_000, size), Math.min(at + 40_000, size)))).toBe(at);
      expect(w.size).toBe(size);
      wrote.set(name(i), bytes);
      // Every other close is left pending while the next pack is written.
      const closed = i === 3 ? expect(w.close()).rejects.toThrow(/injected fault/) : i === 5 ? expect(w.close()).rejects.toThrow(/answer was lost/) : w.close();
      if (i % 2) await closed;
      else closing.push(closed);
    }
    await Promise.all(closing);
    for (const [i] of sizes.entries()) {
      const stored = await inner.head(packKey(name(i)));
      if (i === 3) expect(stored).toBeUndefined(); // (failed before it was sent)
      else expect(Buffer.from(await inner.get(packKey(name(i)))).equals(Buffer.from(wrote.get(name(i))!)), `pack ${i}`).toBe(true);
      expect(kept.get(name(i))?.equals(Buffer.from(wrote.get(name(i))!)), `copy ${i}`).toBe(true);
    }
    await packs.close();
  });
});
