/**
 * Background embedding (decision 0036): every document with prose text — extracted (PDF, DOCX,
 * HTML) or of a prose media type, or untyped text whose path does not name another type — is cut into chunks of ~200 tokens and each
 * chunk embedded, once per document and model; vectors and a "done" mark are written per
 * document, so the work resumes where it stopped. Like the indexer it waits for writes to
 * pause — or for STARVED_MS of work waiting under a steady stream of them — and while writes
 * go on it takes BACKGROUND_SHARE of the time (breather.ts); `drain` (a semantic search)
 * finishes it.
 */
import type { SqlDatabase } from '../backend/sql.js';
import { SqlChanges, type ChangeMark } from '../backend/sql-changes.js';
import type { Reader } from '../bytes/read.js';
import { BACKGROUND_SHARE, DutyCycle, STARVED_MS, nextTurn } from '../breather.js';
import { documentBody } from '../search/doc-text.js';
import type { Statements } from '../catalog/statements.js';
import { guessMediaType } from '../media-types.js';
import { chunkText, type TextChunk } from './chunk-text.js';
import type { Embedder } from './embedder.js';
import { quantize } from './vectors.js';

/** Text of a document embedded at most: the first 64 chunks of it. */
export const EMBED_TEXT_MAX = 1 << 20;
export const CHUNKS_MAX = 64;
export const CHUNK_TOKENS = 200;
/** Background embedding starts after writes have paused this long. */
const QUIET_MS = 500;
const PENDING_READ = 64;

/** Media types of text that is prose (code and data are found by keyword search). */
const PROSE = new Set(['text/plain', 'text/markdown', 'text/x-markdown', 'text/x-rst', 'text/html', 'application/xhtml+xml', 'text/rtf', 'text/enriched']);

export function isProse(mediaType: string | null, extracted: boolean): boolean {
  if (extracted || mediaType === null) return true;
  return PROSE.has(mediaType.split(';')[0]!.trim().toLowerCase());
}

export class EmbedJob {
  #running: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #urgent = 0;
  #lastWrite = 0;
  /** When work began waiting for a run (performance.now()); undefined while one runs. */
  #waitingSince: number | undefined;
  /** Paces a run while writes go on; woken by a drain or a stop. */
  readonly #duty = new DutyCycle(BACKGROUND_SHARE, 1);
  #stopped = false;
  readonly #changes: SqlChanges;
  /** The database's state when a look from the first document found none to embed (sql-changes.ts). */
  #noneLeft: ChangeMark | undefined;

  constructor(
    readonly db: SqlDatabase,
    readonly st: Statements,
    readonly reader: Reader,
    readonly embedder: Embedder,
    /** Whether writes go on (a put in flight or just made: the indexer's `writing`). */
    readonly writing: () => boolean,
  ) {
    this.#changes = new SqlChanges(db);
  }

  /** Writes happened: embed once they pause, or once work has waited STARVED_MS (paced then). */
  schedule(): void {
    if (this.#stopped) return;
    this.#lastWrite = performance.now();
    if (!this.#running) this.#waitingSince ??= this.#lastWrite;
    if (this.#timer) return;
    const fire = () => {
      this.#timer = undefined;
      if (this.#stopped) return;
      const now = performance.now();
      if (this.#running) return this.#arm(fire, QUIET_MS); // what was written meanwhile: after this run
      this.#waitingSince ??= now;
      const wait = QUIET_MS - (now - this.#lastWrite);
      const starved = now - this.#waitingSince >= STARVED_MS;
      if (!starved && (wait > 0 || this.writing())) return this.#arm(fire, Math.max(wait, 50));
      void this.#start().catch(() => undefined); // retried by the next drain
    };
    this.#arm(fire, QUIET_MS);
  }

  #arm(fire: () => void, ms: number): void {
    this.#timer = setTimeout(fire, ms);
    this.#timer.unref?.();
  }

  /**
   * Embeds everything pending (a semantic search first does); true once nothing is. With
   * `budgetMs`, false when that time ran out first: the run goes on in the background, as a
   * scheduled one would (paced while writes go on), and a search answers from what is embedded.
   */
  async drain(budgetMs = Infinity): Promise<boolean> {
    this.#urgent++;
    this.#duty.wake(); // a pause between documents ends: a search waits
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      // A run in progress (in the background, paced) is joined: it goes flat out from now on.
      const done = this.#start().then(() => true);
      if (!Number.isFinite(budgetMs)) return await done;
      const late = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), budgetMs);
      });
      return await Promise.race([done, late]);
    } finally {
      clearTimeout(timer);
      this.#urgent--;
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#duty.wake();
    await this.#running?.catch(() => undefined);
  }

  #start(): Promise<void> {
    this.#waitingSince = undefined;
    return (this.#running ??= this.#run().finally(() => (this.#running = undefined)));
  }

  /** Until nothing is left, or the job stops. */
  async #run(): Promise<void> {
    const model = this.embedder.model;
    let after = 0; // documents awaiting extraction are passed over: the next ones come after them
    this.#duty.begin();
    for (;;) {
      // (A look from the first document that found none is not asked again while the database
      // stays as it was: a semantic search drains first, and the look scans every document.)
      const from = after;
      const { docs, mark } = this.#changes.read((mark) => ({
        mark,
        docs: from === 0 && mark !== undefined && mark === this.#noneLeft ? [] : this.st.embedPending.all(from, model, PENDING_READ),
      }));
      if (docs.length === 0) {
        if (from === 0) this.#noneLeft = mark;
        return;
      }
      for (const { id, media_type, path } of docs) {
        after = id;
        await this.#duty.pace(this.#urgent === 0 && this.writing());
        if (this.#stopped) return;
        const doc = this.st.docById.get(id);
        if (!doc) continue;
        const extracted = this.st.docTextGet.get(id) !== undefined;
        const body = await documentBody(this.reader, this.st, doc, media_type, EMBED_TEXT_MAX);
        if ('extract' in body) continue; // the indexer extracts it first; embedded after
        // Untyped (a library put, an upload without a type): the path's extension says (`.js` is code).
        const text = isProse(media_type ?? (path === null ? undefined : guessMediaType(path)) ?? null, extracted) ? body.text : '';
        const chunks = text.trim() ? chunkText(text, (s) => this.embedder.countTokens(s), CHUNK_TOKENS, CHUNKS_MAX) : [];
        const vectors: Float32Array[] = [];
        for (const c of chunks) {
          if (this.#urgent === 0) await new Promise<void>((r) => nextTurn(r));
          vectors.push(...(await this.embedder.embed([text.slice(c.start, c.end)])));
        }
        this.#save(id, chunks, vectors);
      }
    }
  }

  #save(docId: number, chunks: TextChunk[], vectors: Float32Array[]): void {
    const model = this.embedder.model;
    this.db.transaction(() => {
      this.st.vectorsDeleteDocModel.run(docId, model); // (rows of a run that stopped before its mark)
      chunks.forEach((c, n) => {
        const { scale, q } = quantize(vectors[n]!);
        this.st.vectorAdd.run(docId, model, n, c.start, c.end, scale, new Uint8Array(q.buffer, q.byteOffset, q.byteLength), docId);
      });
      this.st.embeddedMark.run(docId, model, chunks.length, docId);
    });
  }
}
