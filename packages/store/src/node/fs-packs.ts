/**
 * Packs as files under <store>/packs/<aa>/<name>.pack (FORMAT.md §5). Appends and reads use
 * synchronous positioned I/O: they are small (one chunk record) and the thread-pool hop of the
 * async API would cost more than the I/O. fdatasync is asynchronous, so a flush never blocks
 * the event loop.
 */
import { closeSync, fdatasync, fsync, mkdirSync, openSync, readdirSync, rmSync, statSync, writevSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PackMissingError, type PackInfo, type PackStore, type PackWriter } from '../backend/packs.js';
import { GatheredAppends, drainAll } from '../backend/gathered-appends.js';
import { storageError } from '../errors.js';
import { ReadFds, preadFully } from './read-fds.js';

const fdatasyncAsync = promisify(fdatasync);
const fsyncAsync = promisify(fsync);

/** Runs file I/O, turning EIO / ENOSPC / EDQUOT into IO_ERROR / STORAGE_FULL (errors.ts). */
function io<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw storageError(e);
  }
}

const rethrow = (e: unknown): never => {
  throw storageError(e);
};

/**
 * Appends are gathered up to this many bytes and written with one pwrite: a write per
 * record cost ~10 µs of the main thread, a fifth of a 1 KB put (decision 0017). They are
 * written before every metadata commit (PackWriter.drain), so kill -9 loses none that a
 * committed row points at.
 */
const WRITE_BUFFER = 256 * 1024;

export class FsPackStore implements PackStore {
  readonly #readFds = new ReadFds();
  /** Per pack being written, the function that writes out its gathered appends. */
  readonly #drains = new Map<string, () => void>();

  constructor(readonly dir: string) {}

  path(name: string): string {
    return join(this.dir, name.slice(0, 2), `${name}.pack`);
  }

  async create(name: string): Promise<PackWriter> {
    const sub = join(this.dir, name.slice(0, 2));
    const fd = io(() => {
      mkdirSync(sub, { recursive: true });
      return openSync(this.path(name), 'wx');
    });
    // The new directory entry must survive a crash too.
    await syncDir(sub).catch(rethrow);
    let open = true;
    const drains = this.#drains;
    // One writev per call: a large record goes out uncopied, header and payload together.
    const appends = new GatheredAppends(WRITE_BUFFER, (parts, position) => {
      let pending = parts.filter((p) => p.length > 0);
      while (pending.length) {
        let n = io(() => writevSync(fd, pending, position));
        position += n;
        while (pending.length && n >= pending[0]!.length) n -= pending.shift()!.length;
        if (n > 0) pending[0] = pending[0]!.subarray(n);
      }
    });
    const drain = () => appends.drain();
    drains.set(name, drain);
    return {
      name,
      get size() {
        return appends.size;
      },
      append(...parts) {
        if (!open) throw new Error(`pack ${name} is closed`);
        return appends.append(parts);
      },
      drain() {
        if (open) drain();
      },
      sync: async () => {
        if (open) drain();
        await fdatasyncAsync(fd).catch(rethrow);
      },
      async close() {
        if (open) {
          drain();
          open = false;
          drains.delete(name);
          io(() => closeSync(fd));
        }
      },
      abandon() {
        if (!open) return appends.size;
        open = false;
        drains.delete(name);
        const written = appends.discard();
        try {
          closeSync(fd);
        } catch {
          // Given up already: reads use their own descriptors (ReadFds).
        }
        return written;
      },
    };
  }

  async read(name: string, offset: number, length: number): Promise<Uint8Array> {
    this.#drains.get(name)?.(); // appended bytes are readable at once (the contract)
    const fd = this.readFd(name);
    return io(() => preadFully(fd, offset, length));
  }

  private readFd(name: string): number {
    try {
      return this.#readFds.get(name, this.path(name));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new PackMissingError(name);
      throw storageError(e);
    }
  }

  async remove(name: string): Promise<void> {
    this.#drains.delete(name);
    this.#readFds.drop(name);
    io(() => rmSync(this.path(name), { force: true }));
  }

  async list(): Promise<PackInfo[]> {
    this.#drains.forEach((drain) => drain()); // sizes on disk include every append
    const out: PackInfo[] = [];
    let subs: string[];
    try {
      subs = readdirSync(this.dir);
    } catch {
      return out;
    }
    for (const sub of subs) {
      if (!/^[0-9a-f]{2}$/.test(sub)) continue;
      for (const f of readdirSync(join(this.dir, sub))) {
        const m = /^([0-9a-f]{32})\.pack$/.exec(f);
        if (!m) continue;
        let size: number;
        try {
          size = statSync(join(this.dir, sub, f)).size;
        } catch (e) {
          // Removed since the directory was read (another writer's GC): not listed.
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
          throw e;
        }
        out.push({ name: m[1]!, size });
      }
    }
    return out;
  }

  async close(): Promise<void> {
    // Every descriptor is closed even when a drain fails (then its failure is thrown).
    const failed = drainAll(this.#drains.values());
    this.#drains.clear();
    this.#readFds.closeAll();
    if (failed) throw failed.e;
  }
}

export async function syncDir(dir: string): Promise<void> {
  const fd = openSync(dir, 'r');
  try {
    await fsyncAsync(fd);
  } finally {
    closeSync(fd);
  }
}
