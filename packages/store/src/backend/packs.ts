/**
 * The pack-file storage contract (docs/FORMAT.md §6). Implementations: memory (tests), local
 * file system (Node), later OPFS (browser) and S3-compatible object storage.
 *
 * Contract:
 * - `create(name)` makes a new, empty pack and returns its only writer. Names are unique;
 *   creating an existing name is an error.
 * - `PackWriter.append(...parts)` appends the parts, in order and contiguously, synchronously,
 *   and returns the offset the first starts at. Appended bytes are readable at once through `read`, but durable only after `sync()`
 *   resolves. `close()` ends writing (the pack is sealed from then on).
 * - A writer may gather appends in memory (files: one pwrite per 256 KiB, OPFS: one write per
 *   MiB, instead of one per record).
 *   Then `drain()` hands them to the platform synchronously: from then on they survive a crash
 *   of this process, as appends to a file in Node do at once (power loss needs `sync()`). The
 *   store drains the open pack before every metadata commit (FORMAT.md §8); `sync`, `close`,
 *   `read` and `list` see every append.
 * - `read(name, offset, length)` returns up to `length` bytes: fewer only when the pack is
 *   shorter (the caller treats that as damage); a missing pack throws `PackMissingError`.
 * - `remove(name)` deletes a pack; removing a missing pack is not an error.
 * - `list()` names every pack that exists, with its size.
 * Packs are never modified in place: sealed bytes never change.
 */
export interface PackWriter {
  readonly name: string;
  /** Bytes written so far, header included. */
  readonly size: number;
  append(...parts: Uint8Array[]): number;
  /** Writes out appends gathered in memory, if the writer gathers them. */
  drain?(): void;
  sync(): Promise<void>;
  close(): Promise<void>;
  /**
   * Ends writing without storing the pack, and answers its bytes: a small pack that travels
   * inside its commit's object instead (object stores only; decision 0044).
   */
  detach?(): Promise<Uint8Array>;
  /**
   * Ends writing after a failed write (a disk or a browser's quota full), without writing what
   * is still gathered: those bytes are dropped, the bytes written stay readable. Answers how
   * many bytes the pack holds. (Writers that gather nothing need not have it.)
   */
  abandon?(): number;
}

/** Where a pack carried by a commit lies (decision 0044): the commit's seq and the pack's offset in its log object. */
export interface CarriedPlace {
  seq: number;
  offset: number;
}

export interface PackInfo {
  name: string;
  size: number;
  /** When the object was written, by the object store's clock (object stores only: orphans' margin, decision 0041). */
  modified?: number;
}

export interface PackStore {
  create(name: string): Promise<PackWriter>;
  read(name: string, offset: number, length: number): Promise<Uint8Array>;
  remove(name: string): Promise<void>;
  list(): Promise<PackInfo[]>;
  /**
   * Reads from now on will cover most of the store (a copy, a restore): fetch each pack whole on
   * its first read, in one request, and keep it locally (object stores with a local cache).
   */
  fetchWholePacks?(on: boolean): void;
  /** The packs as the storage holds them, past any local copy or cache (what verify checks); absent: this store is that. */
  origin?(): PackStore;
  /**
   * Forgets this store's local copy of pack `name` (a cache's, which a reader found damaged):
   * its next read goes to the storage. True when there was a copy; absent: no copies.
   */
  dropCopy?(name: string): boolean;
  /**
   * Object stores: how to find the packs that commits carry (the catalog's rows, decision
   * 0044); told once, when the store opens.
   */
  locateWith?(locate: (name: string) => CarriedPlace | undefined): void;
  /** Object stores: for each carried pack, the bytes its log object holds from the pack's offset on (absent: no such object). */
  carriedSizes?(places: ReadonlyMap<string, CarriedPlace>): Promise<Map<string, number>>;
  close(): Promise<void>;
}

export class PackMissingError extends Error {
  constructor(readonly pack: string) {
    super(`pack ${pack} is missing`);
    this.name = 'PackMissingError';
  }
}
