/**
 * Taking turns at the log when several servers commit at once (decision 0040's amendment of
 * 2026-11-27).
 *
 * A server whose create lost its seq must read the commit that took it before it can try the
 * next seq, so the server that won stays a round trip ahead for as long as it has commits to
 * make: under a steady stream of metadata commits one server made 1,821 commits in 3 s while
 * another's one commit waited all that time. The winner never loses a race, so it never learns
 * that anyone is waiting. So:
 * - a server whose commit lost its seq says so in the bucket, `waiting/<writer>` (put again
 *   every MARK_REFRESH_MS while it keeps losing, deleted once its publish has ended);
 * - a server committing back to back (its previous commit ended less than BACK_TO_BACK_MS
 *   before) looks for other writers' marks at most every CHECK_MS (one LIST);
 * - a server that has seen another's commit or mark within CONTENDED_MS lets a random moment of
 *   up to four of its creates' durations pass before each commit's first attempt, while one that
 *   has just lost goes again at once (it must read the commit it lost to first). Separate
 *   server processes on versitygw, each committing without pause for 3 s: with up to two
 *   creates and a mark after two losses, 4 servers made 98 / 14 / 39 / 15 and 6 / 9 / 74 / 95
 *   commits (waits to 2 s); as built 30 / 45 / 48 / 23 and 35 / 42 / 31 / 26 (waits to 0.9 s).
 * A lone writer never waits; committing back to back it lists `waiting/` 1000 / CHECK_MS times
 * a second, and not at all otherwise (a bulk ingest commits about once a second).
 */

/** What the log's storage keeps of writers waiting for a seq (catalog/object-log.ts). */
export interface WaitingMarks {
  markWaiting(writer: string): Promise<void>;
  clearWaiting(writer: string): Promise<void>;
  /** Whether a writer other than `writer` marked itself waiting within the last `freshMs` (by the storage's clock). */
  othersWaiting(writer: string, freshMs: number): Promise<boolean>;
}

export const CONTENDED_MS = 2_000;
export const BACK_TO_BACK_MS = 50;
export const CHECK_MS = 100;
export const MARK_REFRESH_MS = 1_000;
/** A mark older than this is a writer that stopped waiting (or stopped): not counted. */
export const MARK_FRESH_MS = 5_000;

export class TurnTaking {
  /** When this server last saw another writer's commit or mark (Date.now()). */
  #othersAt = -Infinity;
  /** How long this server's creates take, a moving average (ms): what a yield is measured in. */
  #createMs = 0;
  /** When this server's last commit was created (Date.now()). */
  #committedAt = -Infinity;
  #checkedAt = -Infinity;
  /** When this server last put its mark; undefined: it has none. */
  #markedAt: number | undefined;
  /** A look for others' marks on its way. */
  #looking: Promise<void> | undefined;
  /** The last mark or clear sent (awaited by `settled`). */
  #sent: Promise<void> = Promise.resolve();

  constructor(
    private readonly writer: string,
    private readonly marks: WaitingMarks | undefined,
  ) {}

  /** Before a commit's first attempt: looks for marks when due, then gives way when others are about. */
  async beforeFirstAttempt(): Promise<void> {
    const now = Date.now();
    const marks = this.marks;
    if (marks && now - this.#committedAt < BACK_TO_BACK_MS && now - this.#checkedAt >= CHECK_MS && !this.#looking) {
      // The look goes beside the commits, not before this one: its answer decides the ones that
      // follow. Awaited, its LIST (~2 ms on versitygw, against ~4-8 for a create) held up a
      // lone server's commit every CHECK_MS for nothing.
      this.#checkedAt = now;
      this.#looking = marks
        .othersWaiting(this.writer, MARK_FRESH_MS)
        .then((waiting) => {
          if (waiting) this.#othersAt = Date.now();
        })
        .catch(() => undefined) // (a look that failed is one not taken: the next is due later)
        .finally(() => (this.#looking = undefined));
    }
    if (Date.now() - this.#othersAt < CONTENDED_MS && this.#createMs > 0) {
      await new Promise((r) => setTimeout(r, Math.random() * 4 * this.#createMs));
    }
  }

  /** This server's create answered after `ms`: `won` its seq, or lost it to another writer. */
  created(ms: number, won: boolean): void {
    this.#createMs = this.#createMs ? 0.8 * this.#createMs + 0.2 * ms : ms;
    if (won) {
      this.#committedAt = Date.now();
      if (this.#markedAt !== undefined) {
        this.#markedAt = undefined;
        this.#send((m) => m.clearWaiting(this.writer));
      }
      return;
    }
    this.#othersAt = Date.now();
    if (this.#markedAt === undefined || Date.now() - this.#markedAt >= MARK_REFRESH_MS) {
      this.#markedAt = Date.now();
      this.#send((m) => m.markWaiting(this.writer));
    }
  }

  /** A publish ended, won or not (refused, failed): a mark still standing goes. */
  finished(): void {
    if (this.#markedAt === undefined) return;
    this.#markedAt = undefined;
    this.#send((m) => m.clearWaiting(this.writer));
  }

  /** A catch-up applied other writers' commits. */
  othersCommitted(): void {
    this.#othersAt = Date.now();
  }

  /** Resolves once the marks, clears and looks sent so far have answered (with `finished`, a closing server leaves no mark behind, and no request on its way). */
  settled(): Promise<void> {
    return Promise.all([this.#sent, this.#looking]).then(() => undefined);
  }

  /** Sends a mark or a clear in order after the previous one, never holding up a commit; a failure only costs fairness. */
  #send(request: (marks: WaitingMarks) => Promise<void>): void {
    const marks = this.marks;
    if (!marks) return;
    this.#sent = this.#sent.then(() => request(marks)).catch(() => undefined);
  }
}
