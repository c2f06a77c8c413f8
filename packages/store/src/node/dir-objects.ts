/**
 * Objects as files under a local directory (the ObjectStore contract, objects/object-store.ts):
 * key `a/b` is the file `<root>/a/b`. Every write goes to a temporary file in `<root>/.kura-tmp`,
 * is synced, and then takes its key's name: `link(2)` for a conditional create (it fails with
 * EEXIST when the name is taken), `rename(2)` to replace. A crash leaves the whole object or
 * none, and several processes may share the directory. `replace` (If-Match) compares and swaps
 * under a lock directory per key (mkdir is atomic; a lock left by a dead process is broken after
 * LOCK_STALE_MS). An etag is the file's inode, size and modification time in nanoseconds: every
 * write makes a new file, so it changes whenever the object does.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, mkdir, open, readdir, readFile, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { InvalidInputError, NotFoundError, storageError } from '../errors.js';
import {
  checkKey,
  checkLimit,
  checkPart,
  checkPrefix,
  checkRange,
  isNotFound,
  sameBytes,
  type ByteRange,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type UploadedPart,
} from '../objects/object-store.js';
import { concatParts } from '../objects/memory-objects.js';

const TMP = '.kura-tmp';
/**
 * Files and folders its owner's alone, as restic's (FORMAT.md §17): a key file lets whoever
 * reads it try passwords offline, and names and sizes say something of what is stored (they
 * were 644 and 755: every account on the machine could read the key files).
 */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
const LOCK_STALE_MS = 30_000;

export class DirectoryObjectStore implements ObjectStore {
  readonly location: string;

  constructor(readonly root: string) {
    this.location = root;
  }

  async get(key: string, range?: ByteRange): Promise<Uint8Array> {
    checkKey(key);
    checkRange(range);
    try {
      if (!range) return new Uint8Array(await readFile(this.#path(key)));
      const fd = await open(this.#path(key), constants.O_RDONLY);
      try {
        const size = (await fd.stat()).size;
        const out = new Uint8Array(Math.max(0, Math.min(range.length, size - range.offset)));
        for (let at = 0; at < out.length; ) {
          const { bytesRead } = await fd.read(out, at, out.length - at, range.offset + at);
          if (bytesRead === 0) return out.subarray(0, at);
          at += bytesRead;
        }
        return out;
      } finally {
        await fd.close();
      }
    } catch (e) {
      throw this.#error(e, key);
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    checkKey(key);
    try {
      return info(key, await stat(this.#path(key), { bigint: true }));
    } catch (e) {
      if (isCode(e, 'ENOENT') || isCode(e, 'ENOTDIR')) return undefined;
      throw this.#error(e, key);
    }
  }

  async put(key: string, bytes: Uint8Array): Promise<string> {
    checkKey(key);
    const tmp = await this.#staged(bytes);
    try {
      await this.#intoFolder(key, () => rename(tmp, this.#path(key)));
      await syncDir(dirname(this.#path(key)));
    } catch (e) {
      await unlink(tmp).catch(() => undefined);
      throw this.#error(e, key, true);
    }
    return (await this.head(key))!.etag;
  }

  async create(key: string, bytes: Uint8Array): Promise<boolean> {
    checkKey(key);
    const tmp = await this.#staged(bytes);
    try {
      for (;;) {
        try {
          await this.#intoFolder(key, () => link(tmp, this.#path(key)));
          await syncDir(dirname(this.#path(key)));
          return true;
        } catch (e) {
          if (!isCode(e, 'EEXIST')) throw this.#error(e, key, true);
        }
        // Taken: by the same bytes (a create tried again), by other bytes, or by a folder of
        // keys. Or it was, and is gone again (a lock let go by another process): try again.
        const held = await stat(this.#path(key)).catch((e: unknown) => {
          if (isCode(e, 'ENOENT')) return undefined;
          throw this.#error(e, key);
        });
        if (held === undefined) continue;
        if (!held.isFile()) throw clash(key);
        let current: Uint8Array;
        try {
          current = await this.get(key);
        } catch (e) {
          if (isNotFound(e)) continue;
          throw e;
        }
        return sameBytes(current, bytes);
      }
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
  }

  async replace(key: string, bytes: Uint8Array, etag: string): Promise<string | undefined> {
    checkKey(key);
    const tmp = await this.#staged(bytes);
    const release = await this.#lock(key);
    try {
      if ((await this.head(key))?.etag !== etag) return undefined;
      await rename(tmp, this.#path(key));
      await syncDir(dirname(this.#path(key)));
      return (await this.head(key))!.etag;
    } catch (e) {
      throw this.#error(e, key, true);
    } finally {
      await release();
      await unlink(tmp).catch(() => undefined);
    }
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    try {
      await unlink(this.#path(key));
    } catch (e) {
      if (isCode(e, 'ENOENT') || isCode(e, 'ENOTDIR')) return;
      throw this.#error(e, key);
    }
    // Empty folders go too: a folder left behind would stop its name becoming a key.
    for (let dir = dirname(key); dir !== '.'; dir = dirname(dir)) {
      try {
        await rmdir(join(this.root, dir));
      } catch {
        break; // not empty (or gone): the folders above it are not empty either
      }
    }
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    checkPrefix(prefix);
    const limit = checkLimit(options.limit);
    // Walk only the deepest folder the prefix names whole.
    const base = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    const keys: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      let names: import('node:fs').Dirent[];
      try {
        names = await readdir(join(this.root, dir), { withFileTypes: true });
      } catch (e) {
        if (isCode(e, 'ENOENT') || isCode(e, 'ENOTDIR')) return;
        throw this.#error(e, dir);
      }
      for (const d of names) {
        if (d.name.startsWith('.')) continue; // temporary files and locks are never objects
        const key = dir ? `${dir}/${d.name}` : d.name;
        if (d.isDirectory()) {
          if (prefix.startsWith(`${key}/`) || `${key}/`.startsWith(prefix)) await walk(key);
        } else if (d.isFile() && key.startsWith(prefix) && (options.startAfter === undefined || key > options.startAfter)) keys.push(key);
      }
    };
    await walk(base);
    keys.sort(byteOrder);
    const objects: ObjectInfo[] = [];
    for (const key of keys) {
      if (objects.length === limit) break;
      const o = await this.head(key); // (gone since the walk: skipped)
      if (o) objects.push(o);
    }
    return { objects, more: keys.length > objects.length && objects.length === limit };
  }

  async startUpload(key: string): Promise<string> {
    checkKey(key);
    const id = randomBytes(12).toString('hex');
    const dir = join(this.root, TMP, 'uploads', id);
    try {
      await mkdir(dir, { recursive: true, mode: DIR_MODE });
      await writeFile(join(dir, 'key'), key, { mode: FILE_MODE });
    } catch (e) {
      throw this.#error(e, key);
    }
    return id;
  }

  async uploadPart(key: string, uploadId: string, partNumber: number, bytes: Uint8Array): Promise<string> {
    checkKey(key);
    checkPart(partNumber);
    const dir = await this.#upload(key, uploadId);
    const tmp = await this.#staged(bytes);
    try {
      await rename(tmp, join(dir, String(partNumber)));
      return etagOf(await stat(join(dir, String(partNumber)), { bigint: true }));
    } catch (e) {
      await unlink(tmp).catch(() => undefined);
      throw this.#error(e, key);
    }
  }

  async completeUpload(key: string, uploadId: string, parts: readonly UploadedPart[], options: { ifAbsent?: boolean } = {}): Promise<string | undefined> {
    checkKey(key);
    const dir = await this.#upload(key, uploadId);
    const uploaded = new Map<number, { bytes: Uint8Array; etag: string }>();
    for (const p of parts) {
      try {
        const file = join(dir, String(p.partNumber));
        uploaded.set(p.partNumber, { bytes: new Uint8Array(await readFile(file)), etag: etagOf(await stat(file, { bigint: true })) });
      } catch (e) {
        if (!isCode(e, 'ENOENT')) throw this.#error(e, key);
      }
    }
    const bytes = concatParts(parts, (n) => uploaded.get(n));
    let etag: string | undefined;
    if (options.ifAbsent) etag = (await this.create(key, bytes)) ? (await this.head(key))?.etag : undefined;
    else etag = await this.put(key, bytes);
    await this.abortUpload(key, uploadId);
    return etag;
  }

  async abortUpload(key: string, uploadId: string): Promise<void> {
    checkKey(key);
    if (!/^[0-9a-f]{24}$/.test(uploadId)) return;
    await rm(join(this.root, TMP, 'uploads', uploadId), { recursive: true, force: true });
  }

  async close(): Promise<void> {}

  #path(key: string): string {
    return join(this.root, key);
  }

  async #mkdirFor(key: string): Promise<void> {
    if (key.includes('/')) await mkdir(dirname(this.#path(key)), { recursive: true, mode: DIR_MODE });
  }

  /**
   * Makes the key's folder, then `write`s the key into it — again when the folder was gone by
   * then: another writer's delete removes the folder it emptied (`delete`), and can do so between
   * this mkdir and this write (two processes' open probes in `probe/` did, in CI). ENOENT past a
   * few tries is the caller's to name.
   */
  async #intoFolder(key: string, write: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#mkdirFor(key); // (its own check of a folder it found can meet the folder gone)
        return await write();
      } catch (e) {
        if (!isCode(e, 'ENOENT') || !key.includes('/') || attempt >= 8) throw e;
      }
    }
  }

  /** Writes `bytes` to a new temporary file and syncs it; answers its path. */
  async #staged(bytes: Uint8Array): Promise<string> {
    const tmp = join(this.root, TMP, randomBytes(12).toString('hex'));
    try {
      await mkdir(dirname(tmp), { recursive: true, mode: DIR_MODE });
      const fd = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, FILE_MODE);
      try {
        await fd.writeFile(bytes);
        await fd.sync();
      } finally {
        await fd.close();
      }
      return tmp;
    } catch (e) {
      await unlink(tmp).catch(() => undefined);
      throw this.#error(e);
    }
  }

  async #upload(key: string, uploadId: string): Promise<string> {
    const dir = join(this.root, TMP, 'uploads', /^[0-9a-f]{24}$/.test(uploadId) ? uploadId : 'none');
    const owner = await readFile(join(dir, 'key'), 'utf8').catch(() => undefined);
    if (owner !== key) throw new NotFoundError(`no upload ${uploadId} of ${key}`);
    return dir;
  }

  /** Takes the key's lock (a directory); answers how to let it go. */
  async #lock(key: string): Promise<() => Promise<void>> {
    const dir = join(this.root, TMP, 'locks', createHash('sha256').update(key).digest('hex').slice(0, 32));
    await mkdir(dirname(dir), { recursive: true, mode: DIR_MODE });
    for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
      try {
        await mkdir(dir, DIR_MODE);
        return () => rmdir(dir).catch(() => undefined);
      } catch (e) {
        if (!isCode(e, 'EEXIST')) throw this.#error(e, key);
        const since = await stat(dir).then((s) => Date.now() - s.mtimeMs, () => 0);
        if (since > LOCK_STALE_MS) await rmdir(dir).catch(() => undefined); // its holder died
        else await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /** A file-system error as the contract's: reading, a key that is not there; writing, a key whose name a folder (or file) of other keys takes. */
  #error(e: unknown, key?: string, writing = false): unknown {
    const clashed = isCode(e, 'ENOENT') || isCode(e, 'ENOTDIR') || isCode(e, 'EISDIR') || isCode(e, 'ENOTEMPTY') || isCode(e, 'EEXIST');
    if (key !== undefined && clashed) return writing ? clash(key) : new NotFoundError(`no object ${key}`);
    return storageError(e);
  }
}

/** A key whose name a folder (or file) of other keys takes. */
function clash(key: string): InvalidInputError {
  return new InvalidInputError(`${key} clashes with other keys here (a key cannot also be the folder of keys)`, 'key');
}

function info(key: string, s: import('node:fs').BigIntStats): ObjectInfo | undefined {
  if (!s.isFile()) return undefined;
  return { key, size: Number(s.size), etag: etagOf(s), modified: Number(s.mtimeMs) };
}

function etagOf(s: import('node:fs').BigIntStats): string {
  return `"${s.ino.toString(16)}-${s.size.toString(16)}-${s.mtimeNs.toString(16)}"`;
}

/** Keys compare as S3 lists them: by their UTF-8 bytes (the key alphabet is ASCII, so by code unit). */
function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

async function syncDir(dir: string): Promise<void> {
  const fd = await open(dir, constants.O_RDONLY);
  try {
    await fd.sync();
  } finally {
    await fd.close();
  }
}

function isCode(e: unknown, code: string): boolean {
  return (e as { code?: unknown })?.code === code;
}
