/**
 * A local copy of packs in an object store (decision 0040): every pack this server uploads is
 * also written to its cache directory, and reads look there before they ask the object store
 * for a range. A server reads back what it just stored (the search index reads every text
 * document it ingests; a bulk ingest of 64 MiB of text cost ~1,000 ranged GETs without it).
 * Bounded: past `budget` bytes the least recently used packs go (the object store keeps them).
 * Packs never change once sealed, so a copy is never stale; a damaged copy is caught like any
 * damage (records are checked against their keys), dropped, and the pack read from the object
 * store instead (read.ts): damage in this cache is never reported as the store's.
 */
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { mkdir, rename, unlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { CarriedPlace, PackInfo, PackStore, PackWriter } from '../backend/packs.js';
import { ObjectPackStore } from '../bytes/object-packs.js';
import type { ObjectStore } from '../objects/object-store.js';
import { randomHex } from '../hex.js';
import { ReadFds, preadFully } from './read-fds.js';
import { CopyBundles } from './copy-bundles.js';

/** The default budget of a cache directory's pack copies. */
export const PACK_CACHE_BYTES = 2 * 1024 * 1024 * 1024;

/**
 * A copy's file time (the order of use a restart finds) is moved on at most this often: a
 * utimes per read was a thread-pool hop per chunk record read.
 */
const TOUCH_MS = 60_000;

/**
 * Copies up to this size are appended to a bundle, synchronously (copy-bundles.ts, decision
 * 0048): a commit's carried pack is at most CARRY_MAX.
 */
const BUNDLED_MAX = 256 * 1024;

/** A bundle takes copies up to this size (a budget's sixteenth, when that is less): the unit of eviction. */
const BUNDLE_BYTES = 32 * 1024 * 1024;

export class CachedPackStore implements PackStore {
  readonly #inner: ObjectPackStore;
  readonly #dir: string;
  /**
   * Pack name (a copy's own file) or bundle key (CopyBundles.key) -> size and when its file
   * time was last set, least recently used first (a Map keeps insertion order).
   */
  readonly #copies = new Map<string, { size: number; touched: number }>();
  readonly #bundles: CopyBundles;
  readonly #fds = new ReadFds();
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
    this.#bundles = new CopyBundles(join(dir, 'bundles'), Math.max(1 << 20, Math.min(BUNDLE_BYTES, Math.floor(budget / 16))));
    // What an earlier run left, oldest first.
    const found: { name: string; size: number; at: number }[] = [];
    for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      const m = /^([0-9a-f]{32})\.pack$/.exec(e.name);
      if (!e.isFile() || !m) continue;
      const s = statSync(join(e.parentPath ?? dir, e.name));
      found.push({ name: m[1]!, size: s.size, at: s.mtimeMs });
    }
    for (const b of this.#bundles.scan()) found.push({ name: CopyBundles.key(b.id), size: b.size, at: b.at });
    for (const f of found.sort((a, b) => a.at - b.at)) this.#add(f.name, f.size, f.at);
  }

  create(name: string): Promise<PackWriter> {
    return this.#inner.create(name); // (its upload keeps a copy here: #keep)
  }

  /** Fetch each pack whole on its first read and keep it here (ObjectPackStore.wholePacks): for reads that cover most of the store. */
  fetchWholePacks(on: boolean): void {
    this.#inner.wholePacks = on;
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
    if (this.#copies.has(name)) {
      try {
        // Synchronous, like FsPackStore's reads (read-fds.ts).
        const out = preadFully(this.#fds.get(name, this.#path(name)), offset, length);
        this.#touch(name);
        return out;
      } catch {
        this.#drop(name); // gone meanwhile: the object store has it
      }
    }
    const bundle = this.#bundles.bundleOf(name);
    if (bundle !== undefined) {
      try {
        const out = this.#bundles.read(name, offset, length, this.#fds)!;
        this.#touch(CopyBundles.key(bundle));
        return out;
      } catch {
        this.#drop(CopyBundles.key(bundle)); // gone meanwhile: the object store has its copies
        this.#bundles.drop(bundle);
      }
    }
    return this.#inner.read(name, offset, length);
  }

  async remove(name: string): Promise<void> {
    await this.#inner.remove(name);
    this.#bundles.forget(name);
    if (!this.#copies.has(name)) return;
    this.#drop(name);
    await unlink(this.#path(name)).catch(() => undefined);
  }

  dropCopy(name: string): boolean {
    if (this.#copies.has(name)) {
      this.#drop(name);
      void unlink(this.#path(name)).catch(() => undefined);
      return true;
    }
    if (!this.#bundles.has(name)) return false;
    this.#bundles.forget(name); // (its bytes go with their bundle)
    return true;
  }

  list(): Promise<PackInfo[]> {
    return this.#inner.list();
  }

  close(): Promise<void> {
    this.#fds.closeAll();
    this.#bundles.close();
    return this.#inner.close();
  }

  #path(name: string): string {
    return join(this.#dir, name.slice(0, 2), `${name}.pack`);
  }

  /** Keeps a copy of a pack: readable from memory at once, from its file once written. */
  async #keep(name: string, bytes: Uint8Array): Promise<void> {
    if (bytes.length <= BUNDLED_MAX) {
      const { id, grew } = this.#bundles.append(name, bytes);
      const key = CopyBundles.key(id);
      const unit = this.#copies.get(key);
      if (unit) {
        this.#copies.delete(key); // (now the most recently used)
        this.#copies.set(key, unit);
        unit.size += grew;
        this.#bytes += grew;
      } else this.#add(key, grew, Date.now());
      return this.#evict();
    }
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
      this.#add(name, bytes.length, Date.now());
    } finally {
      this.#writing.delete(name);
    }
    await this.#evict();
  }

  #add(name: string, size: number, touched: number): void {
    this.#drop(name);
    this.#copies.set(name, { size, touched });
    this.#bytes += size;
  }

  #touch(name: string): void {
    const copy = this.#copies.get(name)!;
    this.#copies.delete(name);
    this.#copies.set(name, copy);
    const now = Date.now();
    if (now - copy.touched < TOUCH_MS) return;
    copy.touched = now;
    const path = name.startsWith('bundle:') ? this.#bundles.path(name.slice(7)) : this.#path(name);
    void utimes(path, new Date(now), new Date(now)).catch(() => undefined); // (the order survives a restart)
  }

  #drop(name: string): void {
    const copy = this.#copies.get(name);
    if (copy === undefined) return;
    this.#copies.delete(name);
    this.#bytes -= copy.size;
    this.#fds.drop(name);
  }

  async #evict(): Promise<void> {
    for (const [name] of this.#copies) {
      if (this.#bytes <= this.budget) return;
      this.#drop(name);
      if (name.startsWith('bundle:')) this.#bundles.drop(name.slice(7));
      else await unlink(this.#path(name)).catch(() => undefined);
    }
  }
}
