/**
 * Search snippets, in linear time. FTS5's snippet() scores every window around every match and
 * is quadratic in matches per column (one document repeating a word 200,000 times took minutes
 * here), so snippets are made here: the first token that matches a query term, with a few
 * words of context, matched tokens between <mark> and </mark>. A snippet is an HTML fragment:
 * the document's text in it is escaped, so it can be rendered as it is (and `<mark>` in a
 * document can never pass for a match).
 */

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

/** Bytes of a body looked at for a snippet; matching itself covers all indexed text. */
export const SNIPPET_SOURCE_MAX = 64 * 1024;
const BEFORE = 6;
const AFTER = 10;

const TOKEN = /[\p{L}\p{N}_]+/gu;

const fold = (s: string) => s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();

/** The words of a query that should be highlighted; a trailing `*` makes a prefix. */
export function queryTerms(query: string): { word: string; prefix: boolean }[] {
  const terms: { word: string; prefix: boolean }[] = [];
  for (const m of query.matchAll(/([\p{L}\p{N}_]+)(\*)?/gu)) {
    if (/^(AND|OR|NOT|NEAR)$/.test(m[1]!)) continue;
    terms.push({ word: fold(m[1]!), prefix: m[2] === '*' });
  }
  return terms;
}

function matches(token: string, terms: { word: string; prefix: boolean }[]): boolean {
  const t = fold(token);
  return terms.some((q) => (q.prefix ? t.startsWith(q.word) : t === q.word));
}

/** A snippet of the first of `fields` that contains a term; the start of the first field else. */
export function makeSnippet(fields: (string | null)[], terms: { word: string; prefix: boolean }[]): string {
  for (const field of fields) {
    if (!field) continue;
    const text = field.length > SNIPPET_SOURCE_MAX ? field.slice(0, SNIPPET_SOURCE_MAX) : field;
    const tokens = [...text.matchAll(TOKEN)];
    const hit = tokens.findIndex((t) => matches(t[0], terms));
    if (hit < 0) continue;
    const from = Math.max(0, hit - BEFORE);
    const to = Math.min(tokens.length - 1, hit + AFTER);
    let out = from > 0 ? '…' : '';
    let at = tokens[from]!.index!;
    for (let i = from; i <= to; i++) {
      const t = tokens[i]!;
      out += escapeHtml(text.slice(at, t.index!));
      out += matches(t[0], terms) ? `<mark>${t[0]}</mark>` : t[0]; // tokens are letters and digits
      at = t.index! + t[0].length;
    }
    return to < tokens.length - 1 ? `${out}…` : out + escapeHtml(text.slice(at));
  }
  const first = fields.find((f) => f) ?? '';
  return first.length > 120 ? `${escapeHtml(first.slice(0, 120))}…` : escapeHtml(first);
}
