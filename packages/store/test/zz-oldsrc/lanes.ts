/**
 * Runs tasks with at most `lanes` in flight, in order of index; rejects with the first
 * failure once the tasks already running have ended, starting no others. The list may grow while it
 * runs (a snapshot's batch that finds a file too large to read whole adds a task to stream
 * it): a lane that finds nothing left ends, and the lane whose task added more picks them up
 * when that task is done. An index is taken only when it exists — taking one past the end
 * (as `i = next++` in a loop condition did) skipped the task added next, and a snapshot then
 * failed on a file it never read.
 */
export async function runLanes(tasks: (() => Promise<unknown>)[], lanes: number): Promise<void> {
  let next = 0;
  let failed: { error: unknown } | undefined;
  const lane = async () => {
    while (!failed && next < tasks.length) {
      try {
        await tasks[next++]!();
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  // After a failure no lane starts another task, and this returns only once the running ones
  // have ended: a caller that cleans up then (a snapshot releasing its workers) is not
  // followed by work it thinks is over.
  await Promise.all(Array.from({ length: Math.min(lanes, tasks.length) }, lane));
  if (failed) throw failed.error;
}
