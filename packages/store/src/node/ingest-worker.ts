/** A worker thread of the Node ingest pool: reads files by path (ingest/serve.ts does the rest). */
import { closeSync, constants, createReadStream, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { readAll } from './read-all.js';
import { serveIngest } from '../ingest/serve.js';
import type { ToWorker } from '../ingest/protocol.js';

const port = parentPort!;

/** Opens a file without following a link, and only if it is a regular file (snapshots, small files of putFiles). */
function openRegular(path: string): number {
  return openRegularStat(path).fd;
}

function openRegularStat(path: string) {
  // O_NONBLOCK: a file swapped for a FIFO since the scan would block the open (and the thread)
  // until a writer came; so it opens, and fails the regular-file check below. (No effect on
  // reading a regular file.)
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  const stat = fstatSync(fd);
  if (!stat.isFile()) {
    closeSync(fd);
    throw new Error(`${path} is no longer a regular file (changed while it was being stored)`);
  }
  return { fd, stat };
}

/**
 * A regular file's pieces, and whether it changed while they were read: its size, modification
 * or change time moved between the open and the end (a file rewritten in place during a
 * snapshot was stored as bytes it never held, without a word — found in a trial).
 */
function readWatched(path: string): Iterable<Uint8Array> & { changed: boolean } {
  const { fd, stat } = openRegularStat(path);
  // Read here, not through a ReadStream: a stream given up early (a put cancelled) closes its
  // descriptor later by itself, whatever autoClose says — after this one had closed it and
  // another file had been opened under the same number (found in review).
  const out = {
    changed: false,
    *[Symbol.iterator]() {
      try {
        // One buffer for every piece (serve.ts is done with a piece when it asks for the next):
        // a fresh MiB a piece was as many bytes allocated, zeroed and faulted in as were read.
        const piece = new Uint8Array(PIECE);
        for (;;) {
          const n = readSync(fd, piece, 0, PIECE, null);
          if (n === 0) break;
          yield n === PIECE ? piece : piece.subarray(0, n);
        }
        const after = fstatSync(fd);
        out.changed = after.size !== stat.size || after.mtimeMs !== stat.mtimeMs || after.ctimeMs !== stat.ctimeMs;
      } finally {
        closeSync(fd);
      }
    },
  };
  return out;
}

/** Bytes read at a time from a file (as the ReadStream's highWaterMark was). */
const PIECE = 1 << 20;

const handle = serveIngest<string>({
  post: (m, transfer) => port.postMessage(m, transfer),
  open: (path, regularOnly) =>
    regularOnly ? readWatched(path) : createReadStream(path, { highWaterMark: 1 << 20 }),
  // Small files of a snapshot or putFiles, seen as regular files: not following a link planted
  // since. Changed while read as a large file's read says it (readWatched): a file rewritten in
  // place between its truncation and its write was read empty (a watch trial).
  readWhole: (path) => {
    const { fd, stat } = openRegularStat(path);
    try {
      const bytes = readFileSync(fd);
      const after = fstatSync(fd);
      return after.size !== stat.size || after.mtimeMs !== stat.mtimeMs || after.ctimeMs !== stat.ctimeMs || bytes.length !== stat.size ? { bytes, changed: true } : { bytes };
    } finally {
      closeSync(fd);
    }
  },
  // A first snapshot's files: the stat is its stamp and entry (taken on the open file, before
  // the read: a change after it shows as a new stamp next time).
  readWithStat: (path, max) => {
    const { fd, stat } = openRegularStat(path);
    try {
      const s = { mode: stat.mode, dev: stat.dev, ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs };
      return stat.size >= max ? { stat: s } : { bytes: readAll(fd, stat.size), stat: s };
    } finally {
      closeSync(fd);
    }
  },
});

port.on('message', (m: ToWorker<string>) => handle(m));
