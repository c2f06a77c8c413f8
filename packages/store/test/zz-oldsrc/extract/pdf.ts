/**
 * PDF text by pdf.js (pdfjs-dist 5.6: 6.x needs Node >= 22.13). Text items are joined as pdf.js
 * lays them out: a line break where it marks one, a blank line between pages.
 */
import type { ExtractCaps, Extracted } from './caps.js';

type PdfJs = typeof import('pdfjs-dist');

let loading: Promise<PdfJs> | undefined;

/**
 * Node needs the legacy build (the modern one assumes browser globals such as DOMMatrix). In a
 * browser worker pdf.js cannot start a worker of its own (it looks for `window`): with its
 * worker module loaded first (it sets `globalThis.pdfjsWorker`), it runs that on this thread.
 */
function pdfjs(): Promise<PdfJs> {
  const node = typeof process !== 'undefined' && !!process.versions?.node;
  const load = async () => {
    if (node) return (await import('pdfjs-dist/legacy/build/pdf.mjs')) as unknown as PdfJs;
    // @ts-expect-error: the worker module has no type declarations; only its side effect is wanted
    await import('pdfjs-dist/build/pdf.worker.mjs');
    return import('pdfjs-dist');
  };
  return (loading ??= load());
}

export async function pdfText(bytes: Uint8Array, caps: ExtractCaps): Promise<Extracted> {
  const lib = await pdfjs();
  // pdf.js takes ownership of (detaches) the buffer it is given: a copy.
  const task = lib.getDocument({ data: bytes.slice(), isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0 });
  const doc = await task.promise;
  try {
    const parts: string[] = [];
    let chars = 0;
    const pages = Math.min(doc.numPages, caps.pages);
    let read = 0;
    for (let p = 1; p <= pages && chars < caps.chars; p++) {
      const page = await doc.getPage(p);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (!('str' in item)) continue;
        text += item.str + (item.hasEOL ? '\n' : '');
      }
      page.cleanup();
      parts.push(text.trim());
      chars += text.length;
      read = p;
    }
    const text = parts.join('\n\n');
    if (text.length > caps.chars) return { status: 'capped', text: text.slice(0, caps.chars), pages: read, note: `text cut at ${caps.chars} characters` };
    if (read < doc.numPages) return { status: 'capped', text, pages: read, note: `read ${read} of ${doc.numPages} pages` };
    return { status: 'ok', text, pages: read };
  } finally {
    await task.destroy();
  }
}
