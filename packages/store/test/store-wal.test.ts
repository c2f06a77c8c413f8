import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newStore } from './helpers/store.js';

describe('the WAL under sustained writes', () => {
  it('stays bounded: the checkpointer truncates it once it passes its limit', { timeout: 120_000 }, async () => {
    const { store, dir } = await newStore();
    const body = new Uint8Array(900);
    let peak = 0;
    // One put at a time: every put its own transaction, the worst case for WAL growth
    // (about 30 KB of pages each; 20,000 of them made a 650 MB WAL before the fix).
    for (let i = 0; i < 20_000; i++) {
      body[0] = i & 255;
      body[1] = (i >> 8) & 255;
      body[2] = i >> 16;
      await store.put(body);
      if (i % 500 === 0) {
        try {
          peak = Math.max(peak, statSync(join(dir, 'kura.db-wal')).size);
        } catch {
          /* truncated away */
        }
      }
    }
    expect(peak).toBeLessThan(200 * 2 ** 20);
    expect((await store.stats()).documents).toBe(20_000);
  });
});
