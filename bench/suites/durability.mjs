/**
 * The `durability` suite: what `durability: 'full'` (fdatasync before every group commit) costs
 * against 'normal', for 1 KB and 100 KB puts one at a time and 32 in flight; and recovery: the
 * time to open a store after its writer was killed with SIGKILL while its WAL held many commits.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Store } from '@kura/store';
import { textLike } from '../lib/data.mjs';
import { closedLoop } from '../lib/loop.mjs';
import { find, target } from '../lib/report.mjs';

const KiB = 1024;
const log = (msg) => process.stderr.write(`[durability] ${msg}\n`);
const STORE_ENTRY = fileURLToPath(import.meta.resolve('@kura/store'));

export async function run({ full = false } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'kura-bench-durability-'));
  const rows = [];
  try {
    for (const size of [KiB, 100 * KiB]) {
      const count = size === KiB ? (full ? 4000 : 500) : full ? 600 : 100;
      const corpus = textLike(count * size + size + 8192, 91 + size, 2048);
      const doc = (i) => corpus.subarray((i % count) * size + (i % 7), (i % count) * size + (i % 7) + size);
      for (const durability of ['normal', 'full']) {
        for (const concurrency of [1, 32]) {
          const dir = join(root, `${durability}-${size}-${concurrency}`);
          const store = await Store.init(dir, { durability });
          let n = 0;
          rows.push(
            await closedLoop(
              { family: 'durability', group: `put ${size === KiB ? '1 KB' : '100 KB'} x${concurrency}`, impl: `kura, ${durability}`, size },
              { op: () => store.put(doc(n++)), count, concurrency, bytesPerOp: size, warmup: 20 },
            ),
          );
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        }
      }
      log(`put ${size} B done`);
    }
    rows.push(await recovery(root, full));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return rows;
}

/** A writer puts small documents without pause; killed after `seconds`; then the store is opened. */
async function recovery(root, full) {
  const dir = join(root, 'recovery');
  await (await Store.init(dir)).close();
  const seconds = full ? 8 : 2;
  const script = `
    const { Store } = await import(${JSON.stringify(STORE_ENTRY)});
    const s = await Store.open(${JSON.stringify(dir)});
    let i = 0;
    const body = new TextEncoder().encode('x'.repeat(900));
    for (;;) { body[0] = i & 255; body[1] = (i >> 8) & 255; body[2] = (i >> 16) & 255; i++; await s.put(body.slice()); if (i % 1000 === 0) process.stdout.write(i + '\\n'); }
  `;
  // A file, not --eval: worker threads inherit the parent's flags, and --input-type with them.
  const file = join(root, 'writer.mjs');
  writeFileSync(file, script);
  const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'inherit'] });
  let last = 0;
  child.stdout.on('data', (d) => (last = Number(String(d).trim().split('\n').pop()) || last));
  await new Promise((r) => setTimeout(r, seconds * 1000));
  child.kill('SIGKILL');
  await new Promise((r) => child.on('close', r));
  let wal = 0;
  try {
    wal = statSync(join(dir, 'kura.db-wal')).size;
  } catch {
    /* checkpointed */
  }
  const started = performance.now();
  const store = await Store.open(dir);
  const documents = (await store.stats()).documents;
  const ms = performance.now() - started;
  await store.close();
  log(`reopened after kill -9 in ${ms.toFixed(0)} ms: ${documents} documents, WAL ${(wal / 1048576).toFixed(1)} MiB`);
  return {
    family: 'recovery', group: 'open after kill -9', impl: 'kura', name: 'open after kill -9', size: wal, opsPerSec: 1000 / ms, mbPerSec: 0,
    mean: ms, p50: ms, p95: ms, p99: ms, min: ms, max: ms, samples: 1, documents, walBytes: wal, acknowledged: last,
  };
}

export const families = {
  durability: { title: "put latency by durability: 'full' fdatasyncs packs and SQLite before each group commit (kura/peer: normal over full, ops/s)", baseline: 'kura, normal', ratioHeader: 'normal/full', ratio: (r, all) => {
    if (r.impl !== 'kura, full') return undefined;
    const n = find(all, { group: r.group, impl: 'kura, normal' });
    return n ? n.opsPerSec / r.opsPerSec : undefined;
  } },
  recovery: {
    title: 'recovery: opening a store whose writer was killed with SIGKILL mid-stream (size = WAL bytes left)',
    ratio: () => undefined,
    extra: [{ header: 'documents', value: (r) => r.documents }],
  },
};

export function targets(rows) {
  const rec = rows.find((r) => r.family === 'recovery');
  return rec ? [target('open after kill -9 < 2 s', 2000 / rec.mean, 1, { detail: `${rec.mean.toFixed(0)} ms, ${rec.documents} documents` })] : [];
}
