/**
 * Taking turns at `kura.db`'s write lock when several processes write one store (issue 20: a
 * writer never waits for another longer than one commit).
 *
 * SQLite gives the lock to whoever asks while it is free, and its busy handler sleeps between
 * tries (1, 2, 5, … 100 ms): a writer committing back to back took the lock again within
 * microseconds of letting it go, while the others slept. Two processes each making metadata
 * commits one after another for 3 s made 64,355 and 1; four putting 1 KB documents made
 * 1 / 1 / 7,764 / 136, and waited up to 3.9 s for one commit. So (node/sqlite.ts):
 * - while other writers have the store open, a writer asks for the lock without SQLite's busy
 *   handler and tries again every RETRY_MS itself; once a try has failed it says so,
 *   `writers/<id>.waiting` (its time renewed every RENEW_MS while it waits, removed once it has
 *   the lock);
 * - a writer about to take the lock looks for another's fresh mark, at most every CHECK_MS, and
 *   while there is one it lets GIVE_WAY_MS pass first: the one waiting tries while it is free.
 * A lone writer never waits; it lists `writers/` at most 1000 / CHECK_MS times a second.
 */
import { readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const CHECK_MS = 5;
/** How long a waiting writer sleeps between its tries for the lock. */
export const RETRY_MS = 0.25;
/** Two of a waiting writer's tries. */
export const GIVE_WAY_MS = 2 * RETRY_MS;
export const RENEW_MS = 100;
/** A mark not renewed for this long is a writer that stopped waiting (or was killed). */
export const FRESH_MS = 500;
/** A mark this old is removed by whoever meets it. */
const STALE_MS = 60_000;
const MARK = /^([0-9a-f]{16})\.waiting$/;
const LOCK = /^([0-9a-f]{16})\.lock$/;

/** What Atomics.wait sleeps on: it blocks this thread (the lock is waited for synchronously, as SQLite's busy handler did). */
const pause = new Int32Array(new SharedArrayBuffer(4));

export class LockTurns {
  readonly #dir: string;
  readonly #mark: string;
  /** When this writer's mark was last written (performance.now()); undefined: it has none. */
  #markedAt: number | undefined;
  #checkedAt = -Infinity;
  /** Whether the last look found another writer registered (`<id>.lock`). */
  #others = false;
  /** Other writers' marks found fresh by the last look (looked at again, one stat each, before each give-way). */
  #waiting: string[] = [];

  constructor(
    /** The store's `writers/` directory. */
    dir: string,
    readonly id: string,
  ) {
    this.#dir = dir;
    this.#mark = join(dir, `${id}.waiting`);
  }

  /**
   * Before asking for the lock: lets it be for a moment while another writer waits for it.
   * Answers whether other writers have the store open: alone, a writer asks as it always did
   * (SQLite's busy handler waits out the checkpointer), and spares the two PRAGMAs (~3-4 µs).
   */
  giveWay(): boolean {
    const now = performance.now();
    if (now - this.#checkedAt >= CHECK_MS) {
      this.#checkedAt = now;
      this.#look();
    } else if (this.#waiting.length) {
      this.#waiting = this.#waiting.filter((mark) => fresh(mark)); // (gone once its writer has the lock)
    }
    if (this.#waiting.length) Atomics.wait(pause, 0, 0, GIVE_WAY_MS);
    return this.#others;
  }

  /** Whether another writer had the store open at the last look (at most CHECK_MS old when a transaction began). */
  get othersOpen(): boolean {
    return this.#others;
  }

  /** Between two tries for the lock. */
  retryLater(): void {
    this.waited();
    Atomics.wait(pause, 0, 0, RETRY_MS);
  }

  /** A try for the lock failed: this writer says it waits (renewed every RENEW_MS). */
  waited(): void {
    const now = performance.now();
    if (this.#markedAt !== undefined && now - this.#markedAt < RENEW_MS) return;
    try {
      if (this.#markedAt === undefined) writeFileSync(this.#mark, '');
      else utimesSync(this.#mark, new Date(), new Date());
      this.#markedAt = now;
    } catch {
      // (a mark that cannot be written costs only fairness)
    }
  }

  /** This writer has the lock, or gave up waiting for it: its mark goes. */
  got(): void {
    if (this.#markedAt === undefined) return;
    this.#markedAt = undefined;
    remove(this.#mark);
  }

  /** Whether other writers are registered, and their fresh marks; marks left long ago are removed. */
  #look(): void {
    let names: string[];
    try {
      names = readdirSync(this.#dir);
    } catch {
      names = [];
    }
    const waiting: string[] = [];
    this.#others = false;
    for (const name of names) {
      const lock = LOCK.exec(name);
      if (lock && lock[1] !== this.id) this.#others = true;
      const m = MARK.exec(name);
      if (!m || m[1] === this.id) continue;
      const mark = join(this.#dir, name);
      const age = ageOf(mark);
      if (age < FRESH_MS) waiting.push(mark);
      else if (age > STALE_MS && age !== Infinity) remove(mark);
    }
    this.#waiting = waiting;
  }
}

/** How long ago a mark was renewed (ms); Infinity when it is gone. */
function ageOf(mark: string): number {
  try {
    return Date.now() - statSync(mark).mtimeMs;
  } catch {
    return Infinity;
  }
}

const fresh = (mark: string) => ageOf(mark) < FRESH_MS;

/** Removes a mark; one that cannot be removed (permissions, a busy file system) costs only fairness, never a write. */
function remove(mark: string): void {
  try {
    rmSync(mark, { force: true });
  } catch {
    // (left: it goes stale in FRESH_MS)
  }
}
