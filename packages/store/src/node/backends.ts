/**
 * A store directory's backends in Node (FORMAT.md §5): kura.db through better-sqlite3 with its
 * checkpoint worker, packs and the log as files, and this process's writer registration.
 */
import * as nodeCrypto from 'node:crypto'; // (a namespace: `hash` is missing before Node 20.12)
import { existsSync, createReadStream, statSync } from 'node:fs';
import { join } from 'node:path';
import type { StoreBackends } from '../store-types.js';
import { newWriterId } from '../catalog/commits.js';
import { startCheckpointer, type Checkpointer } from './checkpointer.js';
import { CONFIG_FILE, FsLogStore } from './fs-log.js';
import { writeCheckpointAway } from './checkpoint-write.js';
import { WorkerExtractor } from './extract-away.js';
import { FsPackStore } from './fs-packs.js';
import { liveWriters, registerWriter, writerAlive } from './lock.js';
import { LockTurns } from './lock-turns.js';
import { openSqlite } from './sqlite.js';
import { useSha256 } from '../sha256-bytes.js';

// Log frames and pack indexes hashed natively (sha256-bytes.ts): one call where Node has it
// (20.12+), without the Hash object createHash makes (a native object and a handle per frame).
const oneShot = nodeCrypto.hash as typeof nodeCrypto.hash | undefined;
useSha256(oneShot ? (bytes) => oneShot('sha256', bytes, 'buffer') : (bytes) => nodeCrypto.createHash('sha256').update(bytes).digest());

export const DB_FILE = 'kura.db';

/** A directory is a store when it has a configuration object, or a database (made before the log). */
export function isStore(root: string): boolean {
  return existsSync(join(root, CONFIG_FILE)) || existsSync(join(root, DB_FILE));
}

/**
 * While the worker checkpoints, SQLite's own checkpoint inside a commit stays on as a backstop,
 * past the worker's TRUNCATE limit (checkpoint-worker.ts WAL_LIMIT, 256 MiB): when the worker
 * thread lags (a busy machine: the WAL reached 450+ MiB in a test of 40,000 puts), the commit
 * that passes ~312 MiB (80,000 pages of 4 KiB) checkpoints itself and the WAL is reused from
 * its start, so it stays bounded whatever the worker's share of the CPU.
 */
const WAL_BACKSTOP_PAGES = 80_000;

/**
 * A writable store's checkpoint worker starts once the store has been open this long, or once
 * its WAL has grown past CHECKPOINTER_AFTER_WAL bytes, whichever comes first. A `kura` command
 * that writes is over in ~0.3 s and writes a few pages: booting the worker for it cost ~25-40
 * ms of CPU on the other core, and closing waited for the boot. A store taking a burst of
 * writes gets the worker well before SQLite's own first checkpoint inside a commit (at 1000
 * pages, ~4 MB), which is what the worker saves it: with a 1 MiB threshold, 100 KB puts in the
 * first 0.3 s of a new store were ~15% slower than with the worker started at open; with 256
 * KiB, alternated runs were even.
 */
const CHECKPOINTER_AFTER_MS = 250;
const CHECKPOINTER_AFTER_WAL = 256 << 10;

function walSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0; // none yet
  }
}

export async function backends(dir: string, readonly: boolean): Promise<StoreBackends> {
  const id = newWriterId();
  const lock = readonly ? undefined : registerWriter(dir, id);
  let checkpointer: Checkpointer | undefined;
  let starting: ReturnType<typeof setTimeout> | undefined;
  let startNow: (() => void) | undefined;
  const wal = join(dir, `${DB_FILE}-wal`);
  // One stat per commit (~3 µs; commits are grouped) until the worker starts.
  const onCommit = () => {
    if (startNow && walSize(wal) > CHECKPOINTER_AFTER_WAL) startNow();
  };
  let db: ReturnType<typeof openSqlite> | undefined;
  try {
    db = openSqlite(join(dir, DB_FILE), { readonly, onCommit, ...(lock ? { turns: new LockTurns(join(dir, 'writers'), id) } : {}) });
    const opened = db;
    // SQLite checkpoints inside commits (every 1000 pages, its default) until the worker does,
    // and again should the worker fail (checkpointer.ts).
    if (!readonly) {
      const autoCheckpoints = (pages: number) => () => {
        try {
          opened.exec(`PRAGMA wal_autocheckpoint = ${pages}`);
        } catch {
          // The store closed meanwhile: nothing left to checkpoint for.
        }
      };
      startNow = () => {
        clearTimeout(starting);
        startNow = undefined;
        checkpointer = startCheckpointer(join(dir, DB_FILE), { onReady: autoCheckpoints(WAL_BACKSTOP_PAGES), onUnavailable: autoCheckpoints(1000) });
      };
      starting = setTimeout(() => startNow?.(), CHECKPOINTER_AFTER_MS);
      starting.unref(); // a store left open must not keep the process alive
    }
    const log = new FsLogStore(dir);
    if (!readonly) log.checkpointAway = (schema) => writeCheckpointAway(dir, join(dir, DB_FILE), schema);
    return {
      db: opened,
      packs: new FsPackStore(join(dir, 'packs')),
      log,
      ...(lock ? { writer: { id, alive: (other: string) => other === id || writerAlive(dir, other), others: () => liveWriters(dir).filter((w) => w !== id) } } : {}),
      release: async () => {
        clearTimeout(starting);
        startNow = undefined;
        await checkpointer?.stop();
        lock?.release();
      },
      openPath: (path) => createReadStream(path, { highWaterMark: 1 << 20 }),
      ...(readonly ? {} : { extractor: new WorkerExtractor() }),
      setDurability: (d) => {
        opened.setDurability(d);
        log.syncSegments = d === 'full';
      },
    };
  } catch (e) {
    try {
      db?.close();
    } catch {
      // Closing meets the error that failed the open; the lock below is released regardless.
    }
    clearTimeout(starting);
    startNow = undefined;
    await checkpointer?.stop();
    lock?.release();
    throw e;
  }
}

