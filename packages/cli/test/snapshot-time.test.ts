/** `kura snapshot --time`: the forms restic's `backup --time` takes, and ISO 8601. */
import { describe, expect, it } from 'vitest';
import { snapshotTime } from '../src/commands/snapshot.js';

describe('snapshot --time', () => {
  it('takes "2006-01-02 15:04:05" and a date alone in local time, and ISO 8601', () => {
    expect(snapshotTime('2024-01-03 10:20:30').getTime()).toBe(new Date(2024, 0, 3, 10, 20, 30).getTime());
    expect(snapshotTime('2024-01-03').getTime()).toBe(new Date(2024, 0, 3).getTime());
    expect(snapshotTime('2024-01-03T10:20:30Z').toISOString()).toBe('2024-01-03T10:20:30.000Z');
  });

  it('refuses what is not a time, and days a month does not have', () => {
    for (const bad of ['2024-02-30', '2024-13-01', 'yesterday', '2024-01-03 10:20', '']) expect(() => snapshotTime(bad)).toThrow(/--time takes/);
  });
});
