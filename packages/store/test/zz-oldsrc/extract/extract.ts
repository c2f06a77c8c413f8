/**
 * A document's text by its kind (decision 0035), on whatever thread calls it: a Node worker
 * (node/extract-worker.ts) or a browser store's own worker. Never throws: a failure is a result.
 */
import type { ExtractCaps, Extracted } from './caps.js';
import { docxText } from './docx.js';
import { htmlText } from './html.js';
import type { ExtractKind } from './kind.js';
import { pdfText } from './pdf.js';

const EXTRACTORS: Record<ExtractKind, (bytes: Uint8Array, caps: ExtractCaps) => Promise<Extracted>> = {
  pdf: pdfText,
  docx: docxText,
  html: htmlText,
};

export async function extractText(kind: ExtractKind, bytes: Uint8Array, caps: ExtractCaps): Promise<Extracted> {
  if (bytes.length > caps.bytes) return { status: 'capped', text: '', note: `not opened: larger than ${caps.bytes} bytes` };
  try {
    return await EXTRACTORS[kind](bytes, caps);
  } catch (e) {
    return { status: 'failed', text: '', note: `${kind}: ${e instanceof Error ? e.message : String(e)}`.slice(0, 500) };
  }
}

/** Extracts on this thread, stopping at caps.ms where the work yields (a platform without workers to stop). */
export function extractHere(kind: ExtractKind, bytes: Uint8Array, caps: ExtractCaps): Promise<Extracted> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<Extracted>((resolve) => {
    timer = setTimeout(() => resolve({ status: 'failed', text: '', note: `${kind}: stopped after ${caps.ms} ms` }), caps.ms);
  });
  return Promise.race([extractText(kind, bytes, caps), timeout]).finally(() => clearTimeout(timer));
}
