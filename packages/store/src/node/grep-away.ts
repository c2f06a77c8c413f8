/**
 * `grep` on worker threads (decision 0055, amendment of 2026-11-29): reading the stored text
 * back (decompressing it, checking its digest) and matching it is CPU work of ~3-4 ns a byte,
 * on one core. Here each worker opens the store read-only and runs the same scan
 * (search/grep.ts `grepEntry`) over the entries it is sent; this thread lists the entries in
 * path order, sends them out in batches of about 1 MiB of text, and gives their events back in
 * that order — so the events are those of a scan on one thread, the limit included (a batch
 * scanned past it is cut where the limit falls). Only `bytes` in a cut scan's summary can be
 * larger: it counts the text the workers scanned. Memory stays bounded: a few batches in
 * flight per worker.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { InternalError } from '@kura/core';
import type { Entry, GrepEvent, GrepRun, GrepSummary } from '../search/grep.js';

/** A batch of entries to scan, as sent to a worker. */
export interface GrepBatch {
  id: number;
  dir: string;
  pattern: string;
  ignoreCase: boolean;
  run: GrepRun;
  entries: Entry[];
}

/** A worker's answer: each entry's events, and whether it counted as a file and the bytes it scanned. */
export type GrepBatchAnswer =
  | { id: number; entries: { events: GrepEvent[]; files: number; bytes: number }[] }
  | { id: number; error: { message: string; code?: string } };

/** A batch holds about this much text (the documents' sizes; 1 MiB balanced the workers better than 4, 5-10%), or this many entries. */
const BATCH_BYTES = 1 << 20;
const BATCH_ENTRIES = 256;
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
}

export class GrepPool {
  #workers: PoolWorker[] = [];
  #idle: ReturnType<typeof setTimeout> | undefined;
  #scans = 0;
  #nextId = 0;

  constructor(readonly size: number) {}

  #start(): void {
    while (this.#workers.length < this.size) {
      const w: PoolWorker = { worker: new Worker(workerUrl()), waiting: new Map() };
      const fail = (e: Error) => {
        this.#workers = this.#workers.filter((x) => x !== w);
        for (const p of w.waiting.values()) p.reject(e);
        w.waiting.clear();
      };
      w.worker.on('message', (a: GrepBatchAnswer) => {
        const p = w.waiting.get(a.id);
        w.waiting.delete(a.id);
        p?.resolve(a);
      });
      w.worker.on('error', (e) => fail(new InternalError(`a grep worker failed: ${e.message}`)));
      w.worker.on('exit', (code) => fail(new InternalError(`a grep worker ended (exit code ${code})`)));
      this.#workers.push(w);
    }
  }

  #send(w: PoolWorker, batch: Omit<GrepBatch, 'id'>): Promise<GrepBatchAnswer> {
    const id = this.#nextId++;
    return new Promise<GrepBatchAnswer>((resolve, reject) => {
      w.waiting.set(id, { resolve, reject });
      w.worker.postMessage({ ...batch, id });
    });
  }

  /**
   * The events of scanning `entries` (in their order) of the store in `dir`, counted into
   * `summary`; stops where `run.limit` falls (summary.truncated).
   */
  async *scan(dir: string, entries: Iterable<Entry & { size: number }>, pattern: string, ignoreCase: boolean, run: GrepRun, summary: GrepSummary): AsyncGenerator<GrepEvent> {
    clearTimeout(this.#idle);
    this.#scans++;
    this.#start();
    for (const w of this.#workers) w.worker.ref();
    const pending: Promise<GrepBatchAnswer>[] = [];
    let turn = 0;
    const send = (batch: Entry[]) => {
      const w = this.#workers[turn++ % this.#workers.length];
      if (!w) throw new InternalError('no grep worker is left');
      const answer = this.#send(w, { dir, pattern, ignoreCase, run, entries: batch });
      answer.catch(() => undefined); // (awaited in order below)
      pending.push(answer);
    };
    try {
      let batch: Entry[] = [];
      let bytes = 0;
      const it = entries[Symbol.iterator]();
      for (;;) {
        const next = it.next();
        if (!next.done) {
          const { size, ...e } = next.value;
          batch.push(e);
          bytes += size;
          if (batch.length < BATCH_ENTRIES && bytes < BATCH_BYTES) continue;
        }
        if (batch.length) send(batch);
        batch = [];
        bytes = 0;
        // In order: the oldest batch's events go out once the pool is full, or at the end.
        while (pending.length && (pending.length >= this.#workers.length * IN_FLIGHT || next.done)) {
          const answer = await pending.shift()!;
          if ('error' in answer) throw new InternalError(`a grep worker failed: ${answer.error.message}${answer.error.code ? ` (${answer.error.code})` : ''}`);
          for (const entry of answer.entries) {
            summary.files += entry.files;
            summary.bytes += entry.bytes;
            let matches = 0;
            for (const ev of entry.events) {
              if (ev.type === 'begin') matches = 0;
              else if (ev.type === 'end') summary.filesMatched++;
              yield ev;
              if (ev.type !== 'match') continue;
              matches++;
              if (++summary.matches < run.limit) continue;
              // The limit: the scan ends at this match, as a scan on one thread does.
              summary.truncated = true;
              summary.filesMatched++;
              yield { type: 'end', path: ev.path, digest: ev.digest, matches };
              return;
            }
          }
        }
        if (next.done) return;
      }
    } finally {
      if (--this.#scans === 0) {
        for (const w of this.#workers) w.worker.unref(); // never keeps a process alive
        this.#idle = setTimeout(() => void this.close(), IDLE_MS);
        this.#idle.unref();
      }
    }
  }

  async close(): Promise<void> {
    clearTimeout(this.#idle);
    const workers = this.#workers;
    this.#workers = [];
    await Promise.all(workers.map((w) => w.worker.terminate()));
  }
}
