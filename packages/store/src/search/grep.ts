/**
 * `grep` over the stored text (decision 0055): a regular expression matched line by line (no
 * match crosses a line end, as in ripgrep) against every path's latest document — a text
 * file's own bytes, a PDF's, DOCX's or HTML page's extracted text — in the wasm core's
 * linear-time matcher (LineMatcher), streamed as
 * events in the shape of ripgrep's JSON lines: `begin`, `match` and `context` lines, `end` with
 * the file's count, `error` for a document that cannot be read (damage is said, never skipped
 * silently), and one `summary`.
 *
 * Memory stays bounded whatever the store's size: entries are read a page at a time, a
 * document as a stream of blocks cut at line ends (a line longer than LINE_MAX is cut there),
 * and the events go out as they are found.
 */
import { CorruptDataError, InvalidInputError, LineMatcher, decompress } from '@kura/core';
import type { Reader } from '../bytes/read.js';
import type { SqlDatabase } from '../backend/sql.js';
import type { ChunkLoc, DocRow, DocTextRow, Statements } from '../catalog/statements.js';
import { chunkLocations, knownDamage } from '../document-reads.js';
import { formatDigest } from '../hex.js';
import { extractKind, KIND_HEAD } from '../extract/kind.js';
import { filterSql } from './fts.js';
import { SNIFF_BYTES, looksLikeText, textAsUtf8, textByType } from './text.js';
import { textKey, type TextLender } from './text-cache.js';

/**
 * A block of text is at most this long before it is matched: a longer line is cut here (a
 * line matched in two pieces counts once; a match across the cut is not found). 1 MiB before:
 * a trial's 3 MiB line was printed three times and `-c` counted it thrice.
 */
export const LINE_MAX = 16 << 20;
/** Characters of a line an event carries at most (around its match); `cut` says it was cut. */
export const LINE_SHOWN_MAX = 2000;
/** Documents up to this size are read whole (see textOf); larger ones as a stream. */
export const WHOLE_MAX = 8 << 20;
/** Context lines at most (-C). */
export const CONTEXT_MAX = 100;
const PAGE = 256;

export interface GrepOptions {
  /** Case-insensitive (Unicode case folding). */
  ignoreCase?: boolean;
  /** Only paths starting with one of these (none: every path)… */
  prefixes?: string[];
  /** …or, with `prefixes` or alone, these paths exactly (a file `kura grep` names: `notes/log`, not `notes/log.old`). */
  paths?: string[];
  tag?: string;
  /** Media type: as search's `type:` — `text/markdown`, `text/*`, or a subtype alone (`pdf`). */
  type?: string;
  /** Lines of context before and after each match. */
  context?: number;
  /** Stop a file at its first match (`-l`). */
  firstPerFile?: boolean;
  /**
   * Count each file's matching lines without sending them (`-c`, ripgrep's `--count`): a file
   * with a match is its `begin` and its `end` (`matches`), no `match` or `context` events.
   */
  count?: boolean;
  /** Match whole words only (`-w`): the pattern between word boundaries, `\b(?:PATTERN)\b`. */
  word?: boolean;
  /**
   * Each match event also carries `matchedTexts`: the text of every match in its line, in
   * order (`-o`; empty matches left out, each at most LINE_SHOWN_MAX characters).
   */
  onlyMatching?: boolean;
  /** Matching lines in all at most; then a `summary` with `truncated: true`. */
  limit?: number;
  /**
   * Node, a store in a local directory: scanned by worker threads, as many as the store's
   * ingest workers (by default the cores), once the scan holds 8 MiB of text; a literal
   * pattern (no `\.+*?()|[]{}^$`) by default on this thread until the text it must read back
   * (not kept by an earlier grep) passes 512 MiB, 8 MiB while the workers run. `1`: all on
   * this thread; more: on the workers as for any pattern.
   */
  workers?: number;
}

type Where = { path: string; digest: `sha256:${string}` };
export type GrepEvent =
  | ({ type: 'begin' } & Where)
  | ({ type: 'match' | 'context'; line: number; text: string; submatch?: [number, number]; matchedTexts?: string[] } & LineCut & Where)
  | ({ type: 'end'; matches: number } & Where)
  | ({ type: 'error'; code: string; message: string } & Where)
  | { type: 'summary'; files: number; filesMatched: number; matches: number; bytes: number; truncated: boolean };

export interface GrepSource {
  db: SqlDatabase;
  st: Statements;
  reader: Reader;
  /** Texts already read and checked, and where to keep those read now (text-cache.ts). */
  texts?: TextLender | undefined;
}

const decoder = new TextDecoder();

/** A path's latest entry, as grep takes it (`digest`: its document's, where listed: the key of its text). */
export type Entry = { path: string; media_type: string | null; doc_id: number; digest?: Uint8Array };

/** Every path's latest entry matching the filters, in path order, a page at a time (with its document's size). */
export function* entries(s: GrepSource, o: GrepOptions, beforePage: () => void = () => {}): Generator<Entry & { size: number }> {
  const exact = o.paths ?? [];
  const f = filterSql({ path: exact.length ? [] : (o.prefixes ?? []), tag: o.tag === undefined ? [] : [o.tag], type: o.type === undefined ? [] : [o.type] });
  if (exact.length) {
    // Exact paths, or prefixes: one condition of both (filterSql ANDs its fields).
    const ranges = (o.prefixes ?? []).map(() => '(e.path >= ? AND e.path < ?)');
    f.where.unshift(`(${[...ranges, `e.path IN (${exact.map(() => '?').join(', ')})`].join(' OR ')})`);
    f.params.unshift(...(o.prefixes ?? []).flatMap((p) => [p, `${p}\u{10ffff}`]), ...exact);
  }
  const sql = `SELECT e.path AS path, e.media_type AS media_type, e.doc_id AS doc_id, d.digest AS digest, d.size AS size FROM entries e JOIN documents d ON d.id = e.doc_id
    WHERE e.path IS NOT NULL AND e.path > ?${f.where.map((w) => ` AND ${w}`).join('')} ORDER BY e.path LIMIT ${PAGE}`;
  let after = '';
  for (;;) {
    beforePage();
    const page = s.db.read(() => s.db.prepare<Entry & { size: number }>(sql).all(after, ...f.params));
    yield* page;
    if (page.length < PAGE) return;
    after = page[page.length - 1]!.path;
  }
}

/** An entry's document as grep reads it: its row, its extracted text if any, its chunks' places. */
interface Found {
  doc: DocRow;
  text: DocTextRow | undefined;
  locs?: ReadonlyMap<string, ChunkLoc>;
}

/**
 * The entry's document, its extracted text and (for a text file read whole) its chunks'
 * locations, in one read transaction: a statement each outside one costs a read lock and
 * WAL snapshot (~20-35 µs here), about what matching a 16 KiB chunk costs.
 */
function find(s: GrepSource, e: Entry): Found | undefined {
  return s.db.read(() => {
    const doc = s.st.docById.get(e.doc_id);
    if (!doc) return undefined;
    const text = s.st.docTextGet.get(doc.id);
    const read = !text && doc.size <= WHOLE_MAX && !s.texts?.get(textKey(doc.digest, { mediaType: e.media_type }));
    return { doc, text, locs: read ? chunkLocations(s.st, doc) : undefined };
  });
}

/** The document's text as UTF-8 pieces: extracted text, a text file's bytes, or none (binary). */
async function* textOf(s: GrepSource, { doc, text, locs }: Found, mediaType: string | null): AsyncGenerator<Uint8Array> {
  if (text) {
    // Extracted text is served without reading the document: once verify has found the
    // document damaged, that is said here as for a document whose bytes fail their check.
    const damage = knownDamage(s.st, doc);
    if (damage) throw new CorruptDataError(damage, 'damaged-chunk', { digest: formatDigest(doc.digest) });
    if (text.bytes === 0) return;
    const key = textKey(doc.digest, 'extracted');
    const kept = s.texts?.get(key);
    if (kept) return yield kept;
    const out = decompress(text.text, text.bytes);
    s.texts?.put(key, out);
    yield out;
    return;
  }
  // Read and checked before (text-cache.ts): matched again as it was.
  const key = textKey(doc.digest, { mediaType });
  const kept = s.texts?.get(key);
  if (kept) return yield kept;
  const byType = textByType(mediaType);
  if (byType === false) return;
  if (byType !== true) {
    const pieces: Uint8Array[] = [];
    for await (const piece of s.reader.range(doc, 0, Math.min(doc.size, Math.max(KIND_HEAD, SNIFF_BYTES)))) pieces.push(piece);
    const head = joined(pieces, pieces.reduce((n, p) => n + p.length, 0));
    if (extractKind(head, mediaType) || !looksLikeText(head.subarray(0, SNIFF_BYTES))) return; // awaiting extraction, or binary
  } else if (extractKind(new Uint8Array(0), mediaType)) return; // text/html: its extracted text, once extracted
  // Whole, up to WHOLE_MAX: one hash pass (the document's SHA-256, checked before a byte is
  // matched) instead of each chunk's BLAKE3 and then the SHA-256 (~1.6x the scan's speed).
  // (A text in Latin-1 or Windows-1252 is matched as its UTF-8, as the index reads it: text.ts.)
  if (doc.size <= WHOLE_MAX) {
    const whole = textAsUtf8(await s.reader.bytes(doc, locs));
    s.texts?.put(key, whole);
    yield whole;
  } else yield* s.reader.document(doc);
}

/** `pieces` (`bytes` in all) as one buffer: the piece itself when there is one. */
function joined(pieces: readonly Uint8Array[], bytes: number): Uint8Array {
  if (pieces.length === 1) return pieces[0]!;
  const out = new Uint8Array(bytes);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Starts of the lines of `block` (the first at 0). */
function lineStarts(block: Uint8Array): number[] {
  const starts = [0];
  for (let at = block.indexOf(10); at >= 0; at = block.indexOf(10, at + 1)) starts.push(at + 1);
  return starts;
}

/**
 * A line shown cut (longer than LINE_SHOWN_MAX): `cutBefore` and `cutAfter` are the UTF-16
 * units of the line left out before and after `text`, so a reader marks the side that was cut
 * (a mark at the end alone said a line was cut after its match when it was cut before it).
 */
export type LineCut = { cut?: true; cutBefore?: number; cutAfter?: number };

/** A line for an event: its text (cut around the match when long), and the match in it. */
function shown(bytes: Uint8Array, m?: { from: number; to: number }): { text: string; submatch?: [number, number] } & LineCut {
  const line = decoder.decode(bytes);
  let sub: [number, number] | undefined;
  // A line decoded to as many UTF-16 units as it has bytes has one unit per byte (no sequence
  // of UTF-8, valid or replaced, gives more units than bytes): its match is where its bytes
  // are. Another's is found by decoding the bytes before it.
  if (m && line.length === bytes.length) sub = [m.from, m.to];
  else if (m) {
    const a = decoder.decode(bytes.subarray(0, m.from)).length;
    sub = [a, a + decoder.decode(bytes.subarray(m.from, m.to)).length];
  }
  if (line.length <= LINE_SHOWN_MAX) return sub ? { text: line, submatch: sub } : { text: line };
  let from = sub ? Math.max(0, Math.min(sub[0] - LINE_SHOWN_MAX / 2, line.length - LINE_SHOWN_MAX)) : 0;
  let to = from + LINE_SHOWN_MAX;
  // Never half a surrogate pair at either edge (a character above U+FFFF is two units).
  if (isLowSurrogate(line.charCodeAt(from))) from++;
  if (isLowSurrogate(line.charCodeAt(to))) to--;
  const text = line.slice(from, to);
  const cut = { cut: true as const, cutBefore: from, cutAfter: line.length - to };
  return sub ? { text, ...cut, submatch: [Math.max(0, sub[0] - from), Math.min(sub[1] - from, text.length)] } : { text, ...cut };
}

/** The text of every non-empty match in `line` (`-o`), each cut at LINE_SHOWN_MAX characters. */
function matchedTexts(matcher: LineMatcher, line: Uint8Array): string[] {
  const out: string[] = [];
  for (const [from, to] of matcher.matchesIn(line)) {
    if (to === from) continue;
    const text = decoder.decode(line.subarray(from, to));
    out.push(text.length <= LINE_SHOWN_MAX ? text : text.slice(0, isLowSurrogate(text.charCodeAt(LINE_SHOWN_MAX)) ? LINE_SHOWN_MAX - 1 : LINE_SHOWN_MAX));
  }
  return out;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** What a scan counts over its entries: the summary's figures and whether the limit cut it. */
export type GrepSummary = Extract<GrepEvent, { type: 'summary' }>;

/** The options a scan runs with, checked (INVALID_INPUT before any event). */
export interface GrepRun {
  context: number;
  limit: number;
  firstPerFile: boolean;
  onlyMatching: boolean;
  count: boolean;
}

/** The options grep knows: any other is refused (`prefix` for `prefixes` grepped the whole store: a trial). */
const GREP_OPTIONS: ReadonlySet<string> = new Set(['ignoreCase', 'prefixes', 'paths', 'tag', 'type', 'context', 'firstPerFile', 'count', 'word', 'onlyMatching', 'limit', 'workers']);

/**
 * The pattern matched: `-w`'s between word boundaries (Unicode's, as the regex crate reads
 * `\b`). Its own syntax is checked first, so that a bad pattern's error is about what was typed.
 */
export function matchedPattern(pattern: string, o: GrepOptions): string {
  if (!o.word) return pattern;
  new LineMatcher(pattern, false).dispose();
  return `\\b(?:${pattern})\\b`;
}

export function grepRun(o: GrepOptions): GrepRun {
  if (o === null || typeof o !== 'object') throw new InvalidInputError('grep options are an object', 'options');
  for (const key of Object.keys(o)) {
    if (!GREP_OPTIONS.has(key)) throw new InvalidInputError(`grep has no option ${JSON.stringify(key)} (it knows ${[...GREP_OPTIONS].join(', ')})`, key);
  }
  if (o.prefixes !== undefined && !(Array.isArray(o.prefixes) && o.prefixes.every((p) => typeof p === 'string'))) throw new InvalidInputError('prefixes is an array of path prefixes', 'prefixes');
  if (o.paths !== undefined && !(Array.isArray(o.paths) && o.paths.every((p) => typeof p === 'string'))) throw new InvalidInputError('paths is an array of paths', 'paths');
  const context = o.context ?? 0;
  if (!Number.isInteger(context) || context < 0 || context > CONTEXT_MAX) throw new InvalidInputError(`context must be a whole number from 0 to ${CONTEXT_MAX}`, 'context');
  const limit = o.limit ?? Infinity;
  if (!(limit === Infinity || (Number.isInteger(limit) && limit > 0))) throw new InvalidInputError('limit must be a positive whole number', 'limit');
  if (o.workers !== undefined && !(Number.isInteger(o.workers) && o.workers > 0)) throw new InvalidInputError('workers must be a positive whole number', 'workers');
  for (const flag of ['firstPerFile', 'count', 'onlyMatching', 'ignoreCase', 'word'] as const) {
    if (o[flag] !== undefined && typeof o[flag] !== 'boolean') throw new InvalidInputError(`${flag} is true or false`, flag);
  }
  if (o.count && (context > 0 || o.onlyMatching)) throw new InvalidInputError('count sends no lines: it takes no context and no onlyMatching', o.onlyMatching ? 'onlyMatching' : 'context');
  return { context, limit, firstPerFile: o.firstPerFile ?? false, onlyMatching: o.onlyMatching ?? false, count: o.count ?? false };
}

export function emptySummary(): GrepSummary {
  return { type: 'summary', files: 0, filesMatched: 0, matches: 0, bytes: 0, truncated: false };
}

/**
 * The grep of `pattern` over the store's text, as events (see above) in runs: the events pass
 * between the scan's layers a run at a time and are taken apart once, where the store hands
 * them out (`eventsOf`): passed one by one through each layer's generator, they cost a
 * literal word's scan of matching lines a fifth of its time.
 */
export async function* grep(s: GrepSource, pattern: string, o: GrepOptions = {}, yieldTurn: () => Promise<void> = async () => {}): AsyncGenerator<GrepEvent[]> {
  const run = grepRun(o);
  const matcher = new LineMatcher(matchedPattern(pattern, o), o.ignoreCase ?? false);
  const summary = emptySummary();
  try {
    for (const e of entries(s, o)) {
      yield* grepEntry(s, e, matcher, run, summary, yieldTurn);
      if (summary.truncated) break;
      await yieldTurn();
    }
  } finally {
    matcher.dispose();
  }
  yield [summary];
}

/** The events of runs of them, one by one. */
export async function* eventsOf(runs: AsyncIterable<GrepEvent[]>): AsyncGenerator<GrepEvent> {
  for await (const events of runs) for (const ev of events) yield ev;
}

/**
 * The events of one entry's document — `begin`, `match` and `context` lines, `end`, or
 * `error` — in runs (a block's at a time), counted into `summary` (the limit is the whole
 * scan's: reached, it sets `truncated` and the entry ends there). A document deleted since
 * its entry was read has none.
 */
export async function* grepEntry(s: GrepSource, e: Entry, matcher: LineMatcher, run: GrepRun, summary: GrepSummary, yieldTurn: () => Promise<void> = async () => {}): AsyncGenerator<GrepEvent[]> {
  const { context, limit } = run;
  // A text file's text read and checked before (text-cache.ts) needs nothing of the database:
  // its key is the listed digest and media type (the document's row and chunks were a fifth
  // of a scan of cached texts).
  const kept = e.digest ? s.texts?.get(textKey(e.digest, { mediaType: e.media_type })) : undefined;
  const found = kept ? undefined : find(s, e);
  if (!kept && !found) return; // deleted since the page was read
  const where: Where = { path: e.path, digest: formatDigest(kept ? e.digest! : found!.doc.digest) };
  summary.files++;
  let matches = 0;
  let begun = false;
  let events: GrepEvent[] = [];
  /** The events found so far, handed out (a new run begins). */
  const taken = () => {
    const out = events;
    events = [];
    return out;
  };
  // Line numbers are absolute (from 1): `base` is the number of the block's first line.
  let base = 1;
  let printed = 0; // the last line sent
  let matchedLine = 0; // the last line matched: a line cut in pieces (LINE_MAX) counts once
  let afterUntil = 0; // send context lines through this one
  let ring: { n: number; bytes: Uint8Array }[] = []; // the last `context` lines of earlier blocks
  let stop = false;
  const send = (ev: GrepEvent) => {
    if (!begun) {
      events.push({ type: 'begin', ...where });
      begun = true;
    }
    events.push(ev);
  };
  const block = (bytes: Uint8Array) => {
    summary.bytes += bytes.length;
    const { matches: found, newlines } = matcher.lines(bytes);
    // Every line's start only for context; a match's own line comes with it.
    const starts = context > 0 ? lineStarts(bytes) : undefined;
    const lineBytes = (i: number) => {
      const end = i + 1 < starts!.length ? starts![i + 1]! - 1 : bytes.length;
      return bytes.subarray(starts![i]!, end > starts![i]! && bytes[end - 1] === 13 ? end - 1 : end);
    };
    const lineOf = (n: number) => (n >= base ? lineBytes(n - base) : ring.find((r) => r.n === n)?.bytes);
    const contextThrough = (last: number) => {
      for (let n = Math.max(printed + 1, base - context); n <= last; n++) {
        const b = lineOf(n);
        if (b) send({ type: 'context', ...where, line: n, ...shown(b) });
        printed = n;
      }
    };
    for (const m of found) {
      const n = base + m.line;
      if (n === matchedLine) continue; // (the rest of a line cut at LINE_MAX, matched already)
      matchedLine = n;
      if (run.count) {
        // Counted, not sent: the file's begin once, its end with the count.
        if (!begun) {
          events.push({ type: 'begin', ...where });
          begun = true;
        }
      } else {
        if (context > 0) {
          if (afterUntil > printed) contextThrough(Math.min(afterUntil, n - 1));
          printed = Math.max(printed, n - context - 1);
          contextThrough(n - 1);
        }
        const line = bytes.subarray(m.start, m.end);
        const shownLine = shown(line, { from: m.matchStart - m.start, to: m.matchEnd - m.start });
        send({ type: 'match', ...where, line: n, ...shownLine, ...(run.onlyMatching ? { matchedTexts: matchedTexts(matcher, line) } : {}) });
        printed = n;
        afterUntil = n + context;
      }
      matches++;
      summary.matches++;
      if (run.firstPerFile || summary.matches >= limit) {
        stop = true;
        summary.truncated = summary.matches >= limit;
        break;
      }
    }
    const lines = newlines + (bytes.length > 0 && bytes[bytes.length - 1] !== 10 ? 1 : 0);
    if (context > 0 && starts) {
      if (!stop && afterUntil > printed) contextThrough(Math.min(afterUntil, base + lines - 1));
      ring = [...ring, ...Array.from({ length: Math.min(context, lines) }, (_, k) => ({ n: base + lines - Math.min(context, lines) + k, bytes: lineBytes(lines - Math.min(context, lines) + k).slice() }))].slice(-context);
    }
    base += newlines;
  };
  try {
    // Pieces are held until one ends a line (or LINE_MAX is held), then joined once: joined
    // with every piece, a 16 MiB line of 16 KiB chunks was copied a thousand times.
    const held: Uint8Array[] = [];
    let heldBytes = 0;
    let first = true;
    for await (let piece of kept ? [kept] : textOf(s, found!, e.media_type)) {
      // A UTF-8 byte order mark is no text: `^Étude` matches the first line after it, as in
      // ripgrep (it matched nothing there, while the line was shown without the mark: a trial).
      if (first && piece.length >= 3 && piece[0] === 0xef && piece[1] === 0xbb && piece[2] === 0xbf) piece = piece.subarray(3);
      first = false;
      held.push(piece);
      heldBytes += piece.length;
      if (piece.lastIndexOf(10) < 0 && heldBytes < LINE_MAX) continue;
      const buf = joined(held, heldBytes);
      const cut = buf.lastIndexOf(10);
      const end = cut < 0 ? buf.length : cut + 1; // (no line end: a line of LINE_MAX, cut here)
      block(buf.subarray(0, end));
      held.length = 0;
      heldBytes = buf.length - end;
      if (heldBytes) held.push(buf.slice(end));
      if (events.length) yield taken();
      if (stop) break;
      await yieldTurn();
    }
    if (!stop && heldBytes) block(joined(held, heldBytes));
  } catch (err) {
    const k = err as { code?: string; message?: string };
    events.push({ type: 'error', ...where, code: k.code ?? 'INTERNAL', message: k.message ?? String(err) });
    yield taken();
    return;
  }
  if (begun) {
    summary.filesMatched++;
    events.push({ type: 'end', ...where, matches });
  }
  if (events.length) yield taken();
}
