/**
 * A document whose text is extracted (HTML, PDF, DOCX: `doc_text`) is searched and grepped by
 * that text, not by reading its bytes. Once verify has found its chunks damaged, a search hit
 * says so (`damaged`) and grep reports it as an error, as for any document that cannot be read
 * — a trial found both serving the text of a document `get` could no longer read.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newStore, reopen } from './helpers/store.js';

const page = `<html><body>${Array.from({ length: 2000 }, (_, i) => `<p>para ${i} walrus invoice</p>`).join('')}</body></html>`;

function packsOf(dir: string): string[] {
  const out: string[] = [];
  for (const sub of readdirSync(join(dir, 'packs'))) for (const f of readdirSync(join(dir, 'packs', sub))) if (f.endsWith('.pack')) out.push(join(dir, 'packs', sub, f));
  return out;
}

describe('extracted text of a damaged document', () => {
  it('a search hit says the damage once verify has found it; grep reports it, matching nothing', async () => {
    const { store: first, dir } = await newStore();
    let store = first;
    const { digest } = await store.put(new TextEncoder().encode(page), { path: 'big.html', mediaType: 'text/html' });
    await store.put(new TextEncoder().encode('a walrus in plain text'), { path: 'plain.txt' });
    await store.indexStatus({ wait: true });
    expect((await store.search('walrus', { mode: 'keyword' })).map((h) => [h.path, h.damaged])).toEqual(expect.arrayContaining([['big.html', undefined], ['plain.txt', undefined]]));
    await store.close();
    // One byte of the page's stored chunks changed.
    const [pack] = packsOf(dir);
    const bytes = readFileSync(pack!);
    bytes[200]! ^= 0x01;
    writeFileSync(pack!, bytes);
    store = await reopen(dir);
    await expect(store.getBytes(digest)).rejects.toMatchObject({ code: 'CORRUPT_DATA' });
    expect((await store.verify()).ok).toBe(false);
    const hits = await store.search('walrus', { mode: 'keyword' });
    const big = hits.find((h) => h.path === 'big.html')!;
    expect(big.damaged).toMatch(/verify found damaged/);
    expect(big.snippet).not.toMatch(/walrus/); // (no text of it is shown)
    expect(hits.find((h) => h.path === 'plain.txt')!.damaged).toBeUndefined();
    const events = [];
    for await (const e of store.grep('walrus', {})) events.push(e);
    expect(events.filter((e) => e.type === 'error').map((e) => (e as { path?: string; code?: string }).path)).toEqual(['big.html']);
    expect(events.filter((e) => e.type === 'match').map((e) => (e as { path: string }).path)).toEqual(['plain.txt']);
    // The same bytes put again mend it: its text is served again.
    await store.put(new TextEncoder().encode(page), { path: 'copy.html', mediaType: 'text/html' });
    expect((await store.verify()).ok).toBe(true);
    expect((await store.search('walrus', { mode: 'keyword', collapse: false })).filter((h) => h.damaged !== undefined)).toEqual([]);
    let matched = 0;
    for await (const e of store.grep('walrus', {})) if (e.type === 'end' && (e as { path: string }).path === 'big.html') matched = (e as { matches: number }).matches;
    expect(matched).toBe(2000);
  });
});
