/**
 * The ingest floor of the snapshot and store suites: the work any store must do to take in a
 * set of files here, and nothing else — in one worker per core read each file whole, SHA-256
 * it, chunk, BLAKE3 and zstd it with Kura's kernel; on the main thread append the frames to
 * one pack file and insert a row per chunk and per document (the store's own tables), up to
 * 256 files per transaction; fsync once at the end. No tree objects, stamps, dedup lookups,
 * holds, metadata or per-batch durability. What it reaches on a machine bounds what the store
 * can: docs/findings/first-snapshot-cpu-budget.md.
 */
import { closeSync, fsyncSync, openSync, readdirSync, writeSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';

const BATCH = 256;

function walk(dir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile()) out.push(p);
  }
  return out;
}

const hexBytes = (bytes, at) => Buffer.from(Buffer.from(bytes.buffer, bytes.byteOffset + at, 64).toString('latin1'), 'hex');

/** Workers that have run the kernel once (a store's pool is warm by its 10,000-file run too). */
export async function startFloor({ level = 3, workers = availableParallelism() } = {}) {
  const pool = Array.from({ length: workers }, () => new Worker(new URL('./ingest-floor-worker.mjs', import.meta.url), { workerData: { level } }));
  const errors = new Promise((_, reject) => pool.forEach((w) => w.once('error', reject)));
  return {
    /**
     * Stores the files under `src` (a directory, walked) or the files listed in `src` (an
     * array of paths) into `dir` (made empty by the caller); returns the files stored.
     */
    async run(src, dir) {
      const db = new Database(join(dir, 'meta.db'));
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.exec(`CREATE TABLE chunks (key BLOB PRIMARY KEY, pack_id INTEGER NOT NULL, offset INTEGER NOT NULL, raw_len INTEGER NOT NULL, stored_len INTEGER NOT NULL, codec INTEGER NOT NULL, refs INTEGER NOT NULL) STRICT, WITHOUT ROWID;
        CREATE TABLE documents (id INTEGER PRIMARY KEY AUTOINCREMENT, digest BLOB NOT NULL UNIQUE, size INTEGER NOT NULL, chunk_count INTEGER NOT NULL, manifest BLOB NOT NULL, created_at INTEGER NOT NULL) STRICT;`);
      const addChunk = db.prepare('INSERT OR IGNORE INTO chunks VALUES (?, 1, ?, ?, ?, ?, 1)');
      const addDocument = db.prepare('INSERT OR IGNORE INTO documents (digest, size, chunk_count, manifest, created_at) VALUES (?, ?, ?, ?, ?)');
      const pack = openSync(join(dir, 'pack'), 'w');
      let packAt = 0;
      const store = db.transaction((bytes) => {
        const dv = new DataView(bytes.buffer);
        const count = dv.getUint32(0, true);
        let at = 4;
        for (let i = 0; i < count; i++) {
          const digest = hexBytes(bytes, at);
          const size = dv.getFloat64(at + 64, true);
          const n = dv.getUint32(at + 72, true);
          at += 76;
          const keys = [];
          for (let c = 0; c < n; c++) {
            const key = hexBytes(bytes, at);
            const stored = dv.getUint32(at + 69, true);
            packAt += writeSync(pack, bytes, at + 73, stored);
            addChunk.run(key, packAt - stored, dv.getUint32(at + 64, true), stored, bytes[at + 68]);
            keys.push(key);
            at += 73 + stored;
          }
          addDocument.run(digest, size, n, Buffer.concat(keys), Date.now());
        }
        return count;
      });
      try {
        const files = Array.isArray(src) ? src : walk(src);
        let next = 0;
        let stored = 0;
        await Promise.race([
          errors,
          new Promise((resolve) => {
            // Up to BATCH files a message, and at least 4 messages per worker (a few large files).
            const batch = Math.max(1, Math.min(BATCH, Math.ceil(files.length / (4 * pool.length))));
            const send = (w) => {
              if (next * batch < files.length) w.postMessage({ id: next, paths: files.slice(next * batch, ++next * batch) });
            };
            for (const w of pool) {
              w.removeAllListeners('message');
              w.on('message', ({ packed }) => {
                stored += store(new Uint8Array(packed));
                if (stored === files.length) resolve();
                else send(w);
              });
              send(w);
              send(w); // two in flight per worker: it reads the next batch while its answer is stored
            }
            if (files.length === 0) resolve();
          }),
        ]);
        fsyncSync(pack);
        return stored;
      } finally {
        closeSync(pack);
        db.close();
      }
    },
    close: () => Promise.all(pool.map((w) => w.terminate())),
  };
}
