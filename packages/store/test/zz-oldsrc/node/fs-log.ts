/**
 * The catalog's objects in a store directory (FORMAT.md §5): `kura-store.json`, `log/<20
 * digits>` and `checkpoints/<20 digits>`. An object is written whole to a temporary name and
 * then linked to its final name (`link(2)` fails with EEXIST when the name is taken), so a
 * crash never leaves one torn under its name and two writers never both create one name.
 * Appends to the open segment are synchronous `pwrite`s: they run inside a database
 * transaction (decision 0026).
 */
import { closeSync, existsSync, fdatasync, fdatasyncSync, fstatSync, fsyncSync, ftruncateSync, linkSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import type { LogStore, SegmentAppender, SharedSegments } from '../catalog/log-store.js';
import { storageError } from '../errors.js';

const fdatasyncAsync = promisify(fdatasync);

export const CONFIG_FILE = 'kura-store.json';
const NAME = /^[0-9]{20}$/;

function io<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw storageError(e);
  }
}

export class FsLogStore implements LogStore {
  readonly #log: string;
  readonly #checkpoints: string;
  readonly shared: SharedSegments;
  /**
   * Whether a new segment is synced (file and directory) before it is linked in: with
   * durability 'full' only (FORMAT.md §15.4); the configuration and checkpoints always are.
   */
  syncSegments = true;
  /** LogStore.checkpointAway (set by backends.ts for a writer). */
  checkpointAway?: (schema: number) => Promise<number>;

  constructor(readonly dir: string) {
    this.#log = join(dir, 'log');
    this.#checkpoints = join(dir, 'checkpoints');
    this.shared = {
      openSync: (name) => this.#appender(name),
      createSync: (name, bytes) => this.#createWhole(this.#log, name, bytes, this.syncSegments),
      existsSync: (name) => existsSync(join(this.#log, name)),
      listSync: () => this.#list(this.#log),
      readSync: (name, offset) =>
        io(() => {
          const fd = openSync(join(this.#log, name), 'r');
          try {
            const size = fstatSync(fd).size;
            const out = new Uint8Array(Math.max(0, size - offset));
            for (let at = 0; at < out.length; ) {
              const n = readSync(fd, out, at, out.length - at, offset + at);
              if (n === 0) return out.subarray(0, at);
              at += n;
            }
            return out;
          } finally {
            closeSync(fd);
          }
        }),
    };
  }

  /**
   * Writes `bytes` to a temporary file in `dir`, syncs it and links it to `name`: false if taken.
   * Synchronous: a segment is started inside a database transaction (a shared log); the other
   * objects are written rarely (the configuration once, a checkpoint per 50,000 commits).
   */
  #createWhole(dir: string, name: string, bytes: Uint8Array, sync = true): boolean {
    io(() => mkdirSync(dir, { recursive: true }));
    const tmp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      const fd = io(() => openSync(tmp, 'wx'));
      try {
        io(() => {
          for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
          if (sync) fdatasyncSync(fd);
        });
      } finally {
        closeSync(fd);
      }
      try {
        linkSync(tmp, join(dir, name));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw storageError(e);
      }
    } finally {
      rmSync(tmp, { force: true });
    }
    if (!sync) return true;
    io(() => {
      const d = openSync(dir, 'r');
      try {
        fsyncSync(d);
      } finally {
        closeSync(d);
      }
    });
    return true;
  }

  #read(path: string): Uint8Array {
    return io(() => new Uint8Array(readFileSync(path)));
  }

  #list(dir: string): string[] {
    try {
      return readdirSync(dir).filter((n) => NAME.test(n)).sort();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw storageError(e);
    }
  }

  async readConfig(): Promise<Uint8Array | undefined> {
    try {
      return new Uint8Array(readFileSync(join(this.dir, CONFIG_FILE)));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw storageError(e);
    }
  }

  async createConfig(bytes: Uint8Array): Promise<boolean> {
    return this.#createWhole(this.dir, CONFIG_FILE, bytes);
  }

  async segments(): Promise<string[]> {
    return this.#list(this.#log);
  }

  async readSegment(name: string): Promise<Uint8Array> {
    return this.#read(join(this.#log, name));
  }

  async createSegment(name: string, bytes: Uint8Array): Promise<boolean> {
    return this.#createWhole(this.#log, name, bytes, this.syncSegments);
  }

  async openAppend(name: string): Promise<SegmentAppender> {
    return this.#appender(name);
  }

  #appender(name: string): SegmentAppender {
    const fd = io(() => openSync(join(this.#log, name), 'r+'));
    let size = fstatSync(fd).size;
    let open = true;
    return {
      name,
      get size() {
        return size;
      },
      append(bytes: Uint8Array) {
        io(() => {
          for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at, size + at);
        });
        size += bytes.length;
      },
      truncate(to: number) {
        if (to >= size) return;
        io(() => ftruncateSync(fd, to));
        size = to;
      },
      refresh() {
        size = io(() => fstatSync(fd).size);
        return size;
      },
      async sync() {
        if (open) await fdatasyncAsync(fd).catch((e) => Promise.reject(storageError(e)));
      },
      async close() {
        if (!open) return;
        open = false;
        closeSync(fd);
      },
    };
  }

  async checkpoints(): Promise<string[]> {
    return this.#list(this.#checkpoints);
  }

  async readCheckpoint(name: string): Promise<Uint8Array> {
    return this.#read(join(this.#checkpoints, name));
  }

  async createCheckpoint(name: string, bytes: Uint8Array): Promise<boolean> {
    return this.#createWhole(this.#checkpoints, name, bytes);
  }
}
