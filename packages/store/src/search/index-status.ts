/**
 * What the search index has still to do and how extraction went (decision 0035): `kura index`,
 * `GET /v1/index`, and the report that names documents whose text could not be (fully) read.
 */
import type { SqlDatabase } from '../backend/sql.js';
import { formatDigest } from '../hex.js';
import type { Statements } from '../catalog/statements.js';
import { INDEXED_TEXT_MAX, textByType } from './text.js';

/** Extraction problems named in a status at most. */
export const PROBLEMS_MAX = 100;

export interface ExtractionProblem {
  digest: `sha256:${string}`;
  /** A path that shows the document (null: only pathless entries or snapshots do). */
  path: string | null;
  kind: string;
  status: 'capped' | 'failed';
  note: string | null;
  /** PDF pages read. */
  pages: number | null;
}

export interface IndexStatus {
  /** Entry changes waiting to be indexed (an entry changed twice counts twice). */
  queued: number;
  /** Documents whose text was extracted, by outcome. */
  extracted: { ok: number; capped: number; failed: number };
  /** The capped and failed ones, newest first (PROBLEMS_MAX at most). */
  problems: ExtractionProblem[];
  /**
   * Entries typed as text (`kura add` and HTTP type what they store) whose documents are
   * larger than the keyword index takes (INDEXED_TEXT_MAX, 1 MiB): searched by their first MiB
   * (grep reads them whole).
   */
  textCapped: number;
  /** Background embedding for the model in use (null: no embedder in use; decision 0036). */
  embedding: EmbeddingStatus | null;
}

export interface EmbeddingStatus {
  model: string;
  /** Documents embedded (those without prose count, with no chunks). */
  documents: number;
  /** Chunks embedded over those documents. */
  chunks: number;
  /** Documents still to embed (extraction first, for PDFs and the like). */
  pending: number;
}

/** `model`: the embedder in use, if any. */
export function indexStatus(db: SqlDatabase, st: Statements, model: string | undefined): IndexStatus {
  return db.read(() => {
    const extracted = { ok: 0, capped: 0, failed: 0 };
    for (const r of st.docTextCounts.all()) if (r.status in extracted) extracted[r.status as keyof typeof extracted] = r.n;
    const problems = st.docTextProblems.all(PROBLEMS_MAX).map((p) => ({
      digest: formatDigest(p.digest),
      path: p.path,
      kind: p.kind,
      status: p.status as ExtractionProblem['status'],
      note: p.note,
      pages: p.pages,
    }));
    let embedding: EmbeddingStatus | null = null;
    if (model !== undefined) {
      const c = st.embedCounts.get(model, model, model)!;
      embedding = { model, documents: c.done, chunks: c.chunks ?? 0, pending: c.pending };
    }
    let textCapped = 0;
    for (const r of st.largeOwnTextByType.all(INDEXED_TEXT_MAX)) if (textByType(r.media_type) === true) textCapped += r.n;
    return { queued: st.queueLength.get()?.n ?? 0, extracted, problems, textCapped, embedding };
  });
}
