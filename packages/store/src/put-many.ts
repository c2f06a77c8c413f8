/**
 * Putting many sources at once — Node's `putFiles` (paths), a browser's `putBlobs` (Files) —
 * on every platform the same way: the platform's ingest workers read and chunk them, small
 * ones in batches (one message each way and one commit per batch: one message per small
 * source cost more than its ingest), while this thread deduplicates and commits, in input
 * order (documents are listed in it), sharing transactions (CommitOrder). Without workers,
 * this thread puts them, a few at a time.
 *
 * Two windows: sources being ingested (two per worker, so each reads one ahead) and sources
 * whose outcome is awaited (ingested, waiting for their commit). A worker runs every source
 * it is sent at once, interleaved; sent a whole commit's worth, they all ended together and
 * the workers stood idle while that commit uploaded its pack (on object storage).
 */
import type { IngestPoolCore } from './ingest/pool.js';
import type { PutMeta } from './options.js';
import { CommitOrder } from './commit-order.js';
import type { ChunkEvent, PutResult } from './put.js';
import { withEnd } from './ingest/stream-end.js';
import type { Store as StoreCore } from './store.js';
import { knownChunks, type StoreContext } from './store-context.js';
import type { PutInput } from './store-types.js';
import { INDEXED_TEXT_MAX } from './search/text.js';
import { SourceChangedError } from './errors.js';
import type { ChunkStream, StreamResult } from './put.js';

/** What the puts of many sources work with: the store's public puts and its context. */
export interface ManyPuts {
  store: Pick<StoreCore, 'put' | 'putChunks' | 'putReady' | 'ingestOptions'>;
  /** The store's context, checked open for writing (`op` names the call refused otherwise). */
  context: (op: string) => StoreContext;
}

export interface SourceToPut<S> {
  source: S;
  meta?: PutMeta | undefined;
  onChunk?: ((chunk: ChunkEvent) => void) | undefined;
}

/** One source's outcome: its position in the input, and its result or error. */
export interface SourceOutcome {
  index: number;
  result?: PutResult;
  error?: unknown;
}

/** How a platform's sources are put. */
export interface ManySources<S> {
  /** Its ingest workers; none: every source is put on this thread. */
  pool: IngestPoolCore<S> | undefined;
  /** Whether the workers read `source` whole in a batch (small, and of a kind they can). */
  small(source: S): boolean;
  /** The source as this thread puts it (without workers). */
  here(source: S): PutInput;
  /** Its size in bytes, when known cheaply: a source refused for want of space is tried again when smaller than one refused again (see putMany). */
  size?(source: S): number | undefined;
}

/** A write refused for want of space: a full disk (STORAGE_FULL), a browser over its quota. */
function spaceRefused(e: unknown): boolean {
  return (e as { code?: unknown })?.code === 'STORAGE_FULL' || (e instanceof Error && e.name === 'QuotaExceededError');
}

/** Small sources per worker message. */
export const SMALL_BATCH = 64;
/** Sources (or batches) being ingested at once, per worker. */
const INGESTING_PER_WORKER = 2;
/** On object storage: sources in flight per worker, ingesting or waiting for their commit. */
const IN_FLIGHT_PUBLISHING = 16;
/** Puts on this thread in flight at once, without workers. */
const HERE_IN_FLIGHT = 32;

/**
 * Puts many sources; yields one outcome per source, in input order. A source that fails does
 * not stop the others — nor does one that fails only because another's write did not fit: a
 * failed write gives its pack up, with the puts whose records it held (decision 0066), so
 * sources refused for want of space are put once more, one at a time, unless one as large was
 * refused again (it would be too). A 17-byte file after a 60 MiB one over the quota failed
 * with it, then went in alone (a trial). Such a source commits after those that followed it
 * (documents are listed in input order but for it), and its `onChunk` hears its chunks again.
 */
export async function* putMany<S>(
  h: ManyPuts,
  items: Iterable<SourceToPut<S>> | AsyncIterable<SourceToPut<S>>,
  sources: ManySources<S>,
  /**
   * `listed: false`: a snapshot's files (PutOptions). `refuseChanged`: a source the workers see
   * change while they read it fails with SourceChangedError, and nothing of it is committed (a
   * watch puts it again once it is still); so does one `unsettled` names when its read has
   * ended (a file some process holds open for writing: what was read may be a state between
   * two writes, such as the empty file a rewrite starts with). Large sources are then read as
   * regular files, not followed through a link. (Sources put on this thread are not watched.)
   */
  { listed = true, refuseChanged = false, unsettled }: { listed?: boolean; refuseChanged?: boolean; unsettled?: (sources: S[]) => ReadonlySet<S> } = {},
): AsyncGenerator<SourceOutcome> {
  const { pool } = sources;
  const known = pool ? knownChunks(h.context('put')) : undefined;
  /** Sources in flight, by index: what a second try puts. */
  const inFlightItems = new Map<number, SourceToPut<S>>();
  /** The smallest size a second try was refused at for want of space. */
  let refusedAt = Infinity;
  const tryAgain = async (o: SourceOutcome): Promise<SourceOutcome> => {
    const item = inFlightItems.get(o.index);
    inFlightItems.delete(o.index);
    // (A watch's sources are put again by the watch: only the workers see them change.)
    if (!item || refuseChanged || !spaceRefused(o.error)) return o;
    const size = sources.size?.(item.source);
    if (size === undefined || size >= refusedAt) return o;
    try {
      return { index: o.index, result: await h.store.put(sources.here(item.source), item.meta ?? {}, { listed, ...(item.onChunk ? { onChunk: item.onChunk } : {}) }) };
    } catch (error) {
      if (spaceRefused(error)) refusedAt = size;
      return { index: o.index, error };
    }
  };
  async function* outcomes(group: SourceOutcome[]): AsyncGenerator<SourceOutcome> {
    for (const o of group) yield await tryAgain(o);
  }
  const opts = h.store.ingestOptions();
  const order = new CommitOrder();
  const settle = (index: number, put: Promise<PutResult>): Promise<SourceOutcome[]> =>
    put.then(
      (result) => [{ index, result }],
      (error: unknown) => [{ index, error }],
    );
  /** Groups of outcomes in input order: one small batch, or one other source. */
  const window: Promise<SourceOutcome[]>[] = [];
  let batch: { item: SourceToPut<S>; index: number }[] = [];
  const sendBatch = () => {
    const group = batch;
    const turn = order.next(); // the batch commits as one, in its place
    batch = [];
    const free = ingesting.take();
    window.push(
      pool!
        .ingestSmall(
          group.map((g) => g.item.source),
          opts,
          known,
          listed ? INDEXED_TEXT_MAX : undefined,
        )
        .catch((error: unknown) => group.map(() => error as Error))
        .finally(free)
        .then((ready) => {
          const open = refuseChanged && unsettled ? unsettled(group.filter((_, i) => !(ready[i] instanceof Error)).map((g) => g.item.source)) : undefined;
          const docs = ready.map((r, i) => (r instanceof Error ? r : refuseChanged && (r.result.changed || open?.has(group[i]!.item.source)) ? new SourceChangedError() : { ...r, meta: group[i]!.item.meta, onChunk: group[i]!.item.onChunk }));
          return h.store.putReady(docs, { order: turn, listed });
        })
        .then(
          (results) => results.map((r, i) => (r instanceof Error ? { index: group[i]!.index, error: r } : { index: group[i]!.index, result: r })),
          (error: unknown) => group.map((g) => ({ index: g.index, error })),
        ),
    );
  };
  // Two groups per worker keep every worker busy while the oldest commits. On object storage,
  // where each commit costs requests, sixteen: the group commit gathers what is in flight into
  // one commit (bytes/group-commit.ts), so more in flight is fewer, larger commits, and the
  // workers ingest the next ones while a commit uploads.
  const publishes = h.context('put').log.publishes;
  const inFlight = pool ? pool.size * (publishes ? IN_FLIGHT_PUBLISHING : 2) : HERE_IN_FLIGHT;
  const ingesting = new IngestSlots(pool ? pool.size * INGESTING_PER_WORKER : Infinity);
  let index = 0;
  try {
    for await (const item of items) {
      const i = index++;
      inFlightItems.set(i, item);
      const options = { listed, ...(item.onChunk ? { onChunk: item.onChunk } : {}) };
      if (!pool) {
        window.push(settle(i, Promise.resolve().then(() => h.store.put(sources.here(item.source), item.meta ?? {}, options))));
      } else if (sources.small(item.source)) {
        batch.push({ item, index: i });
        if (batch.length === SMALL_BATCH) {
          await ingesting.free();
          sendBatch();
        }
      } else {
        if (batch.length) {
          await ingesting.free();
          sendBatch();
        }
        await ingesting.free();
        const free = ingesting.take();
        // A listed document's first bytes come back for the search index (text-heads.ts).
        const chunks = pool.ingestSource(item.source, opts, refuseChanged, known, listed ? INDEXED_TEXT_MAX : undefined);
        const source = item.source;
        const stream = withEnd(refuseChanged ? refusingChanged(chunks, () => unsettled?.([source]).has(source) ?? false) : chunks, free);
        window.push(settle(i, h.store.putChunks(stream, item.meta ?? {}, { ...options, order: order.next() }).finally(free)));
      }
      while (window.length >= inFlight) yield* outcomes(await window.shift()!);
    }
    if (batch.length) {
      await ingesting.free();
      sendBatch();
    }
    while (window.length) yield* outcomes(await window.shift()!);
  } finally {
    await Promise.allSettled(window);
  }
}

/**
 * Places in the ingest window: `free()` waits for one (one waiter at a time: the loop above),
 * `take()` holds it and returns its release, which may be called more than once.
 */
class IngestSlots {
  #held = 0;
  #waiter: (() => void) | undefined;

  constructor(readonly max: number) {}

  async free(): Promise<void> {
    while (this.#held >= this.max) await new Promise<void>((r) => (this.#waiter = r));
  }

  take(): () => void {
    this.#held++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#held--;
      const w = this.#waiter;
      this.#waiter = undefined;
      w?.();
    };
  }
}

/** A chunk stream that fails at its end, before anything of it commits, when its source changed while it was read or is `unsettled` then. */
async function* refusingChanged(stream: ChunkStream, unsettled: () => boolean): ChunkStream {
  const result: StreamResult = yield* stream;
  if (result.changed || unsettled()) throw new SourceChangedError();
  return result;
}
