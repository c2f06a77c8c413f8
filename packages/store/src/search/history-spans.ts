/**
 * History spans (decision 0056, amended): what ranks a search through every version. Each
 * path's versions, oldest first, are cut into spans of at most SPAN_VERSIONS versions whose
 * distinct lines come to at most SPAN_CHARS characters; a span's distinct lines are indexed once
 * (`history_span_text`, rowid = `history_spans.id`). A word every version of a path has is then
 * one row to rank, not one a version: ranking spans costs about what ranking each path's latest
 * version does, where ranking every version's row cost ten times that at ten versions a path.
 * Which of a span's versions match is then asked of the exact indexes (history-search.ts).
 *
 * Spans follow the versions lazily, like the history index: a path whose versions changed
 * (`history_paths` keeps how many it had, its newest and the sum of their documents' ids) has
 * its last span made again when versions were only added, and all its spans made again
 * otherwise (versions forgotten); a path with no versions left loses its spans.
 */
import { BATCH_TEXT, historyText, writeHistoryDocs, type HistorySource, type HistoryText } from './history-docs.js';
import { spaceWords } from './words.js';

/** Versions a span holds at most: the most a new version makes the sync read again. */
export const SPAN_VERSIONS = 32;
/** Characters of distinct lines a span holds at most (a span always takes one version). */
export const SPAN_CHARS = 4 << 20;
/** Paths written per transaction, at most. */
const PATHS_PER_BATCH = 256;
/** Before versions: what a path's row says while its spans are half made (never a real state). */
const UNFINISHED = { versions: -1, newest: -1, docsum: -1 };
/** Below every version number: all of a path's versions. */
const ALL = Number.MIN_SAFE_INTEGER;

type PathState = { path: string; versions: number; newest: number; docsum: number };
type Known = PathState & { id: number };

/** A span being made: its versions and their distinct lines so far. */
class SpanText {
  readonly lines = new Set<string>();
  chars = 0;
  first = 0;
  last = 0;
  count = 0;

  /** Whether the version's text fits (or the span is empty); adds it if so. */
  take(version: number, text: string): boolean {
    const fresh = new Set<string>();
    let chars = 0;
    for (const line of text.split('\n')) {
      if (this.lines.has(line) || fresh.has(line)) continue;
      fresh.add(line);
      chars += line.length + 1;
    }
    if (this.count > 0 && (this.count >= SPAN_VERSIONS || this.chars + chars > SPAN_CHARS)) return false;
    for (const line of fresh) this.lines.add(line);
    this.chars += chars;
    if (this.count === 0) this.first = version;
    this.last = version;
    this.count++;
    return true;
  }
}

/**
 * What is read but not yet written: written in one transaction once about BATCH_TEXT of text
 * (or PATHS_PER_BATCH paths) is pending, so a path of many large versions is made in several.
 */
class Pending {
  /** Per path: where its spans are made again from (until first written), and its state once all read. */
  paths = new Map<string, { from: number | undefined; done: PathState | undefined }>();
  spans: { path: string; first: number; last: number; text: string }[] = [];
  docs = new Map<number, HistoryText>();
  chars = 0;

  constructor(private readonly s: HistorySource) {}

  full(): boolean {
    return this.chars >= BATCH_TEXT || this.paths.size >= PATHS_PER_BATCH;
  }

  addSpan(path: string, span: SpanText): void {
    const text = spaceWords([...span.lines].join('\n'));
    this.spans.push({ path, first: span.first, last: span.last, text });
    this.chars += text.length;
  }

  write(): void {
    const { s } = this;
    s.db.transaction(() => {
      const upsert = s.db.prepare<{ id: number }>(
        `INSERT INTO history_paths(path, versions, newest, docsum) VALUES (?, ?, ?, ?)
         ON CONFLICT(path) DO UPDATE SET versions = excluded.versions, newest = excluded.newest, docsum = excluded.docsum RETURNING id`,
      );
      const addSpan = s.db.prepare<{ id: number }>('INSERT INTO history_spans(path_id, first, last) VALUES (?, ?, ?) RETURNING id');
      const addText = s.db.prepare('INSERT INTO history_span_text(rowid, body) VALUES (?, ?)');
      const ids = new Map<string, number>();
      for (const [path, p] of this.paths) {
        // The state read when the sync began, once every span is made (a version added since
        // makes the next sync look again); until then one no real state has.
        const state = p.done ?? UNFINISHED;
        const id = upsert.get(path, state.versions, state.newest, state.docsum)!.id;
        ids.set(path, id);
        if (p.from !== undefined) dropSpans(s, id, p.from);
      }
      for (const span of this.spans) addText.run(addSpan.get(ids.get(span.path)!, span.first, span.last)!.id, span.text);
      // The documents read are history's too (those no entry shows), named by their paths now.
      writeHistoryDocs(s, this.docs);
    });
    for (const [path, p] of this.paths) {
      if (p.done) this.paths.delete(path);
      else p.from = undefined; // dropped already
    }
    this.spans = [];
    this.docs = new Map();
    this.chars = 0;
  }
}

/** Brings every path's spans up to date; false when `pause` said to stop (unfinished). */
export async function syncSpans(s: HistorySource, pause: () => Promise<boolean | void>): Promise<boolean> {
  const { current, known } = s.db.read(() => ({
    current: s.db.prepare<PathState>('SELECT path, COUNT(*) AS versions, MAX(version) AS newest, SUM(doc_id) AS docsum FROM versions GROUP BY path').all(),
    known: new Map(s.db.prepare<Known>('SELECT id, path, versions, newest, docsum FROM history_paths').all().map((k) => [k.path, k])),
  }));
  const changed: { now: PathState; before: Known | undefined }[] = [];
  for (const now of current) {
    const before = known.get(now.path);
    known.delete(now.path);
    if (!before || before.versions !== now.versions || before.newest !== now.newest || before.docsum !== now.docsum) changed.push({ now, before });
  }
  // Paths with no version left: their spans go. (A document's names may keep such a path's
  // token: a span's versions are looked up by path when checked, so a stale name finds nothing.)
  if (known.size) {
    s.db.transaction(() => {
      const del = s.db.prepare('DELETE FROM history_paths WHERE id = ?');
      for (const k of known.values()) {
        dropSpans(s, k.id, ALL);
        del.run(k.id);
      }
    });
  }
  const pending = new Pending(s);
  const flush = async () => {
    pending.write();
    return (await pause()) !== true;
  };
  for (const { now, before } of changed) {
    const from = s.db.read(() => rebuildFrom(s, now, before));
    const versions = s.db.read(() =>
      s.db.prepare<{ version: number; doc_id: number }>('SELECT version, doc_id FROM versions WHERE path = ? AND version >= ? AND version <= ? ORDER BY version').all(now.path, from, now.newest),
    );
    const entry = { from: from as number | undefined, done: undefined as PathState | undefined };
    pending.paths.set(now.path, entry);
    let span = new SpanText();
    for (const v of versions) {
      let t = pending.docs.get(v.doc_id);
      if (!t) {
        t = await historyText(s, v.doc_id);
        pending.docs.set(v.doc_id, t);
        pending.chars += t.text.length;
      }
      if (!span.take(v.version, t.text)) {
        pending.addSpan(now.path, span);
        span = new SpanText();
        span.take(v.version, t.text);
      }
      if (pending.full() && !(await flush())) return false;
    }
    if (span.count > 0) pending.addSpan(now.path, span);
    entry.done = now;
    if (pending.full() && !(await flush())) return false;
  }
  if (pending.paths.size > 0 && !(await flush())) return false;
  return true;
}

/**
 * The first version whose span is made again: the last span's first when versions were only
 * added since (those up to the newest then are the same versions), else every version.
 */
function rebuildFrom(s: HistorySource, now: PathState, before: Known | undefined): number {
  if (!before || now.newest < before.newest) return ALL;
  const kept = s.db.prepare<{ n: number; sum: number }>('SELECT COUNT(*) AS n, COALESCE(SUM(doc_id), 0) AS sum FROM versions WHERE path = ? AND version <= ?').get(now.path, before.newest)!;
  if (kept.n !== before.versions || kept.sum !== before.docsum) return ALL;
  const last = s.db.prepare<{ first: number }>('SELECT first FROM history_spans WHERE path_id = ? ORDER BY first DESC LIMIT 1').get(before.id);
  return last ? last.first : ALL;
}

/** Deletes path `pathId`'s spans that begin at version `from` or later (inside the caller's transaction). */
function dropSpans(s: HistorySource, pathId: number, from: number): void {
  const ids = s.db.prepare<{ id: number }>('SELECT id FROM history_spans WHERE path_id = ? AND first >= ?').all(pathId, from);
  const delText = s.db.prepare('DELETE FROM history_span_text WHERE rowid = ?');
  const del = s.db.prepare('DELETE FROM history_spans WHERE id = ?');
  for (const { id } of ids) {
    delText.run(id);
    del.run(id);
  }
}
