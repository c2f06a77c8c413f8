/**
 * The catalog's objects in the browser's origin-private file system (FORMAT.md §5, §14, §15):
 * `kura-store.json`, `log/<20 digits>` and `checkpoints/<20 digits>` in the store's directory.
 * One writer per store per origin (the Web Lock), so "create only if absent" is a check and a
 * move of a fully written temporary file: a crash never leaves an object torn under its name.
 * The open segment takes appends through a sync access handle, whose writes are synchronous
 * (they run inside a database transaction); `flush()` is the durability point.
 */
import type { LogStore, SegmentAppender } from '../catalog/log-store.js';
import type { SyncHandle } from './opfs-packs.js';
import { storageError } from '../errors.js';

const CONFIG = 'kura-store.json';
const NAME = /^[0-9]{20}$/;

interface SyncFileHandle extends FileSystemFileHandle {
  createSyncAccessHandle(): Promise<SyncHandle>;
  move(name: string): Promise<void>;
}

function isNotFound(e: unknown): boolean {
  return e instanceof DOMException && (e.name === 'NotFoundError' || e.name === 'TypeMismatchError');
}

async function exists(dir: FileSystemDirectoryHandle, name: string): Promise<boolean> {
  try {
    await dir.getFileHandle(name);
    return true;
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}

async function readFile(dir: FileSystemDirectoryHandle, name: string): Promise<Uint8Array> {
  const file = await (await dir.getFileHandle(name)).getFile();
  return new Uint8Array(await file.arrayBuffer());
}

async function list(dir: FileSystemDirectoryHandle): Promise<string[]> {
  const names: string[] = [];
  for await (const name of (dir as unknown as { keys(): AsyncIterable<string> }).keys()) if (NAME.test(name)) names.push(name);
  return names.sort();
}

/** Writes `bytes` under a temporary name, then moves it to `name`: false when `name` exists. */
async function createWhole(dir: FileSystemDirectoryHandle, name: string, bytes: Uint8Array): Promise<boolean> {
  if (await exists(dir, name)) return false;
  const tmp = `.${name}.tmp`;
  const handle = (await dir.getFileHandle(tmp, { create: true })) as SyncFileHandle;
  const h = await handle.createSyncAccessHandle();
  try {
    h.truncate(0);
    h.write(bytes, { at: 0 });
    h.flush();
  } finally {
    h.close();
  }
  await handle.move(name);
  return true;
}

export class OpfsLogStore implements LogStore {
  readonly #dir: FileSystemDirectoryHandle;
  #log: FileSystemDirectoryHandle | undefined;
  #checkpoints: FileSystemDirectoryHandle | undefined;

  constructor(dir: FileSystemDirectoryHandle) {
    this.#dir = dir;
  }

  async #logDir(): Promise<FileSystemDirectoryHandle> {
    return (this.#log ??= await this.#dir.getDirectoryHandle('log', { create: true }));
  }

  async #checkpointDir(): Promise<FileSystemDirectoryHandle> {
    return (this.#checkpoints ??= await this.#dir.getDirectoryHandle('checkpoints', { create: true }));
  }

  async readConfig(): Promise<Uint8Array | undefined> {
    try {
      return await readFile(this.#dir, CONFIG);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  createConfig(bytes: Uint8Array): Promise<boolean> {
    return createWhole(this.#dir, CONFIG, bytes);
  }

  async segments(): Promise<string[]> {
    return list(await this.#logDir());
  }

  async readSegment(name: string): Promise<Uint8Array> {
    return readFile(await this.#logDir(), name);
  }

  async createSegment(name: string, bytes: Uint8Array): Promise<boolean> {
    return createWhole(await this.#logDir(), name, bytes);
  }

  async openAppend(name: string): Promise<SegmentAppender> {
    const handle = (await (await this.#logDir()).getFileHandle(name)) as SyncFileHandle;
    const h = await handle.createSyncAccessHandle();
    let size = h.getSize();
    let open = true;
    return {
      name,
      get size() {
        return size;
      },
      append(bytes: Uint8Array) {
        try {
          for (let at = 0; at < bytes.length; ) at += h.write(bytes.subarray(at), { at: size + at });
        } catch (e) {
          throw storageError(e, `log segment ${name}`); // (past the quota: STORAGE_FULL)
        }
        size += bytes.length;
      },
      truncate(to: number) {
        if (to >= size) return;
        h.truncate(to);
        size = to;
      },
      refresh() {
        size = h.getSize();
        return size;
      },
      async sync() {
        if (open) h.flush();
      },
      async close() {
        if (!open) return;
        open = false;
        h.close();
      },
    };
  }

  /**
   * Cuts log segment `segment` at `offset` (a forced rebuild, at damage inside the log), its
   * bytes from there kept beside the log as `log-cut-<segment>-<offset>` for whoever can mend
   * them (as Node's rebuild.ts cutLog); answers that file's name.
   */
  async cutSegment(segment: string, offset: number): Promise<string> {
    const kept = `log-cut-${segment}-${offset}`;
    const bytes = await this.readSegment(segment);
    if (!(await createWhole(this.#dir, kept, bytes.subarray(offset)))) throw new Error(`${kept} already exists`);
    const appender = await this.openAppend(segment);
    try {
      appender.truncate(offset);
      await appender.sync();
    } finally {
      await appender.close();
    }
    return kept;
  }

  async checkpoints(): Promise<string[]> {
    return list(await this.#checkpointDir());
  }

  async readCheckpoint(name: string): Promise<Uint8Array> {
    return readFile(await this.#checkpointDir(), name);
  }

  async createCheckpoint(name: string, bytes: Uint8Array): Promise<boolean> {
    return createWhole(await this.#checkpointDir(), name, bytes);
  }
}
