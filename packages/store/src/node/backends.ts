/**
 * A store directory's backends in Node (FORMAT.md §5): kura.db through better-sqlite3 with its
 * checkpoint worker, packs and the log as files, and this process's writer registration.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import * as nodeCrypto from 'node:crypto'; // (a namespace: `hash` is missing before Node 20.12)
import { existsSync, createReadStream } from 'node:fs';
import { join } from 'node:path';
import type { StoreBackends } from '../store-types.js';
import { newWriterId } from '../catalog/commits.js';
import { LazyCheckpointer } from './checkpointer.js';
import { CONFIG_FILE, FsLogStore } from './fs-log.js';
import { writeCheckpointAway } from './checkpoint-write.js';
import { WorkerExtractor } from './extract-away.js';
import { FsPackStore } from './fs-packs.js';
import { liveWriters, registerWriter, writerAlive } from './lock.js';
import { LockTurns } from './lock-turns.js';
import { openSqlite, scratchSqlite } from './sqlite.js';
import { openSearchFile } from './search-file.js';
import { useSha256 } from '../sha256-bytes.js';
import { useIsAscii, useIsUtf8 } from '../utf8.js';

// Log frames and pack indexes hashed natively (sha256-bytes.ts): one call where Node has it
// (20.12+), without the Hash object createHash makes (a native object and a handle per frame).
const oneShot = nodeCrypto.hash as typeof nodeCrypto.hash | undefined;
useIsAscii(isAscii);
useIsUtf8(isUtf8);
useSha256(oneShot ? (bytes) => oneShot('sha256', bytes, 'buffer') : (bytes) => nodeCrypto.createHash('sha256').update(bytes).digest());

export const DB_FILE = 'kura.db';

/** A directory is a store when it has a configuration object, or a database (made before the log). */
export function isStore(root: string): boolean {
  return existsSync(join(root, CONFIG_FILE)) || existsSync(join(root, DB_FILE));
}

export async function backends(dir: string, readonly: boolean): Promise<StoreBackends> {
  const id = newWriterId();
  const lock = readonly ? undefined : registerWriter(dir, id);
  const checkpointer = readonly ? undefined : new LazyCheckpointer(join(dir, DB_FILE));
  let db: ReturnType<typeof openSqlite> | undefined;
  try {
    db = openSqlite(join(dir, DB_FILE), { readonly, onCommit: checkpointer?.onCommit, ...(lock ? { turns: new LockTurns(join(dir, 'writers'), id) } : {}) });
    const opened = db;
    checkpointer?.arm(opened);
    const log = new FsLogStore(dir);
    if (!readonly) log.checkpointAway = (schema) => writeCheckpointAway(dir, join(dir, DB_FILE), schema);
    return {
      db: opened,
      searchIndex: (ro) => openSearchFile(dir, join(dir, DB_FILE), opened, ro),
      scratchDb: scratchSqlite,
      packs: new FsPackStore(join(dir, 'packs')),
      log,
      ...(lock ? { writer: { id, alive: (other: string) => other === id || writerAlive(dir, other), others: () => liveWriters(dir).filter((w) => w !== id) } } : {}),
      ...(checkpointer ? { opened: (how: { created: boolean }) => checkpointer.opened(how) } : {}),
      release: async () => {
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
    await checkpointer?.stop();
    lock?.release();
    throw e;
  }
}

