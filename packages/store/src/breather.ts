/**
 * Long jobs — verify, restore, GC's compaction — await promises that are mostly settled
 * already (pack reads are synchronous in Node; SQLite always is), so on their own they never
 * give the event loop a turn: timers (a CLI's progress bar), signal handlers (Ctrl-C with a
 * bar up) and, in the HTTP server, every other request would wait for the whole job — a GET
 * waited 2.8 s behind a verify of 300 MiB. A breather yields one macrotask at most every
 * BREATHE_MS of such work, ~1% of its time.
 */
export const BREATHE_MS = 25;

/** The next macrotask: setImmediate where it exists (Node), else a zero timeout. */
export const nextTurn: (fn: () => void) => void =
  typeof setImmediate === 'function' ? (fn) => void setImmediate(fn) : (fn) => void setTimeout(fn, 0);

/** `await breathe()` in a long loop: resolves at once, or after a turn of the event loop. */
export function breather(ms = BREATHE_MS): () => Promise<void> | undefined {
  let last = performance.now();
  return () => {
    if (performance.now() - last < ms) return undefined;
    return new Promise<void>((resolve) =>
      nextTurn(() => {
        last = performance.now();
        resolve();
      }),
    );
  };
}
