/** Reading a small file whole through its descriptor (snapshots on this thread, ingest workers). */
import { readSync } from 'node:fs';

/**
 * The rest of an open file from its current position: one read of the `expected` bytes it is
 * believed to hold (and more, should it have grown since), ending at the read that returns 0.
 */
export function readAll(fd: number, expected: number): Uint8Array {
  let buf = Buffer.allocUnsafe(Math.max(0, expected) + 1);
  let n = 0;
  for (;;) {
    const got = readSync(fd, buf, n, buf.length - n, null);
    if (got === 0) return buf.subarray(0, n);
    n += got;
    if (n === buf.length) {
      const bigger = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(bigger);
      buf = bigger;
    }
  }
}
