/**
 * Text extraction's speed (issue 22: "extraction pages/s"): a PDF of many pages made by
 * Debian's groff and ghostscript (as the tests make theirs), put into a store, then timed until
 * it is extracted (pdf.js on the store's extraction thread) and indexed, and found by a word
 * of its last page.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Store } from '@kura/store';
import { textLike } from '../../lib/data.mjs';

/** A PDF with one page per string (groff -Tps | ps2pdf). */
function pdf(pages) {
  const ps = execFileSync('groff', ['-Tps'], { input: pages.map((p) => p.replace(/^[.']/gm, '\\&$&')).join('\n.bp\n'), maxBuffer: 1 << 28 });
  return new Uint8Array(execFileSync('ps2pdf', ['-', '-'], { input: ps, maxBuffer: 1 << 28 }));
}

export async function extraction(root, full, log) {
  const pageCount = full ? 500 : 150;
  const group = `PDF of ${pageCount} pages (~2 KiB of text each)`;
  const impl = 'kura (pdfjs-dist 5.6, its own thread)';
  let bytes;
  try {
    const text = new TextDecoder().decode(textLike(pageCount * 2048, 5, 4096));
    const pages = Array.from({ length: pageCount }, (_, i) => text.slice(i * 2048, i * 2048 + 2048).replace(/\s+/g, ' '));
    pages[pageCount - 1] += ' lastpagemarker';
    bytes = pdf(pages);
  } catch (e) {
    return [{ family: 'extraction', group, impl, size: 0, unavailable: `groff/ps2pdf could not make the PDF (scripts/bootstrap.sh installs them): ${e.message.split('\n')[0]}` }];
  }
  const rows = [];
  for (let run = 0; run < (full ? 3 : 2); run++) {
    const store = await Store.init(join(root, `extraction-${run}`));
    try {
      await store.put(bytes, { path: 'book.pdf', mediaType: 'application/pdf' });
      const started = performance.now();
      const status = await store.indexStatus({ wait: true });
      const seconds = (performance.now() - started) / 1000;
      if (status.extracted.ok !== 1) throw new Error(`the PDF was not extracted: ${JSON.stringify(status)}`);
      if ((await store.search('lastpagemarker')).length !== 1) throw new Error('the last page\'s word is not found');
      rows.push(seconds);
    } finally {
      await store.close();
    }
  }
  const seconds = rows.sort((a, b) => a - b)[Math.floor(rows.length / 2)];
  log(`extraction: ${pageCount} pages (${(bytes.length / 1024).toFixed(0)} KiB) in ${seconds.toFixed(2)} s (median of ${rows.length})`);
  return [{ family: 'extraction', group, impl, name: `${group} ${impl}`, size: bytes.length, bytes: bytes.length, opsPerSec: pageCount / seconds, mean: seconds * 1000, p50: seconds * 1000, pages: pageCount }];
}

export const extractionFamily = {
  title: 'text extraction: a PDF put, then extracted and indexed (median of runs)',
  ratio: () => undefined,
  extra: [{ header: 'pages/s', value: (r) => r.opsPerSec.toFixed(0) }],
};
