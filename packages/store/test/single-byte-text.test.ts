/**
 * Text written in Latin-1 or Windows-1252 (old notes, exported spreadsheets) is no UTF-8: its
 * `é` is one byte, E9. A trial found `café` in such a file shown as "caf\uFFFD" in snippets and
 * found by no search. It is read as Windows-1252 where the bytes are no UTF-8 and hold no UTF-8
 * character at all; UTF-8 with a damaged byte stays UTF-8.
 */
import { describe, expect, it } from 'vitest';
import { decodeText, looksLikeText, textAsUtf8 } from '../src/search/text.js';
import { newStore } from './helpers/store.js';

const latin1 = (s: string) => Uint8Array.from([...s].map((c) => c.charCodeAt(0)));
const utf8 = (s: string) => new TextEncoder().encode(s);

describe('text in a single-byte encoding', () => {
  it('is decoded as Windows-1252 only when it holds no UTF-8 character', () => {
    expect(decodeText(latin1('Un café à Zürich'))).toBe('Un café à Zürich');
    expect(decodeText(Uint8Array.from([0x93, 0x71, 0x94, 0x20, 0x80]))).toBe('“q” €'); // (Windows-1252's own)
    expect(decodeText(utf8('Un café à Zürich'))).toBe('Un café à Zürich');
    // UTF-8 with one damaged byte: still UTF-8, the damage replaced.
    const damaged = utf8('naïve café');
    damaged[9] = 0xff;
    expect(decodeText(damaged)).toBe('naïve ca\uFFFDé');
    // A UTF-8 character cut at the end of a head: UTF-8.
    expect(decodeText(utf8('café').subarray(0, 4))).toBe('caf\uFFFD');
    expect(new TextDecoder().decode(textAsUtf8(latin1('café')))).toBe('café');
    const asIs = utf8('café');
    expect(textAsUtf8(asIs)).toBe(asIs);
  });

  it('a Latin-1 file is found by its words, shown as written, and grepped as its text', async () => {
    const { store } = await newStore();
    await store.put(latin1('Réunion au café de la gare, à Zürich.\n'), { path: 'notes/latin1.txt', mediaType: 'text/plain' });
    const hits = await store.search('café', { mode: 'keyword' });
    expect(hits.map((h) => h.path)).toEqual(['notes/latin1.txt']);
    expect(hits[0]!.snippet).toContain('<mark>café</mark>');
    expect((await store.search('zurich', { mode: 'keyword' })).map((h) => h.path)).toEqual(['notes/latin1.txt']); // (accents fold)
    const lines = [];
    for await (const e of store.grep('café de', {})) if (e.type === 'match') lines.push(e.text);
    expect(lines).toEqual(['Réunion au café de la gare, à Zürich.']);
  });

  it('one with no media type (a CHANGELOG, NEWS) is text too; binary data is not (it was taken for binary, unsearched: a trial)', async () => {
    const { store } = await newStore();
    await store.put(latin1('Journal de bord\nLe café de Noël\nwombat\n'), { path: 'f/CHANGELOG' });
    await store.put(latin1('Journal de bord\nLe café de Noël\nwombat\n'), { path: 'f/notes.txt' });
    expect(looksLikeText(latin1('Le café de Noël\f\r\n\x1a'))).toBe(true);
    const random = Uint8Array.from({ length: 4096 }, (_, i) => ((i * 2654435761) >>> 24) | 1); // no NUL, but bytes of every kind
    expect(looksLikeText(random)).toBe(false);
    expect(looksLikeText(latin1('\x01\x02 un café noir'))).toBe(false); // (control bytes: not a single-byte text)
    expect(looksLikeText(latin1('éèêëàâäôöûüçÿ'))).toBe(false); // (mostly past ASCII: no text)
    expect((await store.search('wombat', { mode: 'keyword', collapse: false })).map((h) => h.path).sort()).toEqual(['f/CHANGELOG', 'f/notes.txt']);
    const files = new Set<string>();
    for await (const e of store.grep('Noël', {})) if (e.type === 'match') files.add(e.path);
    expect([...files].sort()).toEqual(['f/CHANGELOG', 'f/notes.txt']);
  });
});
