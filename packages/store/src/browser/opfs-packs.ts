/**
 * Packs as files in the browser's origin-private file system (FORMAT.md §5, §14), one file
 * per pack in a directory the store owns. Runs in a dedicated worker: appends and reads use
 * FileSystemSyncAccessHandle, whose read/write are synchronous — the PackWriter contract
 * needs synchronous appends — and whose flush() is the durability point.
 *
 * A sync access handle locks its file exclusively, so a file is opened once and its handle
 * shared by the writer and all reads; a bounded number stay open (oldest closed first).
 */
import { GatheredAppends, drainAll } from '../backend/gathered-appends.js';
import { PackMissingError, type PackInfo, type PackStore, type PackWriter } from '../backend/packs.js';
import { storageError } from '../errors.js';

/** The parts of FileSystemSyncAccessHandle used here (lib.webworker; not in lib.dom). */
export interface SyncHandle {
  read(buffer: Uint8Array, options?: { at?: number }): number;
  write(buffer: Uint8Array, options?: { at?: number }): number;
  truncate(size: number): void;
  getSize(): number;
  flush(): void;
  close(): void;
}

interface SyncFileHandle extends FileSystemFileHandle {
  createSyncAccessHandle(): Promise<SyncHandle>;
}

/** Handles kept open for reads (each holds its file's lock until closed). */
const OPEN_HANDLES = 48;

/**
 * Appends are gathered up to this many bytes and written in one call: each write on a sync
 * access handle costs ~70 µs here whatever its size, which at one write per 16 KiB record
 * capped pack writes at ~200 MB/s (decision 0014).
 */
const WRITE_BUFFER = 1 << 20;

function isNotFound(e: unknown): boolean {
  return e instanceof DOMException && (e.name === 'NotFoundError' || e.name === 'TypeMismatchError');
}

export class OpfsPackStore implements PackStore {
  readonly #dir: FileSystemDirectoryHandle;
  /** Open handles by pack name, least recently used first (Map keeps insertion order). */
  readonly #handles = new Map<string, SyncHandle>();
  /** Opens in flight, so two reads of one pack never race for its lock. */
  readonly #opening = new Map<string, Promise<SyncHandle>>();
  /** Packs being written: never evicted from the cache. */
  readonly #writing = new Set<string>();
  /** Per pack being written, the function that writes out its gathered appends. */
  readonly #drains = new Map<string, () => void>();

  constructor(dir: FileSystemDirectoryHandle) {
    this.#dir = dir;
  }

  async #handle(name: string, create = false): Promise<SyncHandle> {
    const open = this.#handles.get(name);
    if (open) {
      this.#handles.delete(name); // move to the back: most recently used
      this.#handles.set(name, open);
      return open;
    }
    let opening = this.#opening.get(name);
    if (!opening) {
      opening = (async () => {
        let file: SyncFileHandle;
        try {
          file = (await this.#dir.getFileHandle(`${name}.pack`, { create })) as SyncFileHandle;
        } catch (e) {
          if (isNotFound(e)) throw new PackMissingError(name);
          throw e;
        }
        const h = await file.createSyncAccessHandle();
        this.#handles.set(name, h);
        this.#evict();
        return h;
      })().finally(() => this.#opening.delete(name));
      this.#opening.set(name, opening);
    }
    return opening;
  }

  #evict(): void {
    for (const [name, h] of this.#handles) {
      if (this.#handles.size <= OPEN_HANDLES) return;
      if (this.#writing.has(name)) continue;
      this.#handles.delete(name);
      h.close();
    }
  }

  async create(name: string): Promise<PackWriter> {
    const exists = await this.#dir.getFileHandle(`${name}.pack`).then(
      () => true,
      (e) => {
        if (isNotFound(e)) return false;
        throw e;
      },
    );
    if (exists) throw new Error(`pack ${name} exists`);
    this.#writing.add(name);
    let h: SyncHandle;
    try {
      h = await this.#handle(name, true);
    } catch (e) {
      this.#writing.delete(name);
      throw e;
    }
    let open = true;
    const writing = this.#writing;
    const drains = this.#drains;
    const appends = new GatheredAppends(WRITE_BUFFER, (parts, position) => {
      for (const p of parts) {
        for (let done = 0; done < p.length; ) {
          let n: number;
          try {
            n = h.write(p.subarray(done), { at: position + done });
          } catch (e) {
            throw storageError(e, `pack ${name}`); // (past the quota: STORAGE_FULL)
          }
          if (n <= 0) throw new Error(`pack ${name}: short write`);
          done += n;
        }
        position += p.length;
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
      async sync() {
        if (!open) return;
        drain();
        h.flush();
      },
      async close() {
        if (!open) return;
        drain();
        open = false;
        drains.delete(name);
        h.flush();
        writing.delete(name); // the handle stays cached for reads until evicted
      },
      abandon() {
        if (!open) return appends.size;
        open = false;
        drains.delete(name);
        writing.delete(name); // (no flush: what is written stays readable through the handle)
        return appends.discard();
      },
    };
  }

  async read(name: string, offset: number, length: number): Promise<Uint8Array> {
    this.#drains.get(name)?.(); // appended bytes are readable at once (the contract)
    const h = await this.#handle(name);
    const size = h.getSize();
    const end = Math.min(offset + length, size);
    const out = new Uint8Array(Math.max(0, end - offset));
    let done = 0;
    while (done < out.length) {
      const n = h.read(out.subarray(done), { at: offset + done });
      if (n <= 0) break;
      done += n;
    }
    return done === out.length ? out : out.subarray(0, done);
  }

  async remove(name: string): Promise<void> {
    this.#drains.delete(name);
    const h = this.#handles.get(name);
    if (h) {
      this.#handles.delete(name);
      h.close();
    }
    await this.#dir.removeEntry(`${name}.pack`).catch((e) => {
      if (!isNotFound(e)) throw e;
    });
  }

  async list(): Promise<PackInfo[]> {
    this.#drains.forEach((drain) => drain()); // sizes on disk include every append
    const out: PackInfo[] = [];
    // entries() is missing from lib.dom's FileSystemDirectoryHandle typing.
    const entries = (this.#dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries();
    for await (const [file, handle] of entries) {
      if (handle.kind !== 'file' || !file.endsWith('.pack')) continue;
      const name = file.slice(0, -'.pack'.length);
      const open = this.#handles.get(name);
      // getFile() fails while a sync handle holds the file; the handle knows the size then.
      const size = open ? open.getSize() : (await (handle as FileSystemFileHandle).getFile()).size;
      out.push({ name, size });
    }
    return out;
  }

  async close(): Promise<void> {
    // Every handle lets go of its file even when a drain or a flush fails (then the first
    // failure is thrown): a handle left open locks its pack until the page is reloaded.
    let failed = drainAll(this.#drains.values());
    this.#drains.clear();
    for (const h of this.#handles.values()) {
      try {
        h.flush();
      } catch (e) {
        failed ??= { e };
      } finally {
        h.close();
      }
    }
    this.#handles.clear();
    this.#writing.clear();
    if (failed) throw failed.e;
  }
}
