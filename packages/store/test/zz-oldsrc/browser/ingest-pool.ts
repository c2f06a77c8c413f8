/**
 * The ingest pool on Web Workers (ingest/pool.ts), over Blobs (Files): the kernel runs on
 * other cores while the store's worker deduplicates and commits, as in Node. The page's
 * bundler must build the worker, so the caller passes a factory, e.g.
 * `() => new Worker(new URL('./ingest.worker.ts', import.meta.url), { type: 'module' })`
 * where that module calls `serveBrowserIngest()` from `@kura/store/ingest-worker`.
 */
import type { IngestOptions } from '@kura/core';
import { IngestPoolCore } from '../ingest/pool.js';
import type { FromWorker } from '../ingest/protocol.js';

export class BrowserIngestPool extends IngestPoolCore<Blob> {
  constructor(createWorker: () => Worker, size = Math.min(4, Math.max(1, navigator.hardwareConcurrency || 1))) {
    super(size, (onMessage, onError) => {
      const w = createWorker();
      // Messages posted while the worker's imports load (the wasm core loads with top-level
      // await) would reach no handler: they wait here for its 'ready'.
      let queued: [unknown, Transferable[]][] | undefined = [];
      w.onmessage = (ev: MessageEvent<FromWorker | { type: 'ready' }>) => {
        if (ev.data.type === 'ready') {
          queued?.forEach(([m, t]) => w.postMessage(m, t));
          queued = undefined;
        } else onMessage(ev.data);
      };
      w.onerror = (ev) => onError(new Error(`ingest worker failed: ${ev.message || 'could not start'}`));
      return {
        post: (m, transfer) => (queued ? queued.push([m, transfer ?? []]) : w.postMessage(m, transfer ?? [])),
        terminate: () => w.terminate(),
      };
    });
  }

  /**
   * Runs a few MiB through every worker, so the engine's optimizing compiler has tiered up
   * the kernel before the first real file (baseline-compiled wasm is several times slower),
   * then batches of small files (the path a dropped folder takes: measured in Chromium, the
   * first 1,000 small files took ~500 ms in fresh workers and ~250-300 once they had run it).
   * Best effort: failures are ignored (a real put reports them).
   */
  warm(options: IngestOptions): void {
    const bytes = new Uint8Array(4 << 20);
    let x = 0x9e3779b9;
    for (let i = 0; i < bytes.length; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      bytes[i] = i & 1 ? x & 0xff : 32 + (x & 63); // half noise, half text-like: both codec paths
    }
    const small = new Blob([bytes.subarray(0, 512 << 10)]);
    const files = Array.from({ length: 256 }, (_, i) => small.slice(i * 2048, i * 2048 + 1024 + (i % 3) * 512));
    for (let i = 0; i < this.size; i++) {
      void (async () => {
        for await (const _ of this.ingestBytes(bytes, options)) void _;
        for (let round = 0; round < 4; round++) await this.ingestSmall(files, options);
      })().catch(() => undefined);
    }
  }
}
