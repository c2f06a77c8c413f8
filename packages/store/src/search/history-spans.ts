/**
 * History spans (decision 0056, amended): what ranks a search through every version. Each
 * path's versions, oldest first, are cut into spans of at most SPAN_VERSIONS versions whose
 * distinct lines come to at most SPAN_CHARS characters; a span's distinct lines are indexed once
 * (`history_span_text`, rowid = `history_spans.id`). A word every version of a path has is then
 * one row to rank, not one a version: ranking spans costs about what ranking each path's latest
 * version does, where ranking every version's row cost ten times that at ten versions a path.
 * Which of a span's versions match is then asked of the exact indexes (history-search.ts): the
 * keyword index for a version an entry shows, the history index for the others.
 *
 * A span's lines are those of each version's text as both indexes take it: by its content (the
 * history index's), and by the media type of each entry showing it (the keyword index's; a
 * Latin-1 file typed text/csv, or HTML typed text/plain, reads otherwise). They follow the
 * versions and entries lazily, like the history index: a path whose versions changed
 * (`history_paths` keeps how many it had, its newest and the sum of their documents' ids) has
 * its last span made again when versions were only added, and all its spans made again
 * otherwise (versions forgotten); an entry that shows another document or has another media
 * type than when spans were last made (`history_shown`) has the spans of that document's
 * versions made again; a path with no versions left loses its spans.
 */
import { documentBody } from './doc-text.js';
import { BATCH_TEXT, historyText, writeHistoryDocs, type HistorySource, type HistoryText } from './history-docs.js';
import { INDEXED_TEXT_MAX } from './text.js';
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

  /** Whether the version's text fits (or the span is empty, or `capped` is false); adds it if so. */
  take(version: number, text: string, capped = true): boolean {
    const fresh = new Set<string>();
    let chars = 0;
    for (const line of text.split('\n')) {
      if (this.lines.has(line) || fresh.has(line)) continue;
      fresh.add(line);
      chars += line.length + 1;
    }
    if (capped && this.count > 0 && (this.count >= SPAN_VERSIONS || this.chars + chars > SPAN_CHARS)) return false;
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
  /** Spans to write; `exact`: made again in place (only the span of that range is replaced). */
  spans: { path: string; first: number; last: number; text: string; exact: boolean }[] = [];
  docs = new Map<number, SpanDocText>();
  chars = 0;

  constructor(private readonly s: HistorySource) {}

  full(): boolean {
    return this.chars >= BATCH_TEXT || this.paths.size >= PATHS_PER_BATCH;
  }

  /** Adds a span to write: cut now, or (`range`) made again in place for the range it had. */
  addSpan(path: string, span: SpanText, range?: { first: number; last: number }): void {
    const text = spaceWords([...span.lines].join('\n'));
    this.spans.push({ path, first: range?.first ?? span.first, last: range?.last ?? span.last, text, exact: range !== undefined });
    this.chars += text.length;
  }

  /** Writes what is pending (and `then`, in the same transaction). */
  write(then?: () => void): void {
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
      const sameRange = s.db.prepare<{ id: number }>('SELECT id FROM history_spans WHERE path_id = ? AND first = ? AND last = ?');
      for (const span of this.spans) {
        const pathId = ids.get(span.path)!;
        if (span.exact) {
          // Made again in place: it replaces the span of its range, which keeps its range
          // (versions forgotten since included: they are looked up when checked). Where another
          // process has cut the path otherwise meanwhile, its spans stand and this one is left.
          const old = sameRange.get(pathId, span.first, span.last);
          if (!old) continue;
          dropSpans(s, pathId, span.first, span.first);
        } else {
          // (Another process's sync may have written this path's spans meanwhile: theirs from
          // here on go, so no version is in two spans.)
          dropSpans(s, pathId, span.first);
        }
        addText.run(addSpan.get(pathId, span.first, span.last)!.id, span.text);
      }
      // The documents read are history's too (those no entry shows), named by their paths now.
      writeHistoryDocs(s, this.docs);
      then?.();
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

/** A document's text for spans (spanText). */
type SpanDocText = HistoryText & { shownAs?: string };

/** An entry as spans were last made with it, and as it is. */
type ShownRow = { id: number; doc_id: number | null; media_type: string | null; was_doc: number | null; was_type: string | null };

/**
 * Brings the spans of every path whose versions changed up to date, and of the versions whose
 * documents an entry changed shows (see above). False when `pause` said to stop (unfinished).
 */
export async function syncSpans(s: HistorySource, pause: () => Promise<boolean | void>): Promise<boolean> {
  const { current, known, entries } = s.db.read(() => ({
    current: new Map(
      s.db
        .prepare<PathState>('SELECT path, COUNT(*) AS versions, MAX(version) AS newest, SUM(doc_id) AS docsum FROM versions GROUP BY path')
        .all()
        .map((c) => [c.path, c]),
    ),
    known: new Map(s.db.prepare<Known>('SELECT id, path, versions, newest, docsum FROM history_paths').all().map((k) => [k.path, k])),
    // Entries new or changed since spans were last made, and those gone.
    entries: s.db
      .prepare<ShownRow>(
        `SELECT e.id AS id, e.doc_id AS doc_id, e.media_type AS media_type, h.doc_id AS was_doc, h.media_type AS was_type
         FROM entries e LEFT JOIN history_shown h ON h.entry_id = e.id WHERE h.entry_id IS NULL OR h.doc_id != e.doc_id OR h.media_type IS NOT e.media_type
         UNION ALL SELECT h.entry_id, NULL, NULL, h.doc_id, h.media_type FROM history_shown h WHERE NOT EXISTS (SELECT 1 FROM entries e WHERE e.id = h.entry_id)`,
      )
      .all(),
  }));
  // The versions of documents an entry shows now with another media type, or newly: their
  // spans lack that entry's reading of them. (A document no longer shown keeps its lines.)
  const shownDocs = [...new Set(entries.flatMap((e) => (e.doc_id === null ? [] : [e.doc_id])))];
  const dirty = new Map<string, number[]>();
  s.db.read(() => {
    const named = s.db.prepare<{ path: string; version: number }>('SELECT path, version FROM versions WHERE doc_id IN (SELECT value FROM json_each(?))');
    for (const r of named.all(JSON.stringify(shownDocs))) {
      const list = dirty.get(r.path);
      if (list) list.push(r.version);
      else dirty.set(r.path, [r.version]);
    }
  });
  const changed: { now: PathState; before: Known | undefined; dirty: number[] }[] = [];
  for (const now of current.values()) {
    const before = known.get(now.path);
    const changedVersions = !before || before.versions !== now.versions || before.newest !== now.newest || before.docsum !== now.docsum;
    const versions = dirty.get(now.path) ?? [];
    if (changedVersions || versions.length) changed.push({ now, before, dirty: versions });
  }
  // Paths with no version left: their spans go. (A document's names may keep such a path's
  // token: a span's versions are looked up by path when checked, so a stale name finds nothing.)
  const gone = [...known.values()].filter((k) => !current.has(k.path));
  if (gone.length) {
    s.db.transaction(() => {
      const del = s.db.prepare('DELETE FROM history_paths WHERE id = ?');
      for (const k of gone) {
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
  /** A version's text for spans, read once a batch. */
  const textOf = async (docId: number) => {
    let t = pending.docs.get(docId);
    if (!t) {
      t = await spanText(s, docId);
      pending.docs.set(docId, t);
      pending.chars += t.text.length + (t.shownAs?.length ?? 0);
    }
    return t.shownAs ? `${t.text}\n${t.shownAs}` : t.text;
  };
  const versionsIn = (path: string, first: number, last: number) =>
    s.db.read(() => s.db.prepare<{ version: number; doc_id: number }>('SELECT version, doc_id FROM versions WHERE path = ? AND version >= ? AND version <= ? ORDER BY version').all(path, first, last));
  for (const { now, before, dirty: dirtyVersions } of changed) {
    const plan = s.db.read(() => remakePlan(s, now, before, dirtyVersions));
    const entry = { from: plan.from, done: undefined as PathState | undefined };
    pending.paths.set(now.path, entry);
    // Spans holding a changed entry's document, made again with the same versions.
    for (const at of plan.inPlace) {
      const span = new SpanText();
      for (const v of versionsIn(now.path, at.first, at.last)) span.take(v.version, await textOf(v.doc_id), false);
      if (span.count > 0) pending.addSpan(now.path, span, at);
      if (pending.full() && !(await flush())) return false;
    }
    // From `from` on (versions added, or a path new or half made): cut again.
    if (plan.from !== undefined) {
      let span = new SpanText();
      for (const v of versionsIn(now.path, plan.from, now.newest)) {
        const text = await textOf(v.doc_id);
        if (!span.take(v.version, text)) {
          pending.addSpan(now.path, span);
          span = new SpanText();
          span.take(v.version, text);
        }
        if (pending.full() && !(await flush())) return false;
      }
      if (span.count > 0) pending.addSpan(now.path, span);
    }
    entry.done = now;
    if (pending.full() && !(await flush())) return false;
  }
  // Last, what each entry showed as these spans were made (read when the sync began: one
  // changed since is found again by the next).
  pending.write(() => {
    const set = s.db.prepare('INSERT INTO history_shown(entry_id, doc_id, media_type) VALUES (?, ?, ?) ON CONFLICT(entry_id) DO UPDATE SET doc_id = excluded.doc_id, media_type = excluded.media_type');
    const del = s.db.prepare('DELETE FROM history_shown WHERE entry_id = ?');
    for (const e of entries) {
      if (e.doc_id === null) del.run(e.id);
      else set.run(e.id, e.doc_id, e.media_type);
    }
  });
  return true;
}

/**
 * A document's text for spans: as the history index takes it (by its content), and, when an
 * entry shows it, as the keyword index read it for each such entry's media type, where that
 * differs (`shownAs`; no extraction made for it: the indexer made and kept those).
 */
async function spanText(s: HistorySource, id: number): Promise<SpanDocText> {
  const t = await historyText(s, id);
  // (An entry without a media type reads it as the history index does: by its content.)
  const types = s.db.read(() => s.db.prepare<{ media_type: string }>('SELECT DISTINCT media_type FROM entries WHERE doc_id = ? AND media_type IS NOT NULL').all(id));
  const doc = types.length ? s.db.read(() => s.st.docById.get(id)) : undefined;
  if (!doc) return t;
  const other: string[] = [];
  for (const { media_type } of types) {
    const body = await documentBody(s.reader, s.st, doc, media_type, INDEXED_TEXT_MAX);
    if ('text' in body && body.text !== t.text && !other.includes(body.text)) other.push(body.text);
  }
  return other.length ? { ...t, shownAs: other.join('\n') } : t;
}

/**
 * Which of a path's spans are made again: from `from` on, cut again — the first of the last
 * span when versions were added since the spans were made, every version for a path new or half
 * made — and, in place with the same versions, the spans holding `dirty` versions (documents a
 * changed entry shows) before that. Versions only forgotten make none again: their lines cost
 * ranking only.
 */
function remakePlan(s: HistorySource, now: PathState, before: Known | undefined, dirty: readonly number[]): { from: number | undefined; inPlace: { first: number; last: number }[] } {
  if (!before || before.versions === UNFINISHED.versions) return { from: ALL, inPlace: [] };
  const spanAt = s.db.prepare<{ first: number; last: number }>('SELECT first, last FROM history_spans WHERE path_id = ? AND first <= ? ORDER BY first DESC LIMIT 1');
  let from: number | undefined;
  if (now.newest > before.newest) from = spanAt.get(before.id, before.newest + 1)?.first ?? ALL;
  const inPlace = new Map<number, { first: number; last: number }>();
  for (const d of dirty) {
    if (from !== undefined && d >= from) continue;
    const at = spanAt.get(before.id, d);
    // (A version no span holds — one added since, found here before its region — is cut with the rest.)
    if (at && at.last >= d) inPlace.set(at.first, at);
    else from = Math.min(from ?? Infinity, at?.first ?? ALL);
  }
  return { from, inPlace: [...inPlace.values()].filter((at) => from === undefined || at.first < from) };
}

/** Deletes path `pathId`'s spans that begin at version `from` or later, up to `to` (inside the caller's transaction). */
function dropSpans(s: HistorySource, pathId: number, from: number, to = Number.MAX_SAFE_INTEGER): void {
  const ids = s.db.prepare<{ id: number }>('SELECT id FROM history_spans WHERE path_id = ? AND first >= ? AND first <= ?').all(pathId, from, to);
  const delText = s.db.prepare('DELETE FROM history_span_text WHERE rowid = ?');
  const del = s.db.prepare('DELETE FROM history_spans WHERE id = ?');
  for (const { id } of ids) {
    delText.run(id);
    del.run(id);
  }
}
