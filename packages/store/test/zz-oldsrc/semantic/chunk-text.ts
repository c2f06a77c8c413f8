/**
 * Cuts a document's text into chunks of about `target` tokens for embedding (decision 0036):
 * at paragraph and sentence ends where it can, inside a sentence only when one sentence alone
 * is longer than the model takes. Chunks are character ranges of the text, in order, covering
 * every non-blank part of it; each is embedded alone.
 */

export interface TextChunk {
  start: number;
  end: number;
}

/** Sentence and paragraph ends: the text after them starts a new piece. */
const BREAK = /(?<=[.!?;:])\s+|\n\s*\n/g;

function pieces(text: string): TextChunk[] {
  const out: TextChunk[] = [];
  let at = 0;
  for (const m of text.matchAll(BREAK)) {
    if (m.index > at) out.push({ start: at, end: m.index });
    at = m.index + m[0].length;
  }
  if (at < text.length && text.slice(at).trim()) out.push({ start: at, end: text.length });
  return out.filter((p) => text.slice(p.start, p.end).trim().length > 0);
}

/** Splits a piece of more than `target` tokens at word boundaries into parts of about `target` tokens. */
function splitLong(text: string, p: TextChunk, tokens: number, target: number, countTokens: (s: string) => number): TextChunk[] {
  const words = [...text.slice(p.start, p.end).matchAll(/\S+/g)].map((m) => ({ start: p.start + m.index, end: p.start + m.index + m[0].length }));
  const out: TextChunk[] = [];
  // Dense text (numbers, code) can still be over after the first cut: halves until it fits.
  const add = (from: number, to: number) => {
    const chunk = { start: words[from]!.start, end: words[to - 1]!.end };
    if (to - from > 1 && countTokens(text.slice(chunk.start, chunk.end)) > target * 1.25) {
      const mid = from + Math.floor((to - from) / 2);
      add(from, mid);
      add(mid, to);
    } else out.push(chunk);
  };
  const per = Math.max(1, Math.floor((words.length * target) / tokens)); // words a part, by the piece's density
  for (let i = 0; i < words.length; i += per) add(i, Math.min(words.length, i + per));
  return out;
}

/** Chunks of `text` of about `target` tokens (at most `max` chunks). */
export function chunkText(text: string, countTokens: (s: string) => number, target = 200, max = 64): TextChunk[] {
  const out: TextChunk[] = [];
  let open: TextChunk | undefined;
  let openTokens = 0;
  for (const p of pieces(text)) {
    if (out.length >= max) break;
    const tokens = countTokens(text.slice(p.start, p.end));
    if (tokens > target) {
      if (open) out.push(open);
      open = undefined;
      openTokens = 0;
      out.push(...splitLong(text, p, tokens, target, countTokens));
      continue;
    }
    if (open && openTokens + tokens > target) {
      out.push(open);
      open = undefined;
      openTokens = 0;
    }
    open = open ? { start: open.start, end: p.end } : { ...p };
    openTokens += tokens;
  }
  if (open) out.push(open);
  return out.slice(0, max);
}
