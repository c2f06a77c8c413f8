/**
 * Where the catalog's truth lives (FORMAT.md §5, §15): the store's configuration object, the
 * log's segments and the checkpoints, beside the packs. Implementations: memory (tests and
 * stores that live as long as the process), a local directory (node/fs-log.ts), the browser's
 * origin-private file system (browser/opfs-log.ts); an object store later (issue 21).
 *
 * Contract:
 * - Objects are created only if their name is free (`create*` answers false when it is taken)
 *   and never appear torn under their final name: a crash leaves the whole object or none.
 * - `segments()` and `checkpoints()` list names in ascending order (names are zero-padded, so
 *   lexicographic order is numeric order).
 * - A segment may be reopened for appends (`openAppend`): `append` writes synchronously — it
 *   runs inside a database transaction — and the bytes survive a crash of this process as soon
 *   as it returns (power loss needs `sync()`); `truncate` cuts a frame a failed transaction
 *   appended. Readers treat a segment as a run of frames and stop at the first that is not
 *   intact, so an append torn by a crash is never read as a commit.
 */
import type { Sealing } from '../encryption/sealing.js';
export interface SegmentAppender {
  readonly name: string;
  /** Bytes in the segment as this appender last saw it, its own appends included. */
  readonly size: number;
  append(bytes: Uint8Array): void;
  truncate(size: number): void;
  /** Reads the segment's size again (other processes append to it too: SharedSegments). */
  refresh(): number;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Synchronous access to the segments, for writers that share one log through one database
 * (several processes on a local directory, decision 0026): a writer catches up with the log,
 * appends and starts segments inside the database's write transaction, which is synchronous.
 * A store without it (the browser's: one writer per origin) rotates segments between commits.
 */
export interface SharedSegments {
  openSync(name: string): SegmentAppender;
  /** Creates a segment whole holding `bytes`; false when the name is taken. */
  createSync(name: string, bytes: Uint8Array): boolean;
  existsSync(name: string): boolean;
  /** Segment names in ascending order. */
  listSync(): string[];
  /** The segment's bytes from `offset` to its end. */
  readSync(name: string, offset: number): Uint8Array;
}

export interface LogStore {
  /** An encrypted store's sealed forms (FORMAT.md §17): commit bodies, checkpoints and the configuration are sealed. */
  readonly sealing?: Sealing;
  /** The configuration object (`kura-store.json`), or undefined when there is none. */
  readConfig(): Promise<Uint8Array | undefined>;
  /** Creates the configuration object; false when one exists (it is never replaced). */
  createConfig(bytes: Uint8Array): Promise<boolean>;
  segments(): Promise<string[]>;
  readSegment(name: string): Promise<Uint8Array>;
  /**
   * How many segments a reader of the log may fetch at once (default 1): an object store's hold
   * one commit each, fetched a round trip apiece — one at a time, a new server replaying 1,500
   * commits through a faulty proxy took over 10 s.
   */
  readonly readAhead?: number;
  createSegment(name: string, bytes: Uint8Array): Promise<boolean>;
  openAppend(name: string): Promise<SegmentAppender>;
  checkpoints(): Promise<string[]>;
  readCheckpoint(name: string): Promise<Uint8Array>;
  createCheckpoint(name: string, bytes: Uint8Array): Promise<boolean>;
  /**
   * Where the platform can: writes a checkpoint of the committed catalog on another thread
   * (its own connection, one read transaction) and answers its seq (node/checkpoint-write.ts).
   */
  checkpointAway?: (schema: number) => Promise<number>;
  /** Present where several writers may share the log (local directories, memory). */
  readonly shared?: SharedSegments;
}

/** Bytes that grow in place (a segment open for appends). */
class Growable {
  bytes = new Uint8Array(256);
  length = 0;
  append(data: Uint8Array): void {
    if (this.length + data.length > this.bytes.length) {
      const next = new Uint8Array(Math.max(this.bytes.length * 2, this.length + data.length));
      next.set(this.bytes.subarray(0, this.length));
      this.bytes = next;
    }
    this.bytes.set(data, this.length);
    this.length += data.length;
  }
  view(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

export class MemoryLogStore implements LogStore {
  #config: Uint8Array | undefined;
  readonly #segments = new Map<string, Growable>();
  readonly #checkpoints = new Map<string, Uint8Array>();
  readonly shared: SharedSegments = {
    openSync: (name) => this.#appender(name),
    createSync: (name, bytes) => {
      if (this.#segments.has(name)) return false;
      const g = new Growable();
      g.append(bytes);
      this.#segments.set(name, g);
      return true;
    },
    existsSync: (name) => this.#segments.has(name),
    listSync: () => [...this.#segments.keys()].sort(),
    readSync: (name, offset) => {
      const g = this.#segments.get(name);
      if (!g) throw new Error(`no log segment ${name}`);
      return g.bytes.slice(offset, g.length);
    },
  };

  async readConfig(): Promise<Uint8Array | undefined> {
    return this.#config?.slice();
  }

  async createConfig(bytes: Uint8Array): Promise<boolean> {
    if (this.#config) return false;
    this.#config = bytes.slice();
    return true;
  }

  async segments(): Promise<string[]> {
    return [...this.#segments.keys()].sort();
  }

  async readSegment(name: string): Promise<Uint8Array> {
    const s = this.#segments.get(name);
    if (!s) throw new Error(`no log segment ${name}`);
    return s.view();
  }

  async createSegment(name: string, bytes: Uint8Array): Promise<boolean> {
    return this.shared.createSync(name, bytes);
  }

  async openAppend(name: string): Promise<SegmentAppender> {
    return this.#appender(name);
  }

  #appender(name: string): SegmentAppender {
    const g = this.#segments.get(name);
    if (!g) throw new Error(`no log segment ${name}`);
    return {
      name,
      get size() {
        return g.length;
      },
      append: (bytes) => g.append(bytes),
      truncate: (size) => {
        g.length = Math.min(g.length, size);
      },
      refresh: () => g.length,
      sync: async () => undefined,
      close: async () => undefined,
    };
  }

  async checkpoints(): Promise<string[]> {
    return [...this.#checkpoints.keys()].sort();
  }

  async readCheckpoint(name: string): Promise<Uint8Array> {
    const c = this.#checkpoints.get(name);
    if (!c) throw new Error(`no checkpoint ${name}`);
    return c.slice();
  }

  async createCheckpoint(name: string, bytes: Uint8Array): Promise<boolean> {
    if (this.#checkpoints.has(name)) return false;
    this.#checkpoints.set(name, bytes.slice());
    return true;
  }
}
