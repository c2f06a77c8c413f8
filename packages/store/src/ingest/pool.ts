/**
 * Ingest on all cores: workers run the fused ingest kernel per source (the CPU-heavy part:
 * chunking, BLAKE3, zstd, SHA-256) while the store's thread only deduplicates, appends to
 * packs and commits. Each source is one document; sources are spread over the workers.
 * Platform-neutral: a platform supplies how to spawn a worker (node/ingest-pool.ts,
 * browser/ingest-pool.ts).
 */
import type { IngestOptions } from '@kura/core';
import type { StreamChunk } from './chunk-groups.js';
import { InternalError, KuraError, isKuraErrorCode } from '@kura/core';
import type { ChunkStream, StreamResult } from '../put.js';
import type { KnownChunks } from './known-chunks.js';
import type { ErrorShape, FromWorker, ToWorker } from './protocol.js';
import { unpackSmallResults, type PackedSmall, type ReadyChunks, type TooLarge } from './small-batch.js';
import { withEnd } from './stream-end.js';

export type { ReadyChunks, SourceStat, TooLarge } from './small-batch.js';

/**
 * How long a pool kept between uses (one per Node process, one per browser store worker)
 * outlives its last user. Starting a worker costs ~80 ms of CPU (Node; ~100 ms to load the wasm
 * core in Chromium), and a fresh one runs its first thousands of files unoptimized while V8
 * compiles its hot code: measured, a 10,000-file snapshot spent ~165 µs per file of CPU off the
 * main thread with new workers and ~75 with warm ones (decision 0020).
 */
export const POOL_IDLE_MS = 30_000;

/**
 * One pool kept between uses (a Node process's, a browser store worker's): leases share it;
 * after the last release it lives POOL_IDLE_MS more, then closes; a pool whose worker died is
 * not handed out again. The idle timer never keeps a Node process alive.
 */
export class PoolShare<P extends { readonly broken: boolean; close(): Promise<void> }> {
  #entry: { pool: P; users: number; idle?: ReturnType<typeof setTimeout> | undefined } | undefined;

  constructor(readonly make: () => P) {}

  /** The shared pool (`fresh`: made for this lease); call `release` once, when done. */
  lease(): { pool: P; fresh: boolean; release(): void } {
    const fresh = !this.#entry || this.#entry.pool.broken;
    if (fresh) this.#entry = { pool: this.make(), users: 0 };
    const entry = this.#entry!;
    clearTimeout(entry.idle);
    entry.idle = undefined;
    entry.users++;
    let released = false;
    const end = () => {
      if (this.#entry === entry && entry.users === 0) this.#entry = undefined;
      void entry.pool.close();
    };
    return {
      pool: entry.pool,
      fresh,
      release: () => {
        if (released) return;
        released = true;
        if (--entry.users > 0) return;
        if (entry !== this.#entry || entry.pool.broken) return end();
        entry.idle = setTimeout(end, POOL_IDLE_MS);
        (entry.idle as { unref?: () => void }).unref?.(); // Node: an idle pool never holds the process
      },
    };
  }
}

export interface PoolWorker<S> {
  post(message: ToWorker<S>, transfer?: ArrayBuffer[]): void;
  terminate(): unknown;
  /**
   * Optional (Node): whether the worker keeps the process alive. A pool kept warm between
   * uses holds it only while work is in flight, so an idle pool never keeps a process running.
   */
  hold?(busy: boolean): void;
}

/** Starts one worker that calls `onMessage` with its messages and `onError` when it dies. */
export type SpawnWorker<S> = (onMessage: (m: FromWorker) => void, onError: (e: Error) => void) => PoolWorker<S>;

interface Job<S> {
  queue: (StreamChunk[] | { end: StreamResult } | { error: Error })[];
  wake: (() => void) | undefined;
  worker: PoolWorker<S>;
  /** Its end or error was read: the worker is done with it. */
  finished: boolean;
}

/** The message field that hands a worker the store's known-chunks table (shared, not copied). */
function knownTable(known: KnownChunks | undefined): { known?: SharedArrayBuffer } {
  return known ? { known: known.buffer } : {};
}

/** Rebuilds an error on this side: Kura's typed errors keep their code, platform errors theirs. */
function revive(e: ErrorShape): Error {
  if (e.kura && e.code) {
    // A code this side does not know (a worker of another build) is nothing a caller can act on.
    return isKuraErrorCode(e.code) ? new KuraError(e.code, e.message) : new InternalError(`a worker failed with an unknown code ${e.code}: ${e.message}`);
  }
  return Object.assign(new Error(e.message), e.code ? { code: e.code } : {}, e.path !== undefined ? { path: e.path } : {});
}

export class IngestPoolCore<S> {
  readonly size: number;
  readonly #workers: PoolWorker<S>[] = [];
  readonly #load = new Map<PoolWorker<S>, number>();
  readonly #jobs = new Map<number, Job<S>>();
  readonly #batches = new Map<number, { worker: PoolWorker<S>; resolve: (r: PackedSmall) => void; reject: (e: Error) => void }>();
  #nextId = 1;
  #broken = false;
  /** Workers that died, with why. */
  readonly #dead = new Map<PoolWorker<S>, Error>();

  constructor(size: number, spawn: SpawnWorker<S>) {
    this.size = Math.max(1, size);
    for (let i = 0; i < this.size; i++) {
      let w: PoolWorker<S> | undefined = undefined;
      w = spawn(
        (m) => this.#receive(m),
        (e) => this.#failWorker(w!, e),
      );
      this.#workers.push(w);
      this.#load.set(w, 0);
      w.hold?.(false);
    }
  }

  /** A worker died: its work failed, and a pool kept between uses must be replaced. */
  get broken(): boolean {
    return this.#broken;
  }

  /** Sources in flight on `w` go up (or down) by `n`; a worker holds the process only while busy. */
  #addLoad(w: PoolWorker<S>, n: number): void {
    const before = this.#load.get(w)!;
    this.#load.set(w, before + n);
    if ((before === 0) !== (before + n === 0)) w.hold?.(before === 0);
  }

  /** The least busy worker alive, or undefined when every one died (its failure is in `#dead`). */
  #leastBusy(): PoolWorker<S> | undefined {
    return [...this.#load].filter(([w]) => !this.#dead.has(w)).sort((a, b) => a[1] - b[1])[0]?.[0];
  }

  /** Why the pool can take no work: its workers died (a dead worker answers nothing). */
  #noWorker(): Error {
    return [...this.#dead.values()][0] ?? new InternalError('the ingest pool has no worker');
  }

  /**
   * The chunk stream of one source, computed on the least busy worker. `known`: the chunks the
   * store holds; the worker then compresses only the others (decision 0018).
   */
  ingestSource(source: S, options: IngestOptions, regularOnly = false, known?: KnownChunks, head?: number): ChunkStream {
    return this.#start((id) => ({ type: 'file', id, source, options, ...(regularOnly ? { regularOnly } : {}), ...knownTable(known), ...(head ? { head } : {}) }));
  }

  /** The chunk stream of a buffer (copied to the worker; the caller keeps its bytes). */
  ingestBytes(bytes: Uint8Array, options: IngestOptions, known?: KnownChunks): ChunkStream {
    // Cloning a view would clone its whole ArrayBuffer; one exact copy is transferred instead.
    const copy = new Uint8Array(bytes); // a copy (Buffer#slice would be a view of the caller's memory)
    return this.#start((id) => ({ type: 'bytes', id, bytes: copy, options, ...knownTable(known) }), [copy.buffer]);
  }

  /**
   * Small sources in one round trip: each read whole and ingested on the least busy worker.
   * Per source, its chunks and result (for the store's `putReady`), or the error reading or
   * ingesting it threw.
   */
  async ingestSmall(sources: S[], options: IngestOptions, known?: KnownChunks, head?: number): Promise<(ReadyChunks | Error)[]> {
    return (await this.#small(sources, options, known, undefined, head)).map((r) => (r instanceof Error || !('large' in r) ? r : new Error('a source was not read')));
  }

  /**
   * `ingestSmall`, and each source's stat as the worker opened it (files: a snapshot's stamp and
   * entry); a source of `statMax` bytes or more is not read (TooLarge: the caller streams it).
   */
  ingestSmallWithStat(sources: S[], options: IngestOptions, known: KnownChunks | undefined, statMax: number): Promise<(ReadyChunks | TooLarge | Error)[]> {
    return this.#small(sources, options, known, statMax);
  }

  async #small(sources: S[], options: IngestOptions, known?: KnownChunks, statMax?: number, head?: number): Promise<(ReadyChunks | TooLarge | Error)[]> {
    const worker = this.#leastBusy();
    if (!worker) throw this.#noWorker();
    const id = this.#nextId++;
    this.#addLoad(worker, sources.length);
    try {
      const packed = await new Promise<PackedSmall>((resolve, reject) => {
        this.#batches.set(id, { worker, resolve, reject });
        worker.post({ type: 'small', id, sources, options, ...knownTable(known), ...(statMax !== undefined ? { statMax } : {}), ...(head ? { head } : {}) });
      });
      return unpackSmallResults(packed).map((r) => ('message' in r ? revive(r) : r));
    } finally {
      this.#batches.delete(id);
      this.#addLoad(worker, -sources.length);
    }
  }

  #start(message: (id: number) => ToWorker<S>, transfer: ArrayBuffer[] = []): ChunkStream {
    const worker = this.#leastBusy();
    if (!worker) {
      // (A stream all the same, failing at its first read: its put fails as one whose worker died.)
      const error = this.#noWorker();
      return (async function* (): ChunkStream {
        throw error;
      })();
    }
    const id = this.#nextId++;
    const job: Job<S> = { queue: [], wake: undefined, worker, finished: false };
    this.#jobs.set(id, job);
    this.#addLoad(worker, 1);
    worker.post(message(id), transfer);
    return withEnd(this.#stream(id, job), () => this.#release(id, job));
  }

  async *#stream(id: number, job: Job<S>): ChunkStream {
    for (;;) {
      while (job.queue.length === 0) await new Promise<void>((r) => (job.wake = r));
      const item = job.queue.shift()!;
      if (Array.isArray(item)) {
        job.worker.post({ type: 'ack', id });
        yield* item;
      } else if ('end' in item) {
        job.finished = true;
        return item.end;
      } else {
        job.finished = true;
        throw item.error;
      }
    }
  }

  /** A job's stream ended; abandoned (the put failed or was refused), the worker stops and frees its input. */
  #release(id: number, job: Job<S>): void {
    if (!job.finished) job.worker.post({ type: 'cancel', id });
    this.#jobs.delete(id);
    this.#addLoad(job.worker, -1);
  }

  #receive(m: FromWorker): void {
    if (m.type === 'small') return this.#batches.get(m.id)?.resolve(m);
    const job = this.#jobs.get(m.id);
    if (!job) return;
    if (m.type === 'chunks') job.queue.push(m.chunks);
    else if (m.type === 'end') job.queue.push({ end: { digest: m.digest, size: m.size, chunks: m.chunks, ...(m.head ? { head: new Uint8Array(m.head) } : {}), ...(m.changed ? { changed: true as const } : {}) } });
    else job.queue.push({ error: revive(m) });
    job.wake?.();
  }

  #failWorker(w: PoolWorker<S>, e: Error): void {
    this.#broken = true;
    this.#dead.set(w, e); // never chosen again: it would answer nothing
    for (const b of this.#batches.values()) if (b.worker === w) b.reject(e);
    for (const job of this.#jobs.values()) {
      if (job.worker === w) {
        job.queue.push({ error: e });
        job.wake?.();
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
