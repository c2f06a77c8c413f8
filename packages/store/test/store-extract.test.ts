/**
 * Text extraction for search (decision 0035): PDFs, DOCX and HTML made by real tools are found
 * by words that exist only inside them; a damaged document is stored, reported and harms no
 * other; caps hold; a closing store leaves extraction for the next run instead of waiting.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import { extractText } from '../src/extract/extract.js';
import { extractKind } from '../src/extract/kind.js';
import { EXTRACT_CAPS } from '../src/extract/caps.js';
import { WorkerExtractor } from '../src/node/extract-away.js';
import { makeDocx, makeHtml, makePdf } from './helpers/documents.js';
import { batchEnded, indexInCatalog, newStore, tempDir } from './helpers/store.js';

const paths = async (store: Store, q: string) => (await store.search(q)).map((h) => h.path).sort();

describe('text extraction', () => {
  it('finds PDFs, DOCX and HTML by words only inside them, with snippets from the extracted text', { timeout: 60_000 }, async () => {
    const { store } = await newStore();
    const pdf = makePdf(['Otters of the harbour', 'The second page mentions a quokkazeppelin at dawn.']);
    const docx = await makeDocx(['Minutes of the meeting', 'We agreed to buy a wombatlantern for the hall.']);
    const html = makeHtml('Field notes', ['A numbatcarousel turned all night.']);
    // No names that say what they are: the kind comes from the bytes.
    await store.put(pdf, { path: 'a/one' });
    await store.put(docx, { path: 'a/two' });
    await store.put(html, { path: 'a/three' });
    expect(await paths(store, 'quokkazeppelin')).toEqual(['a/one']);
    expect(await paths(store, 'wombatlantern')).toEqual(['a/two']);
    expect(await paths(store, 'numbatcarousel')).toEqual(['a/three']);
    expect(await paths(store, 'tablecellword')).toEqual(['a/three']);
    // Markup, scripts and link targets are not text.
    expect(await paths(store, 'scriptword')).toEqual([]);
    expect(await paths(store, 'hrefword')).toEqual([]);
    expect(await paths(store, 'para')).toEqual([]);
    const [hit] = await store.search('quokkazeppelin');
    expect(hit!.snippet).toContain('<mark>quokkazeppelin</mark>');
    const status = await store.indexStatus();
    expect(status.extracted).toMatchObject({ ok: 3, capped: 0, failed: 0 });
    expect(status.problems).toEqual([]);
    expect(status.queued).toBe(0);
    // The extracted text, as search and grep read it; none for a text file; NOT_FOUND for no document.
    const { digest } = await store.stat('a/one');
    expect(await store.extractedText(digest)).toMatchObject({ kind: 'pdf', status: 'ok', text: expect.stringContaining('quokkazeppelin at dawn') });
    const txt = await store.put(new TextEncoder().encode('plain'), { path: 'a/plain.txt' });
    expect(await store.extractedText(txt.digest)).toBeUndefined();
    await expect(store.extractedText(`sha256:${'0'.repeat(64)}`)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it("HTML's headings are text as written, its title is text; a store extracted before schema 20 extracts again (a trial)", { timeout: 60_000 }, async () => {
    const { store, dir } = await newStore();
    const page = '<html><head><title>Carnet de voyage</title></head><body><h1>Voyage en Bretagne</h1><h2>Die große Straße</h2><p>Texte.</p></body></html>';
    await store.put(new TextEncoder().encode(page), { path: 'page.html', mediaType: 'text/html' });
    const lines: string[] = [];
    for await (const e of store.grep('Bretagne|Straße|Carnet', {})) if (e.type === 'match') lines.push(e.text);
    expect(lines).toEqual(['Carnet de voyage', 'Voyage en Bretagne', 'Die große Straße']);
    expect(await paths(store, 'carnet')).toEqual(['page.html']);
    const [hit] = await store.search('Bretagne', { mode: 'keyword' });
    expect(hit!.snippet).toContain('Voyage en <mark>Bretagne</mark>');
    // A fragment without <head> or <body> keeps its text, and a title heading the body is not said twice.
    const { text } = await extractText('html', new TextEncoder().encode('<title>Only</title><p>fragment text</p>'), EXTRACT_CAPS);
    expect(text).toBe('Only\n\nfragment text');
    expect((await extractText('html', new TextEncoder().encode('<html><head><title>Same</title></head><body><h1>Same</h1><p>x</p></body></html>'), EXTRACT_CAPS)).text).toBe('Same\n\nx');
    // The title's entities read as the body's are; a title attribute-laden or in capitals is a title too.
    expect((await extractText('html', new TextEncoder().encode('<HTML><HEAD><TITLE lang="fr">Caf&eacute; &amp; th&eacute;</TITLE></HEAD><BODY><p>menu</p></BODY></HTML>'), EXTRACT_CAPS)).text).toBe('Café & thé\n\nmenu');
    await store.close();
    const db = new Database(join(dir, 'kura.db'));
    indexInCatalog(db);
    db.exec("UPDATE doc_text SET extracted_at = 1 WHERE kind = 'html'; DELETE FROM search_queue");
    db.exec('ALTER TABLE snapshots DROP COLUMN utc_offset'); // (as a store from before schema 22 is)
    db.pragma('user_version = 19');
    db.close();
    const again = await Store.open(dir);
    try {
      await again.indexStatus({ wait: true });
      expect(await paths(again, 'bretagne')).toEqual(['page.html']);
    } finally {
      await again.close();
    }
    const after = new Database(join(dir, 'kura.db'), { readonly: true });
    expect(after.prepare("SELECT extracted_at FROM doc_text WHERE kind = 'html'").all()).toEqual([{ extracted_at: expect.any(Number) }]);
    expect((after.prepare("SELECT extracted_at FROM doc_text WHERE kind = 'html'").get() as { extracted_at: number }).extracted_at).toBeGreaterThan(1);
    after.close();
  });

  it('a definition list\'s terms and descriptions, figures and details are blocks, not one word (rustdoc\'s module pages: a trial); a store from before schema 21 extracts again', { timeout: 60_000 }, async () => {
    const page = '<!doctype html><html><body><dl><dt><a href="fn.canonicalize.html">canonicalize</a></dt><dd>Returns the canonical form</dd><dt>copy</dt><dd>Copies a file</dd></dl><figure><img src="x.png"><figcaption>Harbour map</figcaption></figure><details><summary>More</summary>hidden text</details></body></html>';
    const { text } = await extractText('html', new TextEncoder().encode(page), EXTRACT_CAPS);
    expect(text.split(/\s+/)).toEqual(['canonicalize', 'Returns', 'the', 'canonical', 'form', 'copy', 'Copies', 'a', 'file', 'Harbour', 'map', 'More', 'hidden', 'text']);
    const { store, dir } = await newStore();
    await store.put(new TextEncoder().encode(page), { path: 'std-fs/index.html', mediaType: 'text/html' });
    expect(await paths(store, 'canonicalize')).toEqual(['std-fs/index.html']);
    await store.close();
    // Extracted and indexed by a Kura before schema 21: extracted and indexed again.
    const db = new Database(join(dir, 'kura.db'));
    indexInCatalog(db);
    db.exec("UPDATE doc_text SET extracted_at = 1 WHERE kind = 'html'; DELETE FROM search_queue");
    db.exec('ALTER TABLE snapshots DROP COLUMN utc_offset'); // (as a store from before schema 22 is)
    db.pragma('user_version = 20');
    db.close();
    const again = await Store.open(dir);
    try {
      await again.indexStatus({ wait: true });
      expect(await paths(again, 'copies')).toEqual(['std-fs/index.html']);
      expect(await paths(again, 'canonicalize')).toEqual(['std-fs/index.html']);
    } finally {
      await again.close();
    }
    const after = new Database(join(dir, 'kura.db'), { readonly: true });
    expect((after.prepare("SELECT extracted_at FROM doc_text WHERE kind = 'html'").get() as { extracted_at: number }).extracted_at).toBeGreaterThan(1);
    after.close();
  });

  it('extracts identical bytes once, whatever their paths; the text goes with the document', { timeout: 60_000 }, async () => {
    const { store, dir } = await newStore();
    const pdf = makePdf(['A shared bilbyharmonica report.']);
    const { digest } = await store.put(pdf, { path: 'x/report.pdf' });
    await store.put(pdf, { path: 'y/copy.pdf' });
    // Both paths are found: one hit for the document, the other path in alsoAt (decision 0072).
    expect((await store.search('bilbyharmonica')).map((h) => [h.path, h.alsoAt])).toEqual([['x/report.pdf', ['y/copy.pdf']]]);
    expect((await store.search('bilbyharmonica', { collapse: false })).map((h) => h.path).sort()).toEqual(['x/report.pdf', 'y/copy.pdf']);
    const rows = () => {
      const db = new Database(join(dir, 'kura.db'), { readonly: true });
      try {
        return (db.prepare('SELECT COUNT(*) AS n FROM doc_text').get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    await batchEnded(); // (read by another connection)
    expect(rows()).toBe(1);
    expect(await store.delete(digest)).toBe(true);
    expect(await paths(store, 'bilbyharmonica')).toEqual([]);
    await batchEnded();
    expect(rows()).toBe(0);
  });

  it('a damaged PDF is stored, listed, findable by name, named in the report, and harms no other document', { timeout: 60_000 }, async () => {
    const { store } = await newStore();
    const good = makePdf(['The dugongsemaphore chapter.']);
    const bad = new TextEncoder().encode('%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> garbage, no xref, no trailer');
    const truncated = good.subarray(0, Math.floor(good.length / 3));
    // One indexer run takes all three (puts then a search): the failures must not stop it.
    await store.put(bad, { path: 'broken.pdf' });
    await store.put(truncated, { path: 'cut.pdf' });
    await store.put(good, { path: 'fine.pdf' });
    expect(await paths(store, 'dugongsemaphore')).toEqual(['fine.pdf']);
    expect(await paths(store, 'broken')).toEqual(['broken.pdf']);
    expect((await store.list()).items.map((e) => e.path).sort()).toEqual(['broken.pdf', 'cut.pdf', 'fine.pdf']);
    const status = await store.indexStatus();
    expect(status.extracted.failed).toBe(2);
    expect(status.problems.map((p) => p.path).sort()).toEqual(['broken.pdf', 'cut.pdf']);
    for (const p of status.problems) expect(p).toMatchObject({ kind: 'pdf', status: 'failed', note: expect.stringMatching(/^pdf: /) });
  });

  it('a closing store leaves extraction queued for the next run, which finds the text', { timeout: 60_000 }, async () => {
    const dir = join(tempDir(), 'store');
    const store = await Store.init(dir);
    await store.put(makePdf(['The potoroomarimba is filed here.']), { path: 'later.pdf' });
    await store.close(); // no search, no wait: the indexer ran without extracting
    const reader = await Store.open(dir, { readonly: true });
    try {
      expect(await paths(reader, 'later')).toEqual(['later.pdf']); // indexed by its path
      expect(await paths(reader, 'potoroomarimba')).toEqual([]);
    } finally {
      await reader.close();
    }
    const again = await Store.open(dir);
    try {
      expect((await again.indexStatus()).queued).toBe(1); // the PDF's entry, for its text
      expect(await paths(again, 'potoroomarimba')).toEqual(['later.pdf']);
    } finally {
      await again.close();
    }
  });
});

describe('extractors', () => {
  it('tells the kind by content first, then by media type', async () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    expect(extractKind(makePdf(['x']), null)).toBe('pdf');
    expect(extractKind(await makeDocx(['x']), null)).toBe('docx');
    expect(extractKind(enc('\uFEFF  <!doctype html><p>x'), null)).toBe('html');
    expect(extractKind(enc('<HTML lang="en">'), 'text/plain')).toBe('html');
    expect(extractKind(enc('<!-- a markdown comment -->\n# Title'), null)).toBeUndefined();
    expect(extractKind(enc('<p>fragment</p>'), 'text/html')).toBe('html');
    expect(extractKind(enc('PK\x03\x04 some other zip'), null)).toBeUndefined();
    expect(extractKind(enc('plain'), 'application/pdf')).toBe('pdf');
  });

  it('a document that runs over its time is stopped (its worker ended) and the next one extracts', { timeout: 60_000 }, async () => {
    const extractor = new WorkerExtractor();
    try {
      const pdf = makePdf(['a page of words']);
      const stopped = await extractor.extract('pdf', pdf, { ...EXTRACT_CAPS, ms: 1 }); // the worker alone takes longer to start
      expect(stopped).toMatchObject({ status: 'failed', text: '', note: 'pdf: stopped after 1 ms' });
      expect(await extractor.extract('pdf', pdf, EXTRACT_CAPS)).toMatchObject({ status: 'ok', text: 'a page of words' });
    } finally {
      await extractor.close();
    }
  });

  it('keeps pages in order, a blank line between them; caps pages and text, and says so', async () => {
    const pdf = makePdf(['first page words', 'second page words', 'third page words']);
    const all = await extractText('pdf', pdf, EXTRACT_CAPS);
    expect(all).toMatchObject({ status: 'ok', pages: 3 });
    expect(all.text).toBe('first page words\n\nsecond page words\n\nthird page words');
    const two = await extractText('pdf', pdf, { ...EXTRACT_CAPS, pages: 2 });
    expect(two).toMatchObject({ status: 'capped', pages: 2, note: 'read 2 of 3 pages' });
    expect(two.text).toBe('first page words\n\nsecond page words');
    const short = await extractText('docx', await makeDocx(['a'.repeat(50), 'b'.repeat(50)]), { ...EXTRACT_CAPS, chars: 60 });
    expect(short.status).toBe('capped');
    expect(short.text).toHaveLength(60);
    const big = await extractText('html', makeHtml('t', ['x']), { ...EXTRACT_CAPS, bytes: 10 });
    expect(big).toMatchObject({ status: 'capped', text: '' });
  });
});
