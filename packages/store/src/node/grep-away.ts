/**
 * `grep` on worker threads (decision 0055, amendment of 2026-11-29): reading the stored text
 * back (decompressing it, checking its digest) and matching it is CPU work of ~3-4 ns a byte,
 * on one core. Here each worker opens the store read-only and runs the same scan
 * (search/grep.ts `grepEntry`) over the entries it is sent; this thread lists the entries in
 * path order, sends them out in batches of about 1 MiB of text, and gives their events back in
 * that order — so the events are those of a scan on one thread, the limit included (a batch
 * scanned past it is cut where the limit falls). Only `bytes` in a cut scan's summary can be
 * larger: it counts the text the workers scanned. Memory stays bounded: a few batches in
 * flight per worker, each of about BATCH_BYTES of text, and a document larger than that is
 * scanned on this thread, in its turn, streaming (a worker answers a batch's events at once: a
 * 100 MB log whose every line matched held 1.9 GB there; found in review).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { InternalError, KuraError, isKuraErrorCode } from '@kura/core';
import { StoreClosedError } from '../errors.js';
import type { Entry, GrepEvent, GrepRun, GrepSummary } from '../search/grep.js';
import { textKey, type TextCache } from '../search/text-cache.js';

/** A batch of entries to scan, as sent to a worker. */
export interface GrepBatch {
  id: number;
  dir: string;
  pattern: string;
  ignoreCase: boolean;
  run: GrepRun;
  entries: Entry[];
  /** The entries' texts this thread keeps (text-cache.ts), lent: shared memory, not copied. */
  texts: Record<string, Uint8Array>;
}

/** What a worker scanned of an entry: its events, whether it counted as a file, the bytes of its text. */
export type ScannedEntry = { events: GrepEvent[]; files: number; bytes: number };

/**
 * A worker's answer: its entries' ScannedEntry as JSON, and the texts it read and checked,
 * lent back for this thread to keep. (As JSON, a batch's events cost this thread a third of
 * what a structured clone costs: 1 MiB of text's 240 matching lines, 0.2 ms against 0.6;
 * this thread was a fifth of a scan of matching lines.)
 */
export type GrepBatchAnswer =
  | { id: number; entries: string; texts: Record<string, Uint8Array> }
  | { id: number; error: { message: string; code?: string } };

/** A worker's first message: its modules are loaded (~0.3 s here), it scans a batch at once. */
export type GrepWorkerReady = { ready: true };

/** A batch holds about this much text (the documents' sizes; 1 MiB balanced the workers better than 4, 5-10%), or this many entries. */
const BATCH_BYTES = 1 << 20;
const BATCH_ENTRIES = 256;
/**
 * Documents larger than this are scanned on the store's thread (see above), and a batch is
 * closed before a document would take it past BATCH_BYTES: what the workers hold at once stays
 * a few MiB of text's events (with 4 MiB here, twelve 4 MiB documents whose every line matched
 * took 2.1 GB against 0.7 on one thread; found in review).
 */
export const WORKER_DOC_MAX = BATCH_BYTES;
/** Batches in flight per worker: one scanned while the next waits. */
const IN_FLIGHT = 2;
/** Workers are let go after this long without a scan, so an idle store holds no thread. */
const IDLE_MS = 5_000;

function workerUrl(): URL {
  const beside = new URL('./grep-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL('../../dist/node/grep-worker.js', import.meta.url); // from the TS sources (tests)
}

interface PoolWorker {
  worker: Worker;
  waiting: Map<number, { resolve: (a: GrepBatchAnswer) => void; reject: (e: Error) => void }>;
  /** Said GrepWorkerReady. */
  ready: boolean;
}

export class GrepPool {
  #workers: PoolWorker[] = [];
  #idle: ReturnType<typeof setTimeout> | undefined;
  #scans = 0;
  #nextId = 0;
  #closed = false;

  constructor(readonly size: number) {}

  /**
   * Whether the workers run and have loaded their modules (a scan in the last IDLE_MS): a
   * scan sent now pays no start.
   */
  get ready(): boolean {
    return this.#workers.length > 0 && this.#workers.every((w) => w.ready);
  }

  /** Starts the workers for scans to come, if none run (let go after IDLE_MS without one). */
  warm(): void {
    if (this.#closed || this.#workers.length > 0) return;
    this.#start();
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => void this.#stop(), IDLE_MS);
    this.#idle.unref();
  }

  #start(): void {
    while (this.#workers.length < this.size) {
      const w: PoolWorker = { worker: new Worker(workerUrl()), waiting: new Map(), ready: false };
      const fail = (e: Error) => {
        this.#workers = this.#workers.filter((x) => x !== w);
        for (const p of w.waiting.values()) p.reject(this.#closed ? new StoreClosedError() : e);
        w.waiting.clear();
      };
      w.worker.on('message', (a: GrepBatchAnswer | GrepWorkerReady) => {
        if ('ready' in a) {
          w.ready = true;
          return;
        }
        const p = w.waiting.get(a.id);
        w.waiting.delete(a.id);
        // Held only while it has batches: a scan its reader left unfinished (no return())
        // must not keep the process alive.
        if (w.waiting.size === 0) w.worker.unref();
        p?.resolve(a);
      });
      w.worker.on('error', (e) => fail(new InternalError(`a grep worker failed: ${e.message}`)));
      w.worker.on('exit', (code) => fail(new InternalError(`a grep worker ended (exit code ${code})`)));
      w.worker.unref();
      this.#workers.push(w);
    }
  }

  #send(w: PoolWorker, batch: Omit<GrepBatch, 'id'>): Promise<GrepBatchAnswer> {
    const id = this.#nextId++;
    return new Promise<GrepBatchAnswer>((resolve, reject) => {
      w.waiting.set(id, { resolve, reject });
      w.worker.ref();
      w.worker.postMessage({ ...batch, id });
    });
  }

  /**
   * The events of scanning `entries` (in their order) of the store in `dir`, counted into
   * `summary`; stops where `run.limit` falls (summary.truncated). `here` scans one entry on
   * this thread (a large document).
   */
  async *scan(
    dir: string,
    entries: Iterable<Entry & { size: number }>,
    pattern: string,
    ignoreCase: boolean,
    run: GrepRun,
    summary: GrepSummary,
    here: (e: Entry) => AsyncGenerator<GrepEvent[]>,
    texts?: TextCache,
  ): AsyncGenerator<GrepEvent[]> {
    if (this.#closed) throw new StoreClosedError();
    clearTimeout(this.#idle);
    this.#scans++;
    this.#start();
    const pending: Promise<GrepBatchAnswer>[] = [];
    let turn = 0;
    const send = (batch: Entry[]) => {
      if (this.#closed) throw new StoreClosedError();
      const w = this.#workers[turn++ % this.#workers.length];
      if (!w) throw new InternalError('no grep worker is left');
      // The texts kept of the batch's documents go with it: read and checked before, matched
      // there as they are (a text file's under its media type, or a document's extracted text).
      const lent: Record<string, Uint8Array> = {};
      if (texts) {
        for (const e of batch) {
          if (!e.digest) continue;
          for (const key of [textKey(e.digest, { mediaType: e.media_type }), textKey(e.digest, 'extracted')]) {
            const t = texts.get(key);
            if (t) lent[key] = t;
          }
        }
      }
      const answer = this.#send(w, { dir, pattern, ignoreCase, run, entries: batch, texts: lent });
      answer.catch(() => undefined); // (awaited in order below)
      pending.push(answer);
    };
    try {
      let batch: Entry[] = [];
      let bytes = 0;
      const it = entries[Symbol.iterator]();
      let carried: (Entry & { size: number }) | undefined; // the first of the next batch
      for (;;) {
        const next: IteratorResult<Entry & { size: number }> = carried ? { done: false, value: carried } : it.next();
        carried = undefined;
        const large = !next.done && next.value.size > WORKER_DOC_MAX ? next.value : undefined;
        if (!next.done && !large) {
          if (batch.length && bytes + next.value.size > BATCH_BYTES) carried = next.value;
          else {
            const { size, ...e } = next.value;
            batch.push(e);
            bytes += size;
            if (batch.length < BATCH_ENTRIES && bytes < BATCH_BYTES) continue;
          }
        }
        if (batch.length) send(batch);
        batch = [];
        bytes = 0;
        // In order: the oldest batch's events go out once the pool is full, or at the end, or
        // before a large document's turn.
        while (pending.length && (pending.length >= this.#workers.length * IN_FLIGHT || next.done || large)) {
          const answer = await pending.shift()!;
          if ('error' in answer) {
            const { message, code } = answer.error;
            throw code && isKuraErrorCode(code) ? new KuraError(code, message) : new InternalError(`a grep worker failed: ${message}`);
          }
          if (texts) for (const [key, t] of Object.entries(answer.texts)) texts.put(key, t);
          // The answer's events go out as one run, up to where the limit falls.
          const out: GrepEvent[] = [];
          for (const entry of JSON.parse(answer.entries) as ScannedEntry[]) {
            summary.files += entry.files;
            summary.bytes += entry.bytes;
            let matches = 0;
            for (const ev of entry.events) {
              if (ev.type === 'end' && run.count) {
                // Counted there, not sent: the limit falls inside this file's count.
                const left = run.limit - summary.matches;
                summary.filesMatched++;
                summary.matches += Math.min(ev.matches, left);
                if (ev.matches < left) {
                  out.push(ev);
                  continue;
                }
                summary.truncated = true;
                out.push({ ...ev, matches: left });
                yield out;
                return;
              }
              if (ev.type === 'begin') matches = 0;
              else if (ev.type === 'end') summary.filesMatched++;
              out.push(ev);
              if (ev.type !== 'match') continue;
              matches++;
              if (++summary.matches < run.limit) continue;
              // The limit: the scan ends at this match, as a scan on one thread does.
              summary.truncated = true;
              summary.filesMatched++;
              out.push({ type: 'end', path: ev.path, digest: ev.digest, matches });
              yield out;
              return;
            }
          }
          if (out.length) yield out;
        }
        if (large) {
          const { size: _size, ...e } = large;
          yield* here(e);
          if (summary.truncated) return;
        }
        if (next.done && !carried) return;
      }
    } finally {
      if (--this.#scans === 0 && !this.#closed) {
        this.#idle = setTimeout(() => void this.#stop(), IDLE_MS);
        this.#idle.unref();
      }
    }
  }

  /** Lets the workers go (the next scan starts others). */
  async #stop(): Promise<void> {
    const workers = this.#workers;
    this.#workers = [];
    await Promise.all(workers.map((w) => w.worker.terminate()));
  }

  /** Lets the workers go for good: a scan under way ends with STORE_CLOSED. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#idle);
    const workers = this.#workers;
    this.#workers = [];
    await Promise.all(workers.map((w) => w.worker.terminate()));
  }
}
