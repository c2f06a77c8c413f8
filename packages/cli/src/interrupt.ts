/**
 * Ctrl-C and SIGTERM for a command that writes files (`restore`, `get -o`) or records
 * something (`snapshot`): the work is told (an AbortSignal), stops where it looks, and removes
 * the file it was writing (a snapshot records nothing); then the
 * process dies of the signal as if it had not caught it (a shell says 130 for Ctrl-C). Killed
 * mid-write, such a command left its temporary file behind (`.kura-restore-*`, `FILE.tmp-PID`:
 * a trial). A second signal while it stops ends the process at once.
 */

let taking = 0;

/** Whether a command here takes Ctrl-C itself (a progress bar then leaves the signal to it). */
export const signalsTaken = () => taking > 0;

/**
 * Runs `work` with Ctrl-C and SIGTERM taken: the first aborts its signal, and once it has
 * stopped, `stopped` is said (`kura: stopped (SIGINT); …`) and the process dies of the signal.
 * `atOnce`, asked as the signal comes, says that stopping the work where it is loses nothing
 * (a snapshot that has not come to its commit): then it is said and the process dies at once,
 * not after the file a worker is reading.
 */
export async function interruptible<T>(work: (signal: AbortSignal) => Promise<T>, options: { stopped?: string; atOnce?: () => boolean } = {}): Promise<T> {
  const stopped = options.stopped ?? 'the file being written was removed';
  const ac = new AbortController();
  let caught: NodeJS.Signals | undefined;
  const die = (signal: NodeJS.Signals) => {
    process.off('SIGINT', on);
    process.off('SIGTERM', on);
    process.kill(process.pid, signal);
  };
  const on = (signal: NodeJS.Signals) => {
    if (caught) return die(signal);
    caught = signal;
    if (options.atOnce?.()) {
      process.stderr.write(`kura: stopped (${signal}); ${stopped}\n`);
      return die(signal);
    }
    ac.abort(new Error(`stopped by ${signal}`));
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  taking++;
  try {
    return await work(ac.signal);
  } catch (e) {
    if (caught) {
      process.stderr.write(`kura: stopped (${caught}); ${stopped}\n`);
      die(caught);
      await new Promise<never>(() => undefined); // (the signal ends the process)
    }
    throw e;
  } finally {
    taking--;
    process.off('SIGINT', on);
    process.off('SIGTERM', on);
  }
}
