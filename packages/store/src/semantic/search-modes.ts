/**
 * Semantic and hybrid search (decision 0036): the query embedded by the store's model, every
 * stored chunk scored (VectorIndex, an exact scan), each document by its best chunk, the
 * entries showing those documents filtered like keyword hits; hybrid fuses the keyword and
 * semantic rankings by reciprocal rank fusion.
 */
import { z } from 'zod';
import type { SqlDatabase } from '../backend/sql.js';
import type { Reader } from '../bytes/read.js';
import { entryFilters } from '../options.js';
import { keywordEntries, toHits, type FoundEntry, type SearchHits, type SearchQuery } from '../catalog/search.js';
import type { Statements } from '../catalog/statements.js';
import type { Embedder } from './embedder.js';
import type { EmbedJob } from './embed-job.js';
import { VectorIndex, fuseRanks, type ChunkHit } from './vectors.js';

type Query = z.output<typeof SearchQuery>;

export class SemanticSearch {
  index: VectorIndex;

  constructor(
    readonly db: SqlDatabase,
    readonly st: Statements,
    readonly reader: Reader,
    readonly embedder: Embedder,
    readonly job: EmbedJob,
  ) {
    this.index = new VectorIndex(embedder.dims);
  }

  /**
   * Brings the in-memory rows in step with the table: rows added since are appended; after a
   * delete (the table has fewer rows than seen plus added), all are read again. The check is
   * over every model's rows (`count`): it costs an index count, not a scan of the vectors.
   */
  refresh(): void {
    const model = this.embedder.model;
    this.db.read(() => {
      const { n, last } = this.st.vectorCount.get()!;
      if (n === this.index.count && (last ?? 0) === this.index.lastRow) return;
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
    });
  }

  /**
   * Entries by semantic similarity, best first (`window` at most), with each one's best chunk;
   * `notEmbedded` when `q.waitMs` ran out before every committed document was embedded.
   */
  async entries(query: string, q: Query, window: number): Promise<{ found: FoundEntry[]; chunks: Map<number, ChunkHit>; notEmbedded?: number }> {
    const complete = await this.job.drain(q.waitMs ?? Infinity); // every committed document first, or what the wait allows
    const notEmbedded = complete ? 0 : this.db.read(() => this.st.embedCounts.get(this.embedder.model, this.embedder.model, this.embedder.model)!.pending);
    this.refresh();
    const [qv] = await this.embedder.embed([query]);
    const top = this.index.top(qv!, window);
    const chunks = new Map(top.map((c) => [c.docId, c]));
    const partial = notEmbedded > 0 ? { notEmbedded } : {};
    if (top.length === 0) return { found: [], chunks, ...partial };
    const filters = entryFilters(q);
    const rows = this.db.read(() =>
      this.db
        .prepare<Omit<FoundEntry, 'score'>>(
          `SELECT e.id AS entry_id, d.id AS doc_id, d.digest AS digest, e.path AS path, e.media_type AS media_type, d.size AS size
           FROM entries e JOIN documents d ON d.id = e.doc_id
           WHERE e.doc_id IN (SELECT value FROM json_each(?))${filters.where.map((w) => ` AND ${w}`).join('')}`,
        )
        .all(JSON.stringify(top.map((c) => c.docId)), ...filters.params),
    );
    const found = rows
      .map((r) => ({ ...r, score: chunks.get(r.doc_id)!.score }))
      .sort((a, b) => b.score - a.score || a.doc_id - b.doc_id || a.entry_id - b.entry_id)
      .slice(0, window);
    return { found, chunks, ...partial };
  }

  /** Semantic or hybrid hits for `query` (the keyword index already drained). */
  async search(query: string, q: Query, mode: 'semantic' | 'hybrid'): Promise<SearchHits> {
    const window = Math.max(q.window, q.offset + q.limit);
    const semantic = await this.entries(query, q, window);
    const partial = async (found: Promise<SearchHits>): Promise<SearchHits> => {
      const hits = await found;
      if (semantic.notEmbedded) hits.notEmbedded = semantic.notEmbedded;
      return hits;
    };
    const passage = (f: FoundEntry) => {
      const c = semantic.chunks.get(f.doc_id);
      return c ? { passage: { start: c.start, end: c.end } } : {};
    };
    if (mode === 'semantic') {
      const page = semantic.found.slice(q.offset, q.offset + q.limit);
      return partial(toHits(this.db, this.st, this.reader, query, page, (f) => ({ ...passage(f), semantic: { rank: semantic.found.indexOf(f) + 1, score: f.score } })));
    }
    const keyword = keywordEntries(this.db, query, q, window, 0);
    const byId = new Map<number, FoundEntry>();
    for (const f of [...keyword, ...semantic.found]) if (!byId.has(f.entry_id)) byId.set(f.entry_id, f);
    const fused = fuseRanks(
      [
        { items: keyword.map((f) => f.entry_id), weight: q.weights.keyword },
        { items: semantic.found.map((f) => f.entry_id), weight: q.weights.semantic },
      ],
      q.rrfK,
    ).slice(q.offset, q.offset + q.limit);
    const sides = new Map(fused.map((f) => [f.item, f]));
    const page = fused.map((f) => ({ ...byId.get(f.item)!, score: f.score }));
    return partial(
      toHits(this.db, this.st, this.reader, query, page, (f) => {
        const [kr, sr] = sides.get(f.entry_id)!.ranks;
        return {
          ...(kr ? { keyword: { rank: kr, score: keyword[kr - 1]!.score } } : {}),
          ...(sr ? { semantic: { rank: sr, score: semantic.found[sr - 1]!.score }, ...(kr ? {} : passage(f)) } : {}),
        };
      }),
    );
  }
}
