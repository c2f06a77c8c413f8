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

/**
 * Background jobs (the search index's, the embeddings') start once writes pause — or once work
 * has waited this long under a steady stream of them, which never pause: then nothing was
 * indexed or embedded until a search drained it all.
 */
export const STARVED_MS = 2_000;

/** The share of the time such a job takes while writes go on (DutyCycle). */
export const BACKGROUND_SHARE = 0.1;

/** A DutyCycle's longest pause: a longer one would answer for time the work did not take. */
const PAUSE_MAX_MS = 5_000;

/**
 * Background work that must go on under a steady stream of writes, at a bounded share of the
 * time (the search index's and the embeddings' jobs, decisions 0007 and 0036): `pace` between
 * pieces of work pauses, once a slice of work is done while writes go on, so that work takes
 * `share` of the time; without writes it never pauses. `wake` ends a pause at once (a search
 * waits).
 */
export class DutyCycle {
  #since = performance.now();
  #wake: (() => void) | undefined;

  constructor(
    readonly share: number,
    /** Work (ms) between pauses: shorter slices are more timers for the same share. */
    readonly sliceMs = 5,
  ) {}

  /** Work begins (a run starts): what came before it is not work. */
  begin(): void {
    this.#since = performance.now();
  }

  /** Between two pieces of work; `writing`: writes go on now. */
  async pace(writing: boolean): Promise<void> {
    const worked = performance.now() - this.#since;
    if (!writing) {
      this.#since = performance.now(); // flat out: nothing to leave room for
      return;
    }
    if (worked < this.sliceMs) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.min(PAUSE_MAX_MS, worked * (1 / this.share - 1)));
      (timer as { unref?: () => void }).unref?.(); // (background work never keeps a process alive)
      this.#wake = done;
    });
    this.#since = performance.now();
  }

  wake(): void {
    this.#wake?.();
  }
}
