/**
 * HTML text by html-to-text (workers have no DOMParser): the page's title, then its body; no
 * line wrapping, links without their URLs, images skipped; table cells and headings as written
 * (html-to-text's default capitalises headings: `<h1>Voyage en Bretagne</h1>` was grepped and
 * shown as VOYAGE EN BRETAGNE, and `Straße` became STRASSE — a trial).
 */
import type { ExtractCaps, Extracted } from './caps.js';

const decoder = new TextDecoder('utf-8');
const HEADINGS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'];
/** Block elements html-to-text's defaults leave inline (its own: div, p, section, article…). */
const BLOCKS = ['dl', 'dt', 'dd', 'figure', 'figcaption', 'details', 'summary', 'address', 'fieldset', 'legend', 'dialog', 'hgroup', 'search'];
/** A page's <title> element, looked for in its first characters (a <head> is at the start). */
const TITLE = /<title(?:\s[^>]*)?>[\s\S]*?<\/title\s*>/i;
const TITLE_WITHIN = 64 * 1024;

export async function htmlText(bytes: Uint8Array, caps: ExtractCaps): Promise<Extracted> {
  const { convert } = await import('html-to-text');
  const html = decoder.decode(bytes);
  const body = convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
      ...HEADINGS.map((selector) => ({ selector, options: { uppercase: false } })),
      // Blocks html-to-text takes for inline: a definition list's term and its description were
      // one word (`<dt>canonicalize</dt><dd>Returns…` gave `canonicalizeReturns` in rustdoc's
      // module pages, found by no search: a trial).
      ...BLOCKS.map((selector) => ({ selector, format: 'block' as const })),
    ],
  }).trim();
  // The title is in <head>, which the body's conversion leaves out (and a page without <body>
  // is converted whole, its title with it). Found by a look at the page's start, and only it
  // converted (its entities): the page is not parsed twice.
  const tag = TITLE.exec(html.slice(0, TITLE_WITHIN));
  const title = tag ? convert(tag[0], { wordwrap: false, baseElements: { selectors: ['title'], returnDomByDefault: false } }).trim() : '';
  const text = title && !body.startsWith(title) ? `${title}\n\n${body}` : body;
  if (text.length > caps.chars) return { status: 'capped', text: text.slice(0, caps.chars), note: `text cut at ${caps.chars} characters` };
  return { status: 'ok', text };
}
