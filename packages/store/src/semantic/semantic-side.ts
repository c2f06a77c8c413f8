/**
 * The semantic side of search (decision 0036): the query embedded by the store's model, every
 * stored chunk scored (VectorIndex, an exact scan), each document by its best chunk, the
 * entries showing those documents filtered like keyword hits. The modes and their fusion are
 * search/modes.ts's.
 */
import { z } from 'zod';
import type { SqlDatabase } from '../backend/sql.js';
import { SqlChanges, type ChangeMark } from '../backend/sql-changes.js';
import type { Reader } from '../bytes/read.js';
import { semanticFloor } from '../search/floor.js';
import type { FoundEntry } from '../search/keyword.js';
import type { SearchQuery } from '../search/search-query.js';
import type { Statements } from '../catalog/statements.js';
import type { Embedder } from './embedder.js';
import type { EmbedJob } from './embed-job.js';
import { VectorIndex, type ChunkHit } from './vectors.js';

type Query = z.output<typeof SearchQuery>;

export class SemanticSearch {
  index: VectorIndex;
  readonly #changes: SqlChanges;
  /** The database's state when the rows were last brought in step (sql-changes.ts). */
  #inStep: ChangeMark | undefined;

  constructor(
    readonly db: SqlDatabase,
    readonly st: Statements,
    readonly reader: Reader,
    readonly embedder: Embedder,
    readonly job: EmbedJob,
  ) {
    this.index = new VectorIndex(embedder.dims);
    this.#changes = new SqlChanges(db);
  }

  /**
   * Brings the in-memory rows in step with the table: rows added since are appended; after a
   * delete (the table has fewer rows than seen plus added), all are read again. The check is
   * over every model's rows (`count`): it costs an index count, not a scan of the vectors —
   * and nothing while the database has not changed since the last (~4 ms at 100,000 rows).
   */
  refresh(): void {
    const model = this.embedder.model;
    this.#changes.read((mark) => {
      if (mark !== undefined && mark === this.#inStep) return;
      this.#inStep = undefined; // (until the rows are in step again)
      const { n, last } = this.st.vectorCount.get()!;
      if (n === this.index.count && (last ?? 0) === this.index.lastRow) return void (this.#inStep = mark);
      const added = this.st.vectorCountAfter.get(this.index.lastRow)!.n;
      let rows = this.st.vectorsAfter.all(model, this.index.lastRow);
      let into = this.index;
      if (this.index.count + added !== n) {
        into = new VectorIndex(this.embedder.dims);
        rows = this.st.vectorsAfter.all(model, 0);
        this.index.dispose();
        this.index = into;
      }
      for (const r of rows) into.add(r.doc_id, r.n, r.start, r.end, r.scale, new Int8Array(r.vec.buffer, r.vec.byteOffset, r.vec.byteLength));
      into.count = n;
      into.lastRow = last ?? 0;
      this.#inStep = mark;
    });
  }

  /**
   * Entries by semantic similarity, best first (`window` at most; collapsed, those of `window`
   * documents at most), with each one's best chunk;
   * `notEmbedded` when `q.waitMs` ran out before every committed document was embedded.
   */
  async entries(
    query: string,
    q: Query,
    window: number,
    filters: { where: string[]; params: (string | number)[] },
  ): Promise<{ found: FoundEntry[]; chunks: Map<number, ChunkHit>; notEmbedded?: number; full: boolean }> {
    const complete = await this.job.drain(q.waitMs ?? Infinity); // every committed document first, or what the wait allows
    const notEmbedded = complete ? 0 : this.db.read(() => this.st.embedCounts.get(this.embedder.model, this.embedder.model, this.embedder.model)!.pending);
    this.refresh();
    const [qv] = await this.embedder.embed([query]);
    // Below the relevance floor the model's similarity says "unrelated" (search/floor.ts).
    const floor = semanticFloor(this.embedder.model, q.minScore);
    // The index's best documents, then the filters (path, tag, type, time): a filter that
    // keeps few of them asks the index for four times as many, until `window` documents pass
    // or the index has no more above the floor (asked once, `--tag notes` found nothing when
    // the notes' documents were not among the store's first 100 by meaning: a trial).
    for (let k = window; ; k *= 4) {
      const top = this.index.top(qv!, k).filter((c) => c.score >= floor);
      const chunks = new Map(top.map((c) => [c.docId, c]));
      // `full`: the index gave all it was asked above the floor — it may hold more.
      const partial = { ...(notEmbedded > 0 ? { notEmbedded } : {}), full: top.length === k };
      if (top.length === 0) return { found: [], chunks, ...partial };
      const rows = this.db.read(() =>
        this.db
          .prepare<Omit<FoundEntry, 'score'>>(
            `SELECT e.id AS entry_id, d.id AS doc_id, d.digest AS digest, e.path AS path, e.media_type AS media_type, d.size AS size
             FROM entries e JOIN documents d ON d.id = e.doc_id
             WHERE e.doc_id IN (SELECT value FROM json_each(?))${filters.where.map((w) => ` AND ${w}`).join('')}`,
          )
          .all(JSON.stringify(top.map((c) => c.docId)), ...filters.params),
      );
      const docs = new Set(rows.map((r) => r.doc_id));
      if (docs.size < window && partial.full && filters.where.length > 0) continue;
      partial.full ||= docs.size > window; // (more passed the filters than are given)
      const found = rows
        .map((r) => ({ ...r, score: chunks.get(r.doc_id)!.score }))
        .sort((a, b) => b.score - a.score || a.doc_id - b.doc_id || a.entry_id - b.entry_id);
      // The first `window` documents' entries (collapsed, the caller keeps each one's first),
      // or without collapsing the first `window` entries.
      if (q.collapse) {
        const kept = new Set([...new Set(found.map((f) => f.doc_id))].slice(0, window));
        return { found: found.filter((f) => kept.has(f.doc_id)), chunks, ...partial };
      }
      found.splice(window);
      return { found, chunks, ...partial };
    }
  }
}
