/**
 * Keeps the keyword index compact (decision 0038). FTS5 keeps its index as segments and merges
 * them as they pile up (automerge), which keeps each write cheap but leaves the index ~12%
 * larger than one merged segment (the five typescript releases: 13.1 MB against 11.7 MB) and
 * deleted rows' traces in place until a merge reaches them. After a process has indexed a lot of
 * text — 8 MiB and a quarter of the database at least, so the merge's cost (it rewrites the
 * index) stays a fraction of the indexing done — the segments are merged into one, a short
 * step at a time, and the pages that frees go back to the file system (new databases are made
 * with incremental auto-vacuum: schema.ts).
 */
import { nextTurn } from '../breather.js';
import type { IndexWriter } from './index-writer.js';

/** Text indexed by this process before a compaction is due: at least this, and SHARE of the index's database. */
export const COMPACT_MIN_CHARS = 8 << 20;
const SHARE = 0.25;
/** Pages of merge work per step: one short write transaction (~15 ms at most measured here). */
const MERGE_STEP = 64;
/** Free pages given back per step. */
const VACUUM_STEP = 1024;

export class SearchCompaction {
  #indexed = 0;

  constructor(
    readonly index: IndexWriter,
    readonly minChars: number = COMPACT_MIN_CHARS,
  ) {}

  /** `chars` characters of text were indexed. */
  note(chars: number): void {
    this.#indexed += chars;
  }

  get due(): boolean {
    if (this.#indexed < this.minChars) return false;
    return this.#indexed >= SHARE * this.index.bytes();
  }

  /**
   * Merges the index into one segment and frees the pages that gives back, a step at a time,
   * with a turn of the event loop between steps. Returns false when `stop()` said to stop
   * first: the next run goes on from there (what is merged stays merged).
   */
  async run(stop: () => boolean = () => false): Promise<boolean> {
    for (;;) {
      if (stop()) return false;
      if (!(await this.index.merge(MERGE_STEP))) break;
      await new Promise<void>((r) => nextTurn(r));
    }
    for (let free = await this.index.vacuum(0); free > 0; ) {
      if (stop()) return false;
      const left = await this.index.vacuum(VACUUM_STEP);
      if (left >= free) break; // a database made before incremental auto-vacuum: its free pages are reused instead
      free = left;
      await new Promise<void>((r) => nextTurn(r));
    }
    this.#indexed = 0;
    return true;
  }
}
