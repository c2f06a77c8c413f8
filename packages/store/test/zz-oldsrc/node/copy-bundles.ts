/**
 * Small pack copies appended to bundle files (decision 0048). A commit of small puts on an
 * object store uploads a pack of a few KiB (decision 0044), and its cache copy (cached-packs.ts)
 * was a file of its own: creating a file cost this machine's ext4 0.3-0.6 ms of the writer's
 * thread, and its subdirectory, the first time, ~0.4 ms more — more than the puts themselves.
 * Appending the copy to an open bundle costs one `pwrite`, like a local pack append.
 *
 *   pack-copies/bundles/<16 hex digits>.bundle: copy after copy, each
 *     offset 0   magic "KPB1"
 *            4   the pack's name (16 bytes: its 32 hex digits)
 *           20   length n (u32, little-endian)
 *           24   the pack's bytes (n)
 *
 * A bundle is one unit of the cache's budget: evicted whole, least recently used first. A
 * restart walks each bundle's headers (one small read per copy) and stops at a torn tail.
 * Copies are checked like any pack bytes (records against their keys), so a damaged bundle
 * costs reads from the object store, never wrong bytes.
 */
import { closeSync, mkdirSync, openSync, readSync, readdirSync, rmSync, statSync, writevSync } from 'node:fs';
import { join } from 'node:path';
import { bytesToHex, hexToBytes, randomHex } from '../hex.js';
import { preadFully, type ReadFds } from './read-fds.js';

const MAGIC = new Uint8Array([0x4b, 0x50, 0x42, 0x31]); // "KPB1"
const HEADER = 24;
const NAME = /^[0-9a-f]{32}$/;
const BUNDLE = /^([0-9a-f]{16})\.bundle$/;

/** Where a copy is: its bundle, and its bytes' offset and length there. */
interface Place {
  bundle: string;
  offset: number;
  size: number;
}

/** A bundle found at open: its id, size and file time (the order of use a restart finds). */
export interface FoundBundle {
  id: string;
  size: number;
  at: number;
}

export class CopyBundles {
  readonly #dir: string;
  readonly #places = new Map<string, Place>();
  /** bundle id -> the pack names placed in it. */
  readonly #names = new Map<string, string[]>();
  /** The bundle appends go to, and where the next copy starts. */
  #open: { id: string; fd: number; end: number } | undefined;

  /** `max`: a bundle takes appends up to this size, then the next one begins. */
  constructor(
    dir: string,
    private readonly max: number,
  ) {
    this.#dir = dir;
  }

  /** Bundle ids are cache keys beside pack names (32 hex digits): never the same. */
  static key(id: string): string {
    return `bundle:${id}`;
  }

  path(id: string): string {
    return join(this.#dir, `${id}.bundle`);
  }

  /** The bundles an earlier run left, their copies placed; a torn tail is ignored. */
  scan(): FoundBundle[] {
    let names: string[];
    try {
      names = readdirSync(this.#dir);
    } catch {
      return [];
    }
    const found: FoundBundle[] = [];
    const head = new Uint8Array(HEADER);
    for (const file of names) {
      const id = BUNDLE.exec(file)?.[1];
      if (!id) continue;
      const path = this.path(id);
      let fd: number;
      let size: number;
      let at: number;
      try {
        fd = openSync(path, 'r');
        ({ size, mtimeMs: at } = statSync(path));
      } catch {
        continue;
      }
      try {
        for (let offset = 0; offset + HEADER <= size; ) {
          if (readSync(fd, head, 0, HEADER, offset) !== HEADER || !MAGIC.every((b, i) => head[i] === b)) break;
          const n = new DataView(head.buffer).getUint32(20, true);
          if (offset + HEADER + n > size) break; // torn: a crash during the append
          this.#place(bytesToHex(head.subarray(4, 20)), { bundle: id, offset: offset + HEADER, size: n });
          offset += HEADER + n;
        }
      } finally {
        closeSync(fd);
      }
      found.push({ id, size, at });
    }
    return found;
  }

  has(name: string): boolean {
    return this.#places.has(name);
  }

  /**
   * Appends a copy of pack `name` (32 hex digits); answers the bundle it went to and how many
   * bytes that bundle grew by. A failed write closes the bundle (its tail may be torn): the
   * next copy begins another.
   */
  append(name: string, bytes: Uint8Array): { id: string; grew: number } {
    if (!NAME.test(name)) throw new RangeError(`not a pack name: ${name}`);
    if (this.#open && this.#open.end >= this.max) this.#close();
    if (!this.#open) {
      mkdirSync(this.#dir, { recursive: true });
      const id = randomHex(8);
      this.#open = { id, fd: openSync(this.path(id), 'wx'), end: 0 };
      this.#names.set(id, []);
    }
    const open = this.#open;
    const head = new Uint8Array(HEADER);
    head.set(MAGIC, 0);
    head.set(hexToBytes(name), 4);
    new DataView(head.buffer).setUint32(20, bytes.length, true);
    try {
      let done = 0;
      const want = HEADER + bytes.length;
      while (done < want) {
        // (a short write is rare: the rest goes on where it stopped)
        const parts = done < HEADER ? [head.subarray(done), bytes] : [bytes.subarray(done - HEADER)];
        done += writevSync(open.fd, parts, open.end + done);
      }
    } catch (e) {
      this.#close();
      throw e;
    }
    this.#place(name, { bundle: open.id, offset: open.end + HEADER, size: bytes.length });
    open.end += HEADER + bytes.length;
    return { id: open.id, grew: HEADER + bytes.length };
  }

  /** Up to `length` bytes at `offset` of pack `name`'s copy; undefined when there is none here. */
  read(name: string, offset: number, length: number, fds: ReadFds): Uint8Array | undefined {
    const p = this.#places.get(name);
    if (!p) return undefined;
    if (offset >= p.size) return new Uint8Array(0);
    const key = CopyBundles.key(p.bundle);
    return preadFully(fds.get(key, this.path(p.bundle)), p.offset + offset, Math.min(length, p.size - offset));
  }

  /** The bundle holding `name`'s copy. */
  bundleOf(name: string): string | undefined {
    return this.#places.get(name)?.bundle;
  }

  /** Forgets `name`'s copy (its pack is gone); its bytes stay until their bundle goes. */
  forget(name: string): void {
    this.#places.delete(name);
  }

  /** Removes bundle `id` and forgets its copies. */
  drop(id: string): void {
    if (this.#open?.id === id) this.#close();
    for (const name of this.#names.get(id) ?? []) if (this.#places.get(name)?.bundle === id) this.#places.delete(name);
    this.#names.delete(id);
    rmSync(this.path(id), { force: true });
  }

  close(): void {
    this.#close();
  }

  #place(name: string, p: Place): void {
    this.#places.set(name, p);
    let names = this.#names.get(p.bundle);
    if (!names) this.#names.set(p.bundle, (names = []));
    names.push(name);
  }

  #close(): void {
    if (!this.#open) return;
    try {
      closeSync(this.#open.fd);
    } catch {
      // (closed already)
    }
    this.#open = undefined;
  }
}
