/**
 * A local copy of packs in an object store (decision 0040): every pack this server uploads is
 * also written to its cache directory, and reads look there before they ask the object store
 * for a range. A server reads back what it just stored (the search index reads every text
 * document it ingests; a bulk ingest of 64 MiB of text cost ~1,000 ranged GETs without it).
 * Bounded: past `budget` bytes the least recently used packs go (the object store keeps them).
 * Packs never change once sealed, so a copy is never stale; a damaged copy is caught like any
 * damage (records are checked against their keys) and removed by the next eviction.
 */
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { mkdir, open, rename, unlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { CarriedPlace, PackInfo, PackStore, PackWriter } from '../backend/packs.js';
import { ObjectPackStore } from '../objects/object-packs.js';
import type { ObjectStore } from '../objects/object-store.js';
import { randomHex } from '../hex.js';

/** The default budget of a cache directory's pack copies. */
export const PACK_CACHE_BYTES = 2 * 1024 * 1024 * 1024;

export class CachedPackStore implements PackStore {
  readonly #inner: ObjectPackStore;
  readonly #dir: string;
  /** name -> size, least recently used first (a Map keeps insertion order). */
  readonly #copies = new Map<string, number>();
  #bytes = 0;
  #locate: ((name: string) => CarriedPlace | undefined) | undefined;
  /** Subdirectories made (or found) since this process began: one mkdir each, not one per copy. */
  readonly #made = new Set<string>();
  /** Copies being written (kept in memory until their file is in place). */
  readonly #writing = new Map<string, Uint8Array>();

  constructor(
    objects: ObjectStore,
    dir: string,
    private readonly budget = PACK_CACHE_BYTES,
  ) {
    this.#inner = new ObjectPackStore(objects, (name, bytes) => this.#keep(name, bytes));
    this.#dir = dir;
    mkdirSync(dir, { recursive: true });
    // What an earlier run left, oldest first.
    const found: { name: string; size: number; at: number }[] = [];
    for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      const m = /^([0-9a-f]{32})\.pack$/.exec(e.name);
      if (!e.isFile() || !m) continue;
      const s = statSync(join(e.parentPath ?? dir, e.name));
      found.push({ name: m[1]!, size: s.size, at: s.mtimeMs });
    }
    for (const f of found.sort((a, b) => a.at - b.at)) this.#add(f.name, f.size);
  }

  create(name: string): Promise<PackWriter> {
    return this.#inner.create(name); // (its upload keeps a copy here: #keep)
  }

  /** The packs as the bucket holds them, past the copies here and the read windows (verify). */
  origin(): PackStore {
    const origin = new ObjectPackStore(this.#inner.objects);
    if (this.#locate) origin.locateWith(this.#locate);
    return origin;
  }

  locateWith(locate: (name: string) => CarriedPlace | undefined): void {
    this.#locate = locate;
    this.#inner.locateWith(locate);
  }

  carriedSizes(places: ReadonlyMap<string, CarriedPlace>): Promise<Map<string, number>> {
    return this.#inner.carriedSizes(places);
  }

  async read(name: string, offset: number, length: number): Promise<Uint8Array> {
    const writing = this.#writing.get(name);
    if (writing) return writing.slice(offset, offset + length);
    const size = this.#copies.get(name);
    if (size !== undefined) {
      try {
        const fd = await open(this.#path(name), 'r');
        try {
          const out = new Uint8Array(Math.max(0, Math.min(length, size - offset)));
          for (let at = 0; at < out.length; ) {
            const { bytesRead } = await fd.read(out, at, out.length - at, offset + at);
            if (bytesRead === 0) return out.subarray(0, at);
            at += bytesRead;
          }
          this.#touch(name, size);
          return out;
        } finally {
          await fd.close();
        }
      } catch {
        this.#drop(name); // gone meanwhile: the object store has it
      }
    }
    return this.#inner.read(name, offset, length);
  }

  async remove(name: string): Promise<void> {
    await this.#inner.remove(name);
    this.#drop(name);
    await unlink(this.#path(name)).catch(() => undefined);
  }

  list(): Promise<PackInfo[]> {
    return this.#inner.list();
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  #path(name: string): string {
    return join(this.#dir, name.slice(0, 2), `${name}.pack`);
  }

  /** Keeps a copy of a pack: readable from memory at once, from its file once written. */
  async #keep(name: string, bytes: Uint8Array): Promise<void> {
    this.#writing.set(name, bytes);
    try {
      const path = this.#path(name);
      const sub = dirname(path);
      if (!this.#made.has(sub)) {
        await mkdir(sub, { recursive: true });
        this.#made.add(sub);
      }
      const tmp = `${path}.${randomHex(6)}.tmp`;
      await writeFile(tmp, bytes);
      await rename(tmp, path);
      this.#add(name, bytes.length);
    } finally {
      this.#writing.delete(name);
    }
    await this.#evict();
  }

  #add(name: string, size: number): void {
    this.#drop(name);
    this.#copies.set(name, size);
    this.#bytes += size;
  }

  #touch(name: string, size: number): void {
    this.#copies.delete(name);
    this.#copies.set(name, size);
    void utimes(this.#path(name), new Date(), new Date()).catch(() => undefined); // (the order survives a restart)
  }

  #drop(name: string): void {
    const size = this.#copies.get(name);
    if (size === undefined) return;
    this.#copies.delete(name);
    this.#bytes -= size;
  }

  async #evict(): Promise<void> {
    for (const [name] of this.#copies) {
      if (this.#bytes <= this.budget) return;
      this.#drop(name);
      await unlink(this.#path(name)).catch(() => undefined);
    }
  }
}
