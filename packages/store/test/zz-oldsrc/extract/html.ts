/**
 * HTML text by html-to-text (workers have no DOMParser): no line wrapping, links without their
 * URLs, images skipped; table cells as text.
 */
import type { ExtractCaps, Extracted } from './caps.js';

const decoder = new TextDecoder('utf-8');

export async function htmlText(bytes: Uint8Array, caps: ExtractCaps): Promise<Extracted> {
  const { convert } = await import('html-to-text');
  const text = convert(decoder.decode(bytes), {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    ],
  }).trim();
  if (text.length > caps.chars) return { status: 'capped', text: text.slice(0, caps.chars), note: `text cut at ${caps.chars} characters` };
  return { status: 'ok', text };
}
