/**
 * One figure = one tinybench 6 Bench with one task, run synchronously (no await inside the
 * timed window), with a time budget so a whole suite has a predictable duration.
 *
 * Field names come from tinybench 6's own types (dist/index.d.ts): `task.result.state`,
 * `task.result.latency` is a `Statistics` in milliseconds with `mean`, `min`, `max`, `p50`,
 * `p75`, `p99`, `p995`, `p999`, `rme`, `samplesCount` and, when `retainSamples` is on, the
 * ascending `samples`. tinybench has no p95, so it is taken here from the retained samples.
 */
import { Bench } from 'tinybench';

/** Per-task budgets. Minimum iterations are low so a 10 MiB op on a slow peer stays cheap. */
const BUDGETS = {
  quick: { time: 60, warmupTime: 15, iterations: 3, warmupIterations: 1 },
  full: { time: 1500, warmupTime: 400, iterations: 10, warmupIterations: 3 },
};
let budget = BUDGETS.quick;

export function setMode(full) {
  budget = full ? BUDGETS.full : BUDGETS.quick;
}

/**
 * Ops under this many bytes run in batches, one sample per batch: a 1 KiB hash takes ~1 µs,
 * the same order as reading the clock, so one call per sample would mostly time the timer.
 * p50/p95/p99 of a batched figure are then percentiles of batch means (recorded in `batch`).
 */
const BATCH_BYTES = 64 * 1024;

/**
 * Measures `fn` (one op over `bytesPerOp` input bytes). `meta` = { family, group, impl, size,
 * peer, extra, async, budgetScale }: where the figure goes in the report; `budgetScale` shrinks
 * the time budget of a family with many figures (zstd) in quick runs; `async` for a promise-returning
 * fn (never batched, so it carries one await per sample). A peer that throws is reported as
 * unavailable; Kura (peer false) throwing is a crash, as it should be.
 * Latencies are in ms; MB/s is decimal (10^6 bytes) per second of mean op time.
 */
export async function measure(name, fn, bytesPerOp, meta = {}) {
  const { family, group, impl, size = bytesPerOp, peer = false, extra = {}, async = false, budgetScale = 1 } = meta;
  const base = { name, family, group, impl, size };
  const small = !async && bytesPerOp > 0 && bytesPerOp < BATCH_BYTES;
  const batch = small ? Math.ceil(BATCH_BYTES / bytesPerOp) : 1;
  const task = batch === 1 ? fn : batched(fn, batch);
  const times = { time: budget.time * budgetScale, warmupTime: budget.warmupTime * budgetScale };
  const bench = new Bench({ name, ...budget, ...times, retainSamples: true, throws: true, timestampProvider: 'hrtimeNow' });
  bench.add(name, task, { async });
  let result;
  const wall = performance.now();
  try {
    // Sync tasks run with runSync: no promise or microtask turn inside the timed window.
    if (async) await bench.run();
    else bench.runSync();
    result = bench.tasks[0].result;
    if (result.state === 'errored') throw result.error;
    if (result.state !== 'completed') throw new Error(`tinybench task ended as ${result.state}`);
  } catch (error) {
    if (!peer) throw error;
    return { ...base, unavailable: `failed while measured: ${error.message}` };
  }
  trace(name, wall);
  const l = result.latency;
  return {
    ...base,
    bytes: bytesPerOp,
    opsPerSec: 1000 / l.mean,
    mbPerSec: bytesPerOp / 1e6 / (l.mean / 1000),
    mean: l.mean,
    p50: l.p50,
    p95: quantile(l.samples, 0.95),
    p99: l.p99,
    min: l.min,
    max: l.max,
    rme: l.rme,
    samples: l.samplesCount,
    batch,
    ...extra,
  };
}

/**
 * KURA_BENCH_TRACE=1 prints each figure's wall time (setup excluded) on stderr: the way to find
 * what to trim when the quick run grows past its budget.
 */
export function trace(name, startedMs) {
  if (process.env.KURA_BENCH_TRACE) process.stderr.write(`  [trace] ${((performance.now() - startedMs) / 1000).toFixed(1)} s  ${name}\n`);
}

/** Runs fn `n` times per sample; tinybench records the mean per call and charges the whole. */
function batched(fn, n) {
  return () => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    return { overriddenDuration: ms / n, overriddenIterationCost: ms };
  };
}

/** Linear interpolation between closest ranks, as tinybench computes p50/p99. */
function quantile(sorted, q) {
  if (!sorted || sorted.length === 0) return NaN;
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (at - lo) * (sorted[hi] - sorted[lo]);
}

/** A result row for a peer that could not be loaded or did not agree with Kura. */
export function unavailable(meta, reason) {
  const { family, group, impl, size } = meta;
  return { name: `${group} ${impl}`, family, group, impl, size, unavailable: reason };
}
