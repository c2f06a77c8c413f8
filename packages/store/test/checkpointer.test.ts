/** The WAL checkpoint worker: started without waiting, and what happens when it cannot run. */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCheckpointer } from '../src/node/checkpointer.js';
import { openSqlite } from '../src/node/sqlite.js';
import { newStore, reopen, tempDir } from './helpers/store.js';

const walSize = (db: string) => {
  try {
    return statSync(`${db}-wal`).size;
  } catch {
    return 0;
  }
};

/**
 * Whether every frame committed to the WAL is copied back into the database (a checkpoint has
 * caught up), read from the WAL index (SQLite's wal-index format: the header's mxFrame at
 * byte 16, the checkpoint info's nBackfill at byte 96, native byte order).
 */
const backfilled = (db: string) => {
  try {
    const shm = readFileSync(`${db}-shm`);
    return shm.length < 100 || shm.readUInt32LE(96) >= shm.readUInt32LE(16);
  } catch {
    return true;
  }
};

/** Commits ~24 MiB in 1,200 transactions of 20 KB each. */
function writeMuch(db: ReturnType<typeof openSqlite>, path: string): number {
  db.exec('CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v BLOB NOT NULL)');
  const insert = db.prepare('INSERT OR REPLACE INTO t (k, v) VALUES (?, ?)');
  const value = new Uint8Array(20_000);
  let peak = 0;
  for (let i = 0; i < 1200; i++) {
    db.transaction(() => insert.run(i % 100, value));
    if (i % 50 === 0) peak = Math.max(peak, walSize(path));
  }
  return peak;
}

describe('the checkpoint worker', () => {
  it('one that cannot open its database says so once; the writer then checkpoints itself and its WAL stays small', async () => {
    const path = join(tempDir(), 'store.db');
    const db = openSqlite(path, { manualCheckpoints: true });
    const told: Error[] = [];
    // A directory where the database should be: the worker's open fails, the writer's worked.
    const elsewhere = join(tempDir(), 'not-a-db');
    writeFileSync(elsewhere, 'not a database, and not a directory either');
    const c = startCheckpointer(join(elsewhere, 'store.db'), {
      onUnavailable: (e) => {
        told.push(e);
        db.exec('PRAGMA wal_autocheckpoint = 1000');
      },
    });
    await expect(c.ready).rejects.toThrow();
    expect(told).toHaveLength(1);
    expect(writeMuch(db, path)).toBeLessThan(12 << 20); // ~24 MiB committed; SQLite's own checkpoints every ~4 MiB
    await c.stop();
    expect(told).toHaveLength(1); // stopping is not an outage
    db.close();
  });

  it('without checkpoints at all the same writes leave the WAL large (what the test above rules out)', () => {
    const path = join(tempDir(), 'store.db');
    const db = openSqlite(path, { manualCheckpoints: true });
    expect(writeMuch(db, path)).toBeGreaterThan(20 << 20);
    db.close();
  });

  it('one that opens says so once it checkpoints, and then keeps the WAL small by itself', { timeout: 90_000 }, async () => {
    const path = join(tempDir(), 'store.db');
    const db = openSqlite(path, { manualCheckpoints: true });
    let readyCalls = 0;
    const c = startCheckpointer(path, { intervalMs: 20, onReady: () => readyCalls++, onUnavailable: () => expect.unreachable('it started') });
    await c.ready;
    expect(readyCalls).toBe(1);
    db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB NOT NULL)');
    const insert = db.prepare('INSERT OR REPLACE INTO t (k, v) VALUES (?, ?)');
    let peak = 0;
    for (let i = 0; i < 1200; i++) {
      db.transaction(() => insert.run(i % 100, new Uint8Array(20_000)));
      if (i % 100 === 0) {
        peak = Math.max(peak, walSize(path));
        // Its PASSIVE passes run between: waited for (5 s at most), not a fixed 30 ms, which a
        // loaded machine's scheduler did not always give its thread (a 19.8 MB WAL in CI).
        const until = performance.now() + 5000;
        do await new Promise((r) => setTimeout(r, 10));
        while (!backfilled(path) && performance.now() < until);
      }
    }
    expect(peak).toBeLessThan(12 << 20); // ~24 MiB committed, none of it checkpointed by this connection
    await c.stop(); // a last pass, then its connection closes
    db.close(); // the last connection: SQLite checkpoints and removes the WAL
    expect(walSize(path)).toBe(0);
    expect(readyCalls).toBe(1);
  });

  it('stops at once while still starting, and a store opened and closed in a moment keeps its data', async () => {
    const path = join(tempDir(), 'store.db');
    const c = startCheckpointer(path, { onUnavailable: () => expect.unreachable('stopping is not an outage') });
    await c.stop();
    await c.ready.catch(() => undefined);

    const { store, dir } = await newStore();
    const { digest } = await store.put(new TextEncoder().encode('written while the worker boots'));
    await store.close();
    const again = await reopen(dir);
    expect(new TextDecoder().decode(await (await again.document(digest)).bytes())).toBe('written while the worker boots');
  });
});
