/**
 * The keyword index's upkeep (FORMAT.md §10): an FTS5 index kept up to date from the catalog's
 * `search_queue` in batches, drained after commits and before every query. What to index is
 * read here, on the store's thread; the rows are written by the index's writer (index-writer.ts:
 * a thread of its own where the index is a file of its own, decision 0081), and a batch's queue
 * rows are deleted once its rows are durable.
 */
import type { SqlDatabase, SqlStatement } from '../backend/sql.js';
import type { Reader } from '../bytes/read.js';
import type { EntryRow, Statements } from '../catalog/statements.js';
import { SearchCompaction } from './compaction.js';
import type { IndexFields, IndexRow, IndexWriter } from './index-writer.js';
import { INDEXED_TEXT_MAX } from './text.js';
import { extractDocument, indexBody, saveExtracted } from './doc-text.js';
import type { ExtractCaps, Extracted } from '../extract/caps.js';
import type { ExtractKind } from '../extract/kind.js';
import { BACKGROUND_SHARE, DutyCycle, STARVED_MS, breather, nextTurn } from '../breather.js';
import { spaceWords } from './words.js';
import { TextHeads } from './text-heads.js';
import { formatDigest } from '../hex.js';
import { chunkLocations } from '../document-reads.js';

/** Documents indexed per transaction. */
const BATCH = 256;
/**
 * ... in a paced run (beside steady writes, BACKGROUND_SHARE of the time): 256 documents of
 * 64 KiB took such a run ~4 s to read, so nothing it indexed was written (or seen by the
 * queue) for seconds, and their one transaction then held the event loop for ~100 ms.
 */
const PACED_BATCH = 16;
/**
 * ... and at most about this much text (characters), whatever the count: 256 documents of up to
 * INDEXED_TEXT_MAX each were up to 256 MiB held at once, and one transaction that held
 * kura.db's write lock for the whole of their indexing while other writers waited.
 */
const BATCH_TEXT = 4 << 20;
/** Queue rows, and the ids in them, read at a time (the ids deduplicated). */
const READ_ROWS = 1024;
const READ_IDS = 16_384;
/** Background indexing starts after writes have paused this long. */
export const QUIET_MS = 200;
/** ... or, beside puts (`besidePuts`), this long after a write: what is queued meanwhile is one batch. */
const BESIDE_MS = 50;

export class Indexer {
  #draining: Promise<boolean> | undefined;
  /** Told when a run has emptied the queue (semantic search embeds what it indexed). */
  onIndexed: (() => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Callers of `drain` waiting: a run in progress must not stop for puts then. */
  #urgent = 0;
  /** The newest queue row a waiting `drain` needs indexed (see `drain`). */
  #needed = 0;
  /** When a write last queued documents (performance.now()). */
  #lastWrite = 0;
  /** When work began waiting for a background run (performance.now()); undefined while one runs. */
  #waitingSince: number | undefined;
  /** The run in progress began starved (STARVED_MS): it goes on beside writes, paced. */
  #paced = false;
  readonly #duty = new DutyCycle(BACKGROUND_SHARE);
  /** Counts the catalogs replaced under this indexer (`catalogReplaced`): a run reads one. */
  #catalog = 0;
  /** Records in the catalog a batch the index has written (a file's index: decision 0084). */
  #batchWritten: SqlStatement | undefined;
  #indexIdOf: SqlStatement<{ id: string }> | undefined;
  /**
   * Whether to index beside the puts going on now rather than after them: while a bulk stream
   * (putFiles, a snapshot) runs, where the rows are written on a thread of their own and the
   * store's close would index whatever is left anyway (a local store: decision 0081). The
   * tokenizing is then the other core's work while the ingest goes on, instead of the close's
   * on one core; this thread only reads what to index. Not for other puts: a server's stream
   * of small POSTs is bound by this thread, where reading what to index costs as much as
   * tokenizing 1 KB (measured: POST 1 KB at 16 clients ~0.8x). Nor on object storage: the
   * close leaves the queue to the cache's next opener, and a bulk ingest's puts keep both
   * cores to themselves.
   */
  besidePuts: () => boolean = () => false;

  /** Merges the index's segments once this process has indexed enough text (decision 0038). */
  readonly compaction: SearchCompaction | undefined;
  /** The first bytes of documents just put (text-heads.ts): indexed without reading them back. */
  readonly heads = new TextHeads();

  constructor(
    readonly db: SqlDatabase,
    /** Where rows go; undefined where the store is read-only. */
    readonly index: IndexWriter | undefined,
    readonly st: Statements,
    readonly reader: Reader,
    /** Resolves when no put is in flight: background indexing yields to ingest. */
    readonly idle: () => Promise<void> = () => Promise.resolve(),
    /** Whether a put is in flight now. */
    readonly busy: () => boolean = () => false,
    /** Extracts a PDF's, DOCX's or HTML page's text (decision 0035). */
    readonly extract?: (kind: ExtractKind, bytes: Uint8Array, caps: ExtractCaps) => Promise<Extracted>,
  ) {
    this.compaction = index && new SearchCompaction(index);
  }

  get writable(): boolean {
    return this.index !== undefined;
  }

  /** Compacts the index if this process has indexed enough text since (a closing store does). */
  async compact(): Promise<void> {
    if (this.compaction?.due) await this.compaction.run();
  }

  /**
   * Drains the queue once writes have paused for QUIET_MS and no put is in flight, off the
   * callers' path: indexing text costs about as much CPU as ingesting it, and batching it after
   * a burst of puts is far cheaper than once per put. Under a steady stream of writes, which
   * never pause, a run starts once work has waited STARVED_MS and goes on beside them at
   * BACKGROUND_SHARE of the time (before, nothing was indexed until a search drained it all).
   * `search` and `close` drain at once, so no search ever misses a committed change.
   */
  schedule(): void {
    if (!this.writable) return;
    this.#lastWrite = performance.now();
    if (!this.#draining) this.#waitingSince ??= this.#lastWrite;
    this.#arm();
  }

  /**
   * A timer for QUIET_MS after the last write. One timer, moved on when it fires early rather
   * than replaced at every write: a write costs a time stamp, not a timer (measured: ~2 µs of a
   * ~20 µs metadata update).
   */
  #arm(): void {
    if (this.#timer) return;
    const wait = this.besidePuts() ? BESIDE_MS : Math.max(1, QUIET_MS - (performance.now() - this.#lastWrite));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      // (A run in progress may have found the queue empty already: this write's rows wait for the next.)
      if (this.besidePuts()) return this.#draining ? this.#arm() : void this.#start().catch(() => undefined);
      const now = performance.now();
      // Under a steady stream of writes they never pause: past STARVED_MS a run starts anyway,
      // and goes on beside them at BACKGROUND_SHARE of the time (breather.ts).
      if (!this.#draining) this.#waitingSince ??= now;
      if (!this.#draining && now - this.#waitingSince! >= STARVED_MS) {
        this.#paced = true;
        return void this.#start().catch(() => undefined);
      }
      if (now - this.#lastWrite < QUIET_MS) return this.#arm(); // written since: later
      void this.idle().then(() => nextTurn(() => void this.#start().catch(() => undefined))); // retried by the next drain
    }, wait);
    (this.#timer as { unref?: () => void }).unref?.(); // never keeps a process alive
  }

  /**
   * The catalog was replaced by a checkpoint's (decision 0045), every entry queued again and
   * the index emptied (store-context.ts). A batch read from the old catalog is dropped where it
   * is: not written, and its queue rows not deleted — their ids now name the new catalog's rows
   * (ids are reused once the queue is emptied), and deleting them left entries unindexed.
   * (A batch already written went in before the index was emptied: the writer answers in order.)
   */
  catalogReplaced(): void {
    this.#catalog++;
    this.schedule();
  }

  /** The id of the index file the catalog is indexed in (undefined: the catalog's own table). */
  #indexId(): string | undefined {
    return (this.#indexIdOf ??= this.db.prepare<{ id: string }>('SELECT id FROM search_file')).get()?.id;
  }

  /** Stops background scheduling (the store is closing; close drains itself). */
  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Indexes every change committed before it began, with a turn of the event loop every
   * BREATHE_MS (a search after a burst of puts held a server's other requests until all was
   * indexed); puts committed meanwhile wait for the background, or a stream of them could keep
   * a search from answering. `extract: false` (a store closing) leaves what needs extraction
   * queued for the next run: a `kura add` of a folder of PDFs must not wait for pdf.js.
   */
  async drain(options: { extract?: boolean } = {}): Promise<void> {
    if (!this.writable) return;
    const newest = this.st.queueNewest.get()?.id ?? 0;
    this.#needed = this.#urgent > 0 ? Math.max(this.#needed, newest) : newest;
    this.#urgent++;
    this.#duty.wake(); // a paced run's pause ends: a search waits
    try {
      // A background run that was already stopping for a put returns unfinished: go again.
      while (!(await this.#start(options.extract ?? true)));
    } finally {
      this.#urgent--;
    }
  }

  /**
   * Runs `fn` with no indexing run in flight, and none starting until it ends (a run waiting to
   * drain starts after): the index remade (store-index.ts) must not lose a batch written between
   * its steps.
   */
  async exclusive(fn: () => Promise<void>): Promise<void> {
    while (this.#draining) await this.#draining.catch(() => false);
    // (Held as a run that ended unfinished: `drain` then starts one of its own.)
    const held = fn()
      .then(() => false)
      .finally(() => {
        this.#draining = undefined;
      });
    this.#draining = held;
    await held;
    this.schedule();
  }

  #start(extract = true): Promise<boolean> {
    this.#waitingSince = undefined;
    return (this.#draining ??= this.#run(extract).finally(() => {
      this.#draining = undefined;
      this.#paced = false;
    }));
  }

  /**
   * A background run stops, between documents, as soon as a put is in flight or writes have
   * not paused for QUIET_MS (nobody waits for it; puts do) — unless it began starved (paced).
   * Measured: runs that began in momentary lulls of `putFiles` indexed 32 MiB of text beside
   * the ingest, which then ran at ~60 instead of ~85-100 MB/s. `drain` callers (search, close)
   * wait for the whole queue.
   */
  #yieldToPuts(): boolean {
    return this.#urgent === 0 && this.writing();
  }

  /**
   * Whether writes go on: a put is in flight, or one ended less than QUIET_MS ago. Between the
   * puts of a stream there are moments with none in flight (a client's next request on its way,
   * a browser's files on the ingest workers); background work that starts in one competes with
   * the stream. The embeddings' job asks this too.
   */
  writing(): boolean {
    return this.busy() || performance.now() - this.#lastWrite < QUIET_MS;
  }

  /** A background run stops for puts (false: it goes on) — unless it is paced, and paces itself here. */
  async #stopForPuts(): Promise<boolean> {
    if (this.besidePuts()) return false;
    if (!this.#paced) return this.#yieldToPuts();
    await this.#duty.pace(this.#yieldToPuts());
    return false;
  }

  /** True once the queue is empty; false when a background run stopped for a put (re-armed). */
  async #run(extract: boolean): Promise<boolean> {
    // Entries left for extraction are queued again in new rows, which this run skips. (Row ids
    // can be reused once the table is empty: skipped by id, not by "after the last read".)
    const requeued: number[] = [];
    const catalog = this.#catalog;
    /** The catalog was replaced since this run read its batch: dropped, and run again (`catalogReplaced`). */
    const replaced = () => this.#catalog !== catalog;
    const breathe = breather();
    this.#duty.begin();
    for (;;) {
      if (await this.#stopForPuts()) {
        this.schedule(); // again once writes pause
        return false;
      }
      // Queue rows in order, READ_IDS ids at most (at least one row): an entry queued by
      // many of them (a hot document's metadata set again and again) is indexed once.
      const rows: { row: number; last: number }[] = [];
      const order: number[] = []; // distinct ids, in order of first appearance
      const first = new Map<number, number>(); // id -> its place in `order`
      let n = 0;
      // Commits of a batch still open on this connection queued entries not yet written as rows
      // (search-queue.ts): written now, into that batch. (None are pending outside a batch.)
      this.st.queued.flush();
      // With the index's id, in one snapshot: another writer's open that makes the index again
      // (a new id, every entry queued again under reused row ids) drops this batch (below).
      const { queue, owner } = this.db.read(() => ({ queue: this.st.queueRows.all(JSON.stringify(requeued), READ_ROWS), owner: this.#indexId() }));
      for (const r of queue) {
        const ids = JSON.parse(r.entries) as number[];
        let last = -1; // the row is indexed once `order` is, up to its latest-placed id
        for (const id of ids) {
          let at = first.get(id);
          if (at === undefined) first.set(id, (at = order.push(id) - 1));
          last = Math.max(last, at);
        }
        rows.push({ row: r.id, last });
        if ((n += ids.length) >= READ_IDS) break;
      }
      if (rows.length === 0) {
        // Nothing left to index: heads still kept are of documents replaced or deleted before
        // their turn (or of puts not yet committed, which then read theirs back).
        this.heads.clear();
        // A background run compacts the index too, when due, yielding to puts like indexing.
        if (this.#urgent === 0 && this.compaction!.due && !(await this.compaction!.run(() => this.#yieldToPuts()))) {
          this.schedule();
          return false;
        }
        this.onIndexed?.();
        return true;
      }
      let done = 0; // ids of `order` indexed
      let gone = 0; // rows deleted
      do {
        const read = new Map<number, IndexFields | undefined>();
        const extracted: { docId: number; kind: ExtractKind; r: Extracted }[] = [];
        const later: number[] = []; // entries whose document awaits extraction
        let stopped = false;
        let textRead = 0;
        const ids = order.slice(done, done + (this.#paced ? PACED_BATCH : BATCH));
        // The batch's rows in one read transaction: a statement outside one costs a read lock
        // and a WAL snapshot (~4 µs here; six a document were a fifth of the time 10,000 small
        // files took to index). Changed since, an entry is queued again (below).
        const found = this.db.read(() => ids.map((id) => this.#rowsOf(id)));
        for (const [i, id] of ids.entries()) {
          // Reads resolve through microtasks only: without a turn of the event loop here, a
          // put waiting on a timer or a socket could never start, and never be yielded to.
          if (this.#urgent === 0) await new Promise<void>((r) => nextTurn(r));
          else await breathe();
          if (replaced()) return (this.schedule(), false);
          if (await this.#stopForPuts()) {
            stopped = true; // what is read so far is written below
            break;
          }
          const r = found[i];
          if (!r) {
            read.set(id, undefined);
            continue;
          }
          const { entry, doc } = r;
          let body = await indexBody(this.reader, this.st, doc, entry.media_type, INDEXED_TEXT_MAX, { heads: this.heads, stored: r.stored, locs: r.locs });
          this.heads.forget(r.digest);
          if ('extract' in body) {
            if (extract && this.extract) {
              const r = await extractDocument(this.reader, doc, body.extract, this.extract);
              extracted.push({ docId: doc.id, kind: body.extract, r });
              body = { text: r.text.length > INDEXED_TEXT_MAX ? r.text.slice(0, INDEXED_TEXT_MAX) : r.text };
            } else later.push(id);
          }
          const text = 'text' in body ? body.text : 'ascii' in body ? body.ascii : '';
          this.compaction!.note(text.length);
          read.set(id, this.#fields(entry, text, r.tags, r.meta));
          if ((textRead += text.length) >= BATCH_TEXT) break;
        }
        done += read.size;
        // An entry changed or deleted since it was read is queued again in a newer row, which
        // stays: its row here is replaced or removed by a later batch (in order: one writer).
        const indexed: IndexRow[] = [];
        for (const [id, fields] of read) indexed.push([id, fields ?? null]);
        if (replaced()) return (this.schedule(), false);
        const batch = await this.index!.write(indexed);
        if (replaced()) return (this.schedule(), false);
        const kept = this.db.transaction(() => {
          // The index was made again since the batch was read (another process's open: decision
          // 0084): its queue rows are the new queue's, kept, and the batch is read again.
          if (this.#indexId() !== owner) return false;
          // The index has this batch: the catalog says so with the queue rows it deletes (an
          // index found with fewer is older than the catalog: decision 0084).
          if (batch !== undefined) (this.#batchWritten ??= this.db.prepare('UPDATE search_file SET batch = max(batch, ?)')).run(batch);
          const now = Date.now();
          for (const x of extracted) saveExtracted(this.st, x.docId, x.kind, x.r, now);
          requeued.push(...this.st.queued.write(later)); // indexed again once extraction may run
          for (; gone < rows.length && rows[gone]!.last < done; gone++) this.st.queueDelete.run(rows[gone]!.row);
          return true;
        });
        if (!kept) return (this.schedule(), false);
        if (stopped) break;
      } while (done < order.length); // (once at least: rows of no ids go too)
      // Done for every waiting drain: later rows wait for the background. (Checked before any
      // turn: once the queue is empty, a later change may get a reused row id.)
      const next = this.st.queueRows.all(JSON.stringify(requeued), 1)[0];
      if (this.#urgent > 0 && next && next.id > this.#needed) return (this.schedule(), true);
    }
  }

  /**
   * What indexing entry `id` needs from the database (inside the caller's read transaction):
   * its row, its document's, the document's extracted text row, its tags and metadata, and —
   * for a document to be read back whole — its chunks' places. Undefined when either is gone.
   */
  #rowsOf(id: number) {
    const entry = this.st.entryById.get(id);
    const doc = entry && this.st.docById.get(entry.doc_id);
    if (!entry || !doc) return undefined;
    const digest = formatDigest(doc.digest);
    const stored = this.st.docTextGet.get(doc.id) ?? null;
    const whole = !stored && doc.size <= INDEXED_TEXT_MAX && !this.heads.head(digest, doc.size) && !this.heads.binary(digest);
    return {
      entry,
      doc,
      digest,
      stored,
      tags: this.st.tagsOf.all(entry.id).map((t) => t.tag),
      meta: this.st.metaOf.all(entry.id).map((m) => `${m.key} ${m.value}`),
      locs: whole ? chunkLocations(this.st, doc) : undefined,
    };
  }

  /** An entry's columns: its path, tags, metadata, and the text of the document it shows. */
  #fields(entry: EntryRow, body: string | Uint8Array, tagList: string[], metaList: string[]): IndexFields {
    const tags = tagList.join(' ');
    const meta = metaList.join('\n');
    // Words of unspaced scripts are cut apart here, as queries' are (words.ts); ASCII bytes
    // have none.
    return [entry.path === null ? null : spaceWords(entry.path), spaceWords(tags), spaceWords(meta), typeof body === 'string' ? spaceWords(body) : body];
  }
}

