/**
 * Grep's cache of checked text (search/text-cache.ts): least recently used out first, within
 * its bound in bytes; a text over the bound of one entry is not kept; kept bytes are shared
 * memory (lent to grep's workers without a copy); a key names a document's text as grep reads
 * it — the same bytes under a media type that is no text are another key.
 */
import { describe, expect, it } from 'vitest';
import { TextCache, shareable, textKey } from '../src/search/text-cache.js';

const bytes = (n: number, v = 1) => new Uint8Array(n).fill(v);

describe('the text cache', () => {
  it('keeps texts within its bound, the least recently used going first', () => {
    const c = new TextCache(300, 200);
    c.put('a', bytes(100, 1));
    c.put('b', bytes(100, 2));
    c.put('c', bytes(100, 3));
    expect(c.bytes).toBe(300);
    expect(c.get('a')?.[0]).toBe(1); // (a is now the most recently used)
    c.put('d', bytes(100, 4)); // b goes
    expect([c.get('a'), c.get('b'), c.get('c'), c.get('d')].map((t) => t?.[0])).toEqual([1, undefined, 3, 4]);
    expect(c.bytes).toBe(300);
    c.put('e', bytes(201)); // over one entry's bound: not kept, nothing evicted
    expect([c.get('e'), c.bytes]).toEqual([undefined, 300]);
    c.put('f', bytes(200, 6)); // two go for it
    expect([c.get('a'), c.get('c'), c.get('d')?.[0], c.get('f')?.[0], c.bytes]).toEqual([undefined, undefined, 4, 6, 300]);
    c.clear();
    expect([c.get('d'), c.bytes]).toEqual([undefined, 0]);
  });

  it('keeps shared memory, a copy of what it is given (the giver may reuse its buffer)', () => {
    const given = bytes(10, 7);
    const c = new TextCache(100, 100);
    c.put('k', given);
    given.fill(0);
    const kept = c.get('k')!;
    expect(kept.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect([...kept]).toEqual(Array(10).fill(7));
    expect(shareable(kept)).toBe(kept); // (already shared: not copied again)
  });

  it("keys a document's text by its digest and how it is read", () => {
    const d = new Uint8Array(32).fill(0xab);
    expect(textKey(d, { mediaType: 'text/plain' })).toBe(`${'ab'.repeat(32)}|text/plain`);
    expect(new Set([textKey(d, { mediaType: 'text/plain' }), textKey(d, { mediaType: null }), textKey(d, { mediaType: 'application/octet-stream' }), textKey(d, 'extracted')]).size).toBe(4);
  });
});
