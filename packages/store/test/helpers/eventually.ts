/** Waiting in tests for what happens in the background (a watch storing a change, a server catching up). */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it holds (or `ms` pass: then its last failure is thrown); answers how long it took. */
export async function eventually(check: () => Promise<void> | void, ms = 10_000): Promise<number> {
  const start = Date.now();
  for (;;) {
    try {
      await check();
      return Date.now() - start;
    } catch (e) {
      if (Date.now() - start > ms) throw e;
      await sleep(50);
    }
  }
}
