import { trace } from './measure.mjs';

/**
 * Closed-loop throughput for asynchronous operations (store puts, gets): `concurrency` loops
 * each await one op and start the next, until `count` ops are done. Unlike a tinybench task,
 * ops may overlap, which is how a store's group commit is meant to be used. Reports the same
 * row shape as measure.mjs; latencies are per op, including time queued behind others.
 */
export async function closedLoop(meta, { op, count, concurrency = 1, bytesPerOp = 0, warmup = Math.min(50, count) }) {
  const wall = performance.now();
  for (let i = 0; i < warmup; i++) await op(-1 - i);
  const latencies = new Float64Array(count);
  const ms = await runOps(op, 0, count, concurrency, latencies);
  trace(`${meta.group} ${meta.impl} x${concurrency}`, wall);
  return rowOf(meta, latencies, ms / 1000, { concurrency, bytesPerOp });
}

/**
 * Two closed loops measured in turns: each warms up, then their ops run in `rounds` blocks,
 * one side's block after the other's, and each row sums its side's blocks. A figure that is
 * only meaningful as a ratio to a floor (Kura's metadata updates against SQLite alone) then
 * has both sides measured in the same seconds: run one after the other, the machine's speed,
 * which moves 1.5-2x within minutes here, moved the ratio 0.4-0.95x between runs of one build.
 * Answers one row per side, in closedLoop's shape.
 */
export async function interleavedLoops(sides, rounds) {
  const wall = performance.now();
  for (const { loop } of sides) {
    const warmup = loop.warmup ?? Math.min(50, loop.count);
    for (let i = 0; i < warmup; i++) await loop.op(-1 - i);
  }
  const latencies = sides.map(({ loop }) => new Float64Array(loop.count));
  const ms = sides.map(() => 0);
  for (let r = 0; r < rounds; r++) {
    for (const [s, { loop }] of sides.entries()) {
      const from = Math.floor((loop.count * r) / rounds);
      const to = Math.floor((loop.count * (r + 1)) / rounds);
      ms[s] += await runOps(loop.op, from, to, loop.concurrency ?? 1, latencies[s]);
    }
  }
  trace(`${sides.map(({ meta }) => `${meta.group} ${meta.impl}`).join(' / ')}, interleaved`, wall);
  return sides.map(({ meta, loop }, s) => rowOf(meta, latencies[s], ms[s] / 1000, { concurrency: loop.concurrency ?? 1, bytesPerOp: loop.bytesPerOp ?? 0 }));
}

/** Ops `from`..`to` (exclusive) by `concurrency` loops, each op's latency into `latencies`; the ms taken. */
async function runOps(op, from, to, concurrency, latencies) {
  let next = from;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < to; i = next++) {
        const t = performance.now();
        await op(i);
        latencies[i] = performance.now() - t;
      }
    }),
  );
  return performance.now() - started;
}

/** A result row from per-op latencies (sorted here) and the seconds the timed ops took. */
function rowOf(meta, latencies, seconds, { concurrency, bytesPerOp }) {
  const count = latencies.length;
  latencies.sort();
  const q = (p) => latencies[Math.min(count - 1, Math.floor(p * (count - 1)))];
  const opsPerSec = count / seconds;
  return {
    name: `${meta.group} ${meta.impl}`,
    ...meta,
    size: meta.size ?? bytesPerOp,
    bytes: bytesPerOp,
    opsPerSec,
    mbPerSec: (bytesPerOp * opsPerSec) / 1e6,
    mean: latencies.reduce((a, b) => a + b, 0) / count,
    p50: q(0.5),
    p95: q(0.95),
    p99: q(0.99),
    min: latencies[0],
    max: latencies[count - 1],
    samples: count,
    concurrency,
  };
}
