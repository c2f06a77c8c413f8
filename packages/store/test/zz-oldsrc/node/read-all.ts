/** Reading a small file whole through its descriptor (snapshots on this thread, ingest workers). */
import { readSync } from 'node:fs';

/**
 * The rest of an open file from its current position: one read of the `expected` bytes it is
 * believed to hold (and more, should it have grown since), ending at end of file.
 *
 * End of file is a read that returns 0 — or, to save that second read per file, a read that
 * returned less than it was asked for once at least `expected` bytes are in: a regular file
 * reads short only at its end. Anything else (the file shrank, or a filesystem that reads
 * short: FUSE, network) goes on until a read returns 0.
 */
export function readAll(fd: number, expected: number): Uint8Array {
  let buf = Buffer.allocUnsafe(Math.max(0, expected) + 1);
  let n = 0;
  for (;;) {
    const asked = buf.length - n;
    const got = readSync(fd, buf, n, asked, null);
    if (got === 0) return buf.subarray(0, n);
    n += got;
    if (got < asked && n >= expected) return buf.subarray(0, n);
    if (n === buf.length) {
      const bigger = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(bigger);
      buf = bigger;
    }
  }
}
