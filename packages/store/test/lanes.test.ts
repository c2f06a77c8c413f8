import { describe, expect, it } from 'vitest';
import { runLanes } from '../src/lanes.js';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('runLanes', () => {
  it('runs a task added after the other lanes ran out of work (a snapshot file found too large in its batch)', async () => {
    const ran: string[] = [];
    const tasks: (() => Promise<unknown>)[] = [
      async () => {
        await tick(30); // the other lane finishes B and finds nothing left meanwhile
        tasks.push(async () => void ran.push('C'));
        ran.push('A');
      },
      async () => void ran.push('B'),
    ];
    await runLanes(tasks, 2);
    expect(ran.sort()).toEqual(['A', 'B', 'C']);
  });

  it('keeps at most `lanes` tasks in flight and runs each once, in order of start', async () => {
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    const tasks = Array.from({ length: 40 }, (_, i) => async () => {
      started.push(i);
      most = Math.max(most, ++inFlight);
      await tick(i % 3);
      inFlight--;
    });
    await runLanes(tasks, 4);
    expect(most).toBe(4);
    expect(started).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it('after a failure starts no other task, and rejects only once the running ones have ended', async () => {
    const started: number[] = [];
    let running = 0;
    const tasks = Array.from({ length: 20 }, (_, i) => async () => {
      started.push(i);
      running++;
      try {
        if (i === 1) throw new Error('boom');
        await tick(20);
      } finally {
        running--;
      }
    });
    await expect(runLanes(tasks, 3)).rejects.toThrow('boom');
    expect(running).toBe(0); // nothing still running when the caller hears of the failure
    expect(started).toEqual([0, 1, 2]); // the lane that failed took nothing more; nor did the others
    await expect(runLanes([], 3)).resolves.toBeUndefined();
  });
});
