/**
 * The `watch` suite (decision 0059; issue 49's figures): a store kept by `store.watch` over a
 * folder of real files (@parcel/watcher on inotify), in this process:
 * - change to searchable: a file written with a word of its own, until keyword search finds it
 *   (p50/p99 over the samples; target p99 < 2 s);
 * - bursts of 1,000 and 10,000 small files: from the first write to the last stored, beside
 *   writing them and `putFiles` (what `kura add` runs) into another store, in the same run
 *   (target for 1,000: >= 0.8x its speed; the watch waits 500 ms for each path to settle);
 * - the watcher's CPU at rest over a tree of 100,000 files (quick: 20,000), once caught up
 *   (target < 1% of a core).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '@kura/store';
import { target } from '../lib/report.mjs';

const log = (msg) => process.stderr.write(`[watch] ${msg}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (a, p) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(p * a.length))];

async function until(check, ms = 60_000) {
  const start = performance.now();
  while (!(await check())) {
    if (performance.now() - start > ms) throw new Error('timed out');
    await sleep(5);
  }
  return performance.now() - start;
}

async function watched(root, name) {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const store = await Store.init(join(root, `${name}-store`));
  const events = { stored: 0 };
  const w = store.watch(dir, { onEvent: (e) => e.type === 'stored' && events.stored++ });
  await w.ready;
  return { dir, store, w, events };
}

export async function run({ full = false } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'kura-bench-watch-'));
  const rows = [];
  try {
    // Change to searchable, one file at a time.
    {
      const { dir, store, w } = await watched(root, 'latency');
      const samples = [];
      for (let i = 0; i < (full ? 100 : 30); i++) {
        const word = `marker${i}x${Math.random().toString(36).slice(2, 8)}`;
        const t0 = performance.now();
        writeFileSync(join(dir, `note-${i}.md`), `a note about ${word}\n`);
        await until(async () => (await store.search(word, { mode: 'keyword', limit: 1 })).length === 1);
        samples.push(performance.now() - t0);
      }
      await w.close();
      await store.close();
      rows.push({ family: 'watch', group: 'change to searchable (one file, keyword search)', impl: 'kura watch', size: 0, p50: pct(samples, 0.5), p99: pct(samples, 0.99), samples: samples.length });
      log(`change to searchable: p50 ${pct(samples, 0.5).toFixed(0)} ms, p99 ${pct(samples, 0.99).toFixed(0)} ms`);
    }
    // Bursts of 1,000 and 10,000 files, against putFiles of the same files.
    for (const count of [1000, 10_000]) {
      const { dir, store, w, events } = await watched(root, `burst${count}`);
      const files = [];
      const t0 = performance.now();
      for (let d = 0; d < count / 100; d++) {
        mkdirSync(join(dir, `d${d}`));
        for (let f = 0; f < 100; f++) {
          const path = join(dir, `d${d}`, `f${f}.txt`);
          writeFileSync(path, `burst file ${d}/${f} ${'x'.repeat(200)}\n`);
          files.push(path);
        }
      }
      const written = performance.now() - t0;
      await until(() => events.stored >= count);
      const watchMs = performance.now() - t0;
      await w.close();
      await store.close();
      const add = await Store.init(join(root, `add-store${count}`));
      const a0 = performance.now();
      for await (const o of add.putFiles(files.map((path) => ({ path })))) if (o.error) throw o.error;
      const addMs = performance.now() - a0 + written; // the files written, then added
      await add.close();
      const group = `burst of ${count.toLocaleString('en')} small files`;
      rows.push({ family: 'watch', group, impl: 'kura watch (first write to last stored)', size: 0, ms: watchMs, opsPerSec: count / (watchMs / 1000), count });
      rows.push({ family: 'watch', group, impl: 'write, then kura add (putFiles)', size: 0, ms: addMs, opsPerSec: count / (addMs / 1000), count });
      log(`burst of ${count}: watch ${watchMs.toFixed(0)} ms, write + add ${addMs.toFixed(0)} ms`);
    }
    // CPU at rest over a large tree.
    {
      const n = full ? 100_000 : 20_000;
      const dir = join(root, 'tree');
      for (let d = 0; d < n / 100; d++) {
        mkdirSync(join(dir, `g${d % 50}`, `d${d}`), { recursive: true });
        for (let f = 0; f < 100; f++) writeFileSync(join(dir, `g${d % 50}`, `d${d}`, `f${f}.txt`), `${d}/${f}`);
      }
      const store = await Store.init(join(root, 'tree-store'));
      // This process's CPU over a quiet window, after what came before has settled (the index
      // brought up to date, the collector's work after a catch-up of many files done).
      const atRest = async () => {
        await store.indexStatus({ wait: true });
        await sleep(3000);
        const cpu0 = process.cpuUsage();
        const w0 = performance.now();
        await sleep(full ? 10_000 : 5_000);
        const cpu = process.cpuUsage(cpu0);
        return (cpu.user + cpu.system) / 1000 / (performance.now() - w0);
      };
      const floor = await atRest(); // the open store alone: its own timers
      const t0 = performance.now();
      const w = store.watch(dir);
      await w.ready;
      const readyMs = performance.now() - t0;
      const busy = await atRest();
      await w.close();
      await store.close();
      const group = `at rest over ${n.toLocaleString('en')} files`;
      rows.push({ family: 'watch', group, impl: 'the open store alone (the floor)', size: 0, idleCpu: floor });
      rows.push({ family: 'watch', group, impl: 'kura watch', size: 0, idleCpu: busy, readyMs });
      log(`${n} files: caught up in ${(readyMs / 1000).toFixed(1)} s, at rest ${(busy * 100).toFixed(2)}% of a core (the store alone ${(floor * 100).toFixed(2)}%)`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return rows;
}

export const families = {
  watch: {
    title: 'kura watch over real files (@parcel/watcher): change to searchable, a burst, CPU at rest',
    ratio: () => undefined,
    extra: [
      { header: 'ms', value: (r) => r.ms?.toFixed(0) },
      { header: 'caught up', value: (r) => r.readyMs && `${(r.readyMs / 1000).toFixed(1)} s` },
      { header: 'CPU at rest', value: (r) => (r.idleCpu === undefined ? '' : `${(r.idleCpu * 100).toFixed(2)}%`) },
    ],
  },
};

export function targets(rows) {
  const latency = rows.find((r) => r.group.startsWith('change to searchable'));
  const burst = rows.find((r) => r.impl.startsWith('kura watch') && r.count === 1000);
  const add = rows.find((r) => r.impl.startsWith('write, then') && r.count === 1000);
  const big = rows.find((r) => r.impl.startsWith('kura watch') && r.count === 10_000);
  const bigAdd = rows.find((r) => r.impl.startsWith('write, then') && r.count === 10_000);
  const rest = rows.find((r) => r.idleCpu !== undefined && r.impl === 'kura watch');
  const floor = rows.find((r) => r.idleCpu !== undefined && r.impl !== 'kura watch');
  return [
    target('watch: change to searchable p99 < 2 s (one file)', latency ? 2000 / latency.p99 : undefined, 1, { detail: latency ? `p50 ${latency.p50.toFixed(0)} ms, p99 ${latency.p99.toFixed(0)} ms` : '' }),
    target('watch: a burst of 1,000 files at >= 0.8x kura add', burst && add ? add.ms / burst.ms / 0.8 : undefined, 1, { detail: burst && add ? `watch ${burst.ms.toFixed(0)} ms, write + add ${add.ms.toFixed(0)} ms (= ${(add.ms / burst.ms).toFixed(2)}x)` : '' }),
    target('watch: a burst of 10,000 files at >= 0.8x kura add (no target of its own: the settle amortised)', big && bigAdd ? bigAdd.ms / big.ms / 0.8 : undefined, 1, { detail: big && bigAdd ? `watch ${big.ms.toFixed(0)} ms, write + add ${bigAdd.ms.toFixed(0)} ms (= ${(bigAdd.ms / big.ms).toFixed(2)}x)` : '' }),
    target('watch: at rest < 1% of a core', rest ? 0.01 / Math.max(rest.idleCpu, 1e-6) : undefined, 1, { detail: rest ? `${(rest.idleCpu * 100).toFixed(2)}% over ${rest.group.replace('at rest over ', '')} (the open store alone: ${floor ? (floor.idleCpu * 100).toFixed(2) : '?'}%)` : '' }),
  ];
}
