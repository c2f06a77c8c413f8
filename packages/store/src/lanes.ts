/**
 * Runs tasks with at most `lanes` in flight, in order of index. The list may grow while it
 * runs (a snapshot's batch that finds a file too large to read whole adds a task to stream
 * it): a lane that finds nothing left ends, and the lane whose task added more picks them up
 * when that task is done. An index is taken only when it exists — taking one past the end
 * (as `i = next++` in a loop condition did) skipped the task added next, and a snapshot then
 * failed on a file it never read.
 */
export async function runLanes(tasks: (() => Promise<unknown>)[], lanes: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) await tasks[next++]!();
  };
  await Promise.all(Array.from({ length: Math.min(lanes, tasks.length) }, lane));
}
