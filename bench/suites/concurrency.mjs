/**
 * The `concurrency` suite: puts of 4 MiB text documents with the ingest kernel (chunking,
 * BLAKE3, zstd, SHA-256) on 1..N worker threads (N = cores), two puts in flight per worker:
 * MB/s and scaling efficiency (MB/s at w workers / (w x MB/s at 1)). Commits stay on the main
 * thread, as in the store.
 */
import { availableParallelism } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '@kura/store';
import { textLike } from '../lib/data.mjs';
import { closedLoop } from '../lib/loop.mjs';
import { find, target } from '../lib/report.mjs';

const MiB = 1024 * 1024;
const log = (msg) => process.stderr.write(`[concurrency] ${msg}\n`);

export async function run({ full = false } = {}) {
  const cores = availableParallelism();
  const count = full ? 96 : 32;
  const base = textLike(4 * MiB + 4096, 77, 4096);
  // Distinct documents: each a different window of a larger text, so nothing deduplicates.
  const corpus = textLike(count * 64 * 1024 + 4 * MiB, 78, 4096);
  const doc = (i) => {
    const b = new Uint8Array(base);
    b.set(corpus.subarray(i * 64 * 1024, i * 64 * 1024 + 64 * 1024), 0);
    b.set(corpus.subarray(i * 64 * 1024 + 1024, i * 64 * 1024 + 65 * 1024), 2 * MiB);
    return b;
  };
  const docs = Array.from({ length: count + 4 }, (_, i) => doc(i));
  const root = mkdtempSync(join(tmpdir(), 'kura-bench-concurrency-'));
  const rows = [];
  try {
    for (let workers = 1; workers <= cores; workers++) {
      const dir = join(root, `s${workers}`);
      await (await Store.init(dir)).close();
      const store = await Store.open(dir, { ingestWorkers: workers });
      const row = await closedLoop(
        { family: 'concurrency', group: 'put 4 MiB text', impl: `kura, ${workers} worker${workers === 1 ? '' : 's'}`, size: 4 * MiB },
        { op: (i) => store.put(docs[i < 0 ? count - i - 1 : i]), count, concurrency: 2 * workers, bytesPerOp: 4 * MiB, warmup: 2 },
      );
      row.workers = workers;
      rows.push(row);
      log(`${workers} worker(s): ${row.mbPerSec.toFixed(0)} MB/s`);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const one = rows[0];
  for (const r of rows) r.efficiency = r.mbPerSec / (r.workers * one.mbPerSec);
  return rows;
}

export const families = {
  concurrency: {
    title: 'ingest on worker threads: 4 MiB text documents, two puts in flight per worker (efficiency = MB/s / (workers x MB/s with one))',
    ratio: () => undefined,
    extra: [{ header: 'efficiency', value: (r) => `${(100 * r.efficiency).toFixed(0)}%` }],
  },
};

export function targets(rows) {
  const most = rows.reduce((a, b) => (b.workers > a.workers ? b : a), rows[0]);
  const one = find(rows, { workers: 1 });
  if (!most || most.workers < 2) return [];
  return [target(`scaling to ${most.workers} workers >= 1.5x one worker`, one ? most.mbPerSec / one.mbPerSec / 1.5 : undefined, 1, {
    detail: one ? `${one.mbPerSec.toFixed(0)} -> ${most.mbPerSec.toFixed(0)} MB/s (efficiency ${(100 * most.efficiency).toFixed(0)}%)` : '',
  })];
}
