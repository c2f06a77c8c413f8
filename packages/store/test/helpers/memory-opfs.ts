/**
 * An origin-private file system in memory, as the browser's pack store (browser/opfs-packs.ts)
 * uses it: one directory of files, sync access handles that lock their file, and a quota over
 * all files' bytes past which a write throws `QuotaExceededError` and writes nothing, as
 * Chromium's does. Lets Node tests run the browser's pack store over a full disk.
 */
import type { SyncHandle } from '../../src/browser/opfs-packs.js';

interface MemoryFile {
  bytes: Uint8Array;
  length: number;
  locked: boolean;
}

const domError = (name: string, message: string) => new DOMException(message, name);

export class MemoryOpfs {
  /** Bytes all files may hold together. */
  quota = Infinity;
  readonly files = new Map<string, MemoryFile>();

  get used(): number {
    let n = 0;
    for (const f of this.files.values()) n += f.length;
    return n;
  }

  #syncHandle(name: string, file: MemoryFile): SyncHandle {
    if (file.locked) throw domError('NoModificationAllowedError', `${name} is locked by another access handle`);
    file.locked = true;
    let open = true;
    const live = () => {
      if (!open) throw domError('InvalidStateError', `the access handle of ${name} is closed`);
    };
    return {
      read: (buffer, options) => {
        live();
        const at = options?.at ?? 0;
        const n = Math.max(0, Math.min(buffer.length, file.length - at));
        buffer.set(file.bytes.subarray(at, at + n));
        return n;
      },
      write: (buffer, options) => {
        live();
        const at = options?.at ?? 0;
        const end = at + buffer.length;
        const growth = Math.max(0, end - file.length);
        if (this.used + growth > this.quota) throw domError('QuotaExceededError', 'the quota has been exceeded');
        if (end > file.bytes.length) {
          const bigger = new Uint8Array(Math.max(end, file.bytes.length * 2));
          bigger.set(file.bytes.subarray(0, file.length));
          file.bytes = bigger;
        }
        file.bytes.set(buffer, at);
        file.length = Math.max(file.length, end);
        return buffer.length;
      },
      truncate: (size) => {
        live();
        file.length = Math.min(file.length, size);
      },
      getSize: () => {
        live();
        return file.length;
      },
      flush: () => live(),
      close: () => {
        if (open) file.locked = false;
        open = false;
      },
    };
  }

  #fileHandle(name: string, file: MemoryFile) {
    return {
      kind: 'file' as const,
      name,
      createSyncAccessHandle: async () => this.#syncHandle(name, file),
      getFile: async () => {
        if (file.locked) throw domError('NoModificationAllowedError', `${name} is locked`);
        return { size: file.length };
      },
    };
  }

  /** A page reload: every access handle the old page held lets go of its file. */
  reload(): void {
    for (const f of this.files.values()) f.locked = false;
  }

  /** The directory handle the pack store is given. */
  directory(): FileSystemDirectoryHandle {
    const files = this.files;
    const self = this;
    const dir = {
      kind: 'directory',
      name: 'packs',
      async getFileHandle(name: string, options?: { create?: boolean }) {
        let file = files.get(name);
        if (!file) {
          if (!options?.create) throw domError('NotFoundError', `${name} not found`);
          file = { bytes: new Uint8Array(0), length: 0, locked: false };
          files.set(name, file);
        }
        return self.#fileHandle(name, file);
      },
      async removeEntry(name: string) {
        if (!files.has(name)) throw domError('NotFoundError', `${name} not found`);
        files.delete(name);
      },
      async *entries() {
        for (const [name, file] of [...files]) yield [name, self.#fileHandle(name, file)];
      },
    };
    return dir as unknown as FileSystemDirectoryHandle;
  }
}
