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
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count; i = next++) {
        const t = performance.now();
        await op(i);
        latencies[i] = performance.now() - t;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  trace(`${meta.group} ${meta.impl} x${concurrency}`, wall);
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
