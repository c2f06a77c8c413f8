/**
 * Read descriptors of pack files, kept open between reads and closed oldest first past a bound.
 * Reads of packs are small (one chunk record) and many: an open, a read and a close through
 * the async API are three hops to the thread pool per record — the search index reading back a
 * 64 MiB bulk ingest (4,096 records) waited ~150 ms on them — where a kept descriptor and a
 * synchronous pread cost a few microseconds.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** Open read descriptors kept per pack store. */
export const READ_FDS = 64;

export class ReadFds {
  /** name -> descriptor, oldest first (a Map keeps insertion order). */
  readonly #fds = new Map<string, number>();

  constructor(private readonly max = READ_FDS) {}

  /** The descriptor of `name`'s file at `path`, opened if it is not (openSync's errors as they are). */
  get(name: string, path: string): number {
    let fd = this.#fds.get(name);
    if (fd !== undefined) return fd;
    fd = openSync(path, 'r');
    if (this.#fds.size >= this.max) {
      const [oldName, oldFd] = this.#fds.entries().next().value!;
      this.#fds.delete(oldName);
      closeSync(oldFd);
    }
    this.#fds.set(name, fd);
    return fd;
  }

  /** Closes `name`'s descriptor, if one is open (its file is going). */
  drop(name: string): void {
    const fd = this.#fds.get(name);
    if (fd === undefined) return;
    this.#fds.delete(name);
    closeSync(fd);
  }

  closeAll(): void {
    for (const fd of this.#fds.values()) closeSync(fd);
    this.#fds.clear();
  }
}

/** Reads up to `length` bytes at `offset` of `fd`: fewer only where the file ends. */
export function preadFully(fd: number, offset: number, length: number): Uint8Array {
  const buf = new Uint8Array(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, offset + got);
    if (n === 0) break;
    got += n;
  }
  return got === length ? buf : buf.subarray(0, got);
}
