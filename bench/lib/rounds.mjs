/**
 * Figures taken in rounds, for suites that time one whole run of a tool at a time (a bulk
 * ingest, a backup) and compare two tools in turns: on this machine a single run of either
 * moves by 1.5x now and then, so each figure is the median of its rounds.
 */

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values) {
  const v = [...values].sort((a, b) => a - b);
  return v.length % 2 ? v[v.length >> 1] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}

/** The children's CPU seconds (user + system) from the second line bash's `times` prints. */
export function childCpuSeconds(times) {
  const m = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s\s*$/.exec(times.trim().split('\n').at(-1) ?? '');
  return m ? Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4]) : undefined;
}

/**
 * Runs `a` and `b` in turns, `rounds` times each, swapping which goes first every round (the
 * one that runs second meets the page cache, the server and the CPU the first left behind).
 * Returns each side's results in round order.
 */
export async function inTurns(rounds, a, b) {
  const out = { a: [], b: [] };
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      out.a.push(await a(round));
      out.b.push(await b(round));
    } else {
      out.b.push(await b(round));
      out.a.push(await a(round));
    }
  }
  return out;
}
