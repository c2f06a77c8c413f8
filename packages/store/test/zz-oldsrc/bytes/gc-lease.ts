/**
 * What lets GC run on an object store (decision 0041): a clock close to the object store's,
 * and the lease — committed through the log, so one collector runs at a time.
 */
import type { CommitLog } from '../catalog/commit-log.js';
import { StorageUnavailableError, StoreLockedError } from '../errors.js';

/** How long a lease lasts from its commit; GC renews it once half has passed. */
export const LEASE_MS = 10 * 60 * 1000;

/** How far this process's clock may be from the object store's before GC refuses to run. */
export const MAX_CLOCK_SKEW_MS = 60 * 1000;

/**
 * Refuses GC when the clock that dates its marks and drops is off the object store's: a clock
 * ahead would make every margin shorter than it says.
 */
export function requireClock(offsetMs: number | undefined): void {
  if (offsetMs === undefined || Math.abs(offsetMs) <= MAX_CLOCK_SKEW_MS) return;
  const s = Math.round(offsetMs / 1000);
  throw new StorageUnavailableError(
    `this machine's clock is ${Math.abs(s)} s ${s > 0 ? 'behind' : 'ahead of'} the object store's (more than ${MAX_CLOCK_SKEW_MS / 1000} s): GC would date its margins wrong; set the clock right (NTP) and run GC again`,
  );
}

export class GcLease {
  #renewed: number;

  private constructor(
    private readonly log: CommitLog,
    private readonly holder: string,
    at: number,
  ) {
    this.#renewed = at;
  }

  /** Takes the lease for `holder`; STORE_LOCKED while another holder's has not run out. */
  static async take(log: CommitLog, holder: string): Promise<GcLease> {
    const at = Date.now();
    await commitLease(log, holder, LEASE_MS, at);
    return new GcLease(log, holder, at);
  }

  /** Renews the lease once half of it has passed (before a commit of GC's). */
  async keep(): Promise<void> {
    const at = Date.now();
    if (at - this.#renewed < LEASE_MS / 2) return;
    await commitLease(this.log, this.holder, LEASE_MS, at);
    this.#renewed = at;
  }

  /** Lets another server run GC at once (a release that fails only leaves the lease to run out). */
  async release(): Promise<void> {
    await commitLease(this.log, this.holder, 0, Date.now()).catch(() => undefined);
  }
}

async function commitLease(log: CommitLog, holder: string, ms: number, at: number): Promise<void> {
  const [held] = await log.commitAsync([{ op: 'gc-lease', holder, ms }], at);
  if (held !== true) throw new StoreLockedError('another server is running GC on this store (it holds the GC lease): try again when it is done');
}
