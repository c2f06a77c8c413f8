/**
 * Packs as objects `packs/<aa>/<name>.pack` (FORMAT.md §5, decision 0040). A pack is written
 * in memory and uploaded whole when it is closed (sealed, its index trailer appended by the
 * writer): an object is never visible half-written, and a commit names a pack only after its
 * upload (bytes/writer.ts). Reads are ranged GETs of windows that cover the chunks after the
 * one asked for. A small pack may instead travel inside its commit's log object (decision 0044):
 * then it is read from there, at the offset its row says (locateWith).
 */
import { PackMissingError, type CarriedPlace, type PackInfo, type PackStore, type PackWriter } from '../backend/packs.js';
import { segmentName } from '../catalog/frame.js';
import { LOG } from '../catalog/object-log.js';
import { isNotFound, listAll, type ObjectStore } from '../objects/object-store.js';

const PREFIX = 'packs/';

export function packKey(name: string): string {
  return `${PREFIX}${name.slice(0, 2)}/${name}.pack`;
}

/** Ranged reads fetch at least this much (a document's chunks lie one after another in a pack). */
const READ_MIN = 256 * 1024;
/** Reads that go on where the last one in the pack ended fetch more, doubling up to this. */
const READ_MAX = 8 * 1024 * 1024;
/** Bytes of fetched windows kept for the reads that follow. */
const WINDOWS_BYTES = 32 * 1024 * 1024;
/** A pack being written starts with a buffer of this size, doubled as it fills. */
const PACK_BUFFER_MIN = 1024 * 1024;
/** Buffers of uploaded packs kept for the next packs to grow in, at most, and for how long. */
const SPARE_BUFFERS = 2;
const SPARE_MS = 2_000;
/** Larger buffers are not kept (a pack that grew past a commit's usual size). */
const SPARE_MAX_BYTES = 64 * 1024 * 1024;
/** Packs fetched whole at once (wholePacks): up to 64 MiB each in memory. */
const WHOLE_AT_ONCE = 2;

interface Window {
  pack: string;
  offset: number;
  bytes: Uint8Array;
}

export class ObjectPackStore implements PackStore {
  /** Recently fetched ranges, most recent last. */
  readonly #windows: Window[] = [];
  #windowBytes = 0;
  /** Per pack: where the last read ended, and how much the next sequential one fetches. */
  readonly #streak = new Map<string, { end: number; size: number }>();

  #locate: ((name: string) => CarriedPlace | undefined) | undefined;
  /**
   * Reads that will cover most of the store (a copy, a restore): each pack is fetched whole on
   * its first read — one request, not a growing ranged GET per few MiB of each of the readers
   * that interleave in it — and handed to `keep`, which later reads find. Only with a `keep`.
   */
  wholePacks = false;
  /** Whole fetches in flight, by pack (readers of one pack share one). */
  readonly #whole = new Map<string, Promise<Uint8Array>>();
  /** At most WHOLE_AT_ONCE packs in memory at once: the others wait their turn. */
  #wholeRunning = 0;
  readonly #wholeWaiting: (() => void)[] = [];
  /**
   * Buffers of packs uploaded, for the next packs: fresh, each pack's buffer was allocated
   * ~2x its size (doubling from PACK_BUFFER_MIN), zeroed and faulted in page by page, and that
   * much external memory a pack moved V8 to a full collection of this thread's heap about
   * once per commit (a bulk ingest to S3: six a 256 MiB). Let go of SPARE_MS after the last.
   */
  readonly #spare: Uint8Array[] = [];
  #spareTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly objects: ObjectStore,
    /**
     * Told each sealed pack's bytes while they upload (a local copy: node/cached-packs.ts). The
     * bytes are the pack's buffer, which a later pack reuses once this and the upload settle:
     * kept longer, they are copied.
     */
    private readonly keep?: (name: string, bytes: Uint8Array) => Promise<void>,
  ) {}

  #keepSpare(buffer: Uint8Array): void {
    if (buffer.length === 0 || buffer.length > SPARE_MAX_BYTES || this.#spare.length >= SPARE_BUFFERS) return;
    this.#spare.push(buffer);
    if (this.#spareTimer) clearTimeout(this.#spareTimer);
    this.#spareTimer = setTimeout(() => {
      this.#spareTimer = undefined;
      this.#spare.length = 0;
    }, SPARE_MS);
    (this.#spareTimer as { unref?: () => void }).unref?.(); // (never keeps a process alive)
  }

  locateWith(locate: (name: string) => CarriedPlace | undefined): void {
    this.#locate = locate;
  }

  /** The object that holds pack `name`, and where in it the pack begins. */
  #whereIs(name: string): { key: string; base: number } {
    const carried = this.#locate?.(name);
    return carried ? { key: `${LOG}${segmentName(carried.seq)}`, base: carried.offset } : { key: packKey(name), base: 0 };
  }

  async carriedSizes(places: ReadonlyMap<string, CarriedPlace>): Promise<Map<string, number>> {
    const sizes = new Map<number, number>();
    if (places.size) for await (const o of listAll(this.objects, LOG)) sizes.set(Number(o.key.slice(LOG.length)), o.size);
    const out = new Map<string, number>();
    for (const [name, p] of places) {
      const size = sizes.get(p.seq);
      if (size !== undefined) out.set(name, size - p.offset);
    }
    return out;
  }

  async create(name: string): Promise<PackWriter> {
    // The pack grows in one buffer (copied into: callers reuse their header buffers, writer.ts),
    // doubling when full. It was a copy of each record and, at the upload, a concatenation of
    // them all: a synchronous copy of the whole pack, every commit, that held this thread while
    // the ingest workers waited for it to take their chunks.
    let buffer = this.#spare.pop() ?? new Uint8Array(0);
    let size = 0;
    let open = true;
    const objects = this.objects;
    const keep = this.keep;
    const spare = (b: Uint8Array) => this.#keepSpare(b);
    const written = () => buffer.subarray(0, size);
    return {
      name,
      get size() {
        return size;
      },
      append(...more) {
        if (!open) throw new Error(`pack ${name} is closed`);
        const at = size;
        let end = size;
        for (const p of more) end += p.length;
        if (end > buffer.length) {
          const grown = new Uint8Array(Math.max(end, buffer.length * 2, PACK_BUFFER_MIN));
          grown.set(buffer.subarray(0, size));
          buffer = grown;
        }
        for (const p of more) {
          buffer.set(p, size);
          size += p.length;
        }
        return at;
      },
      // Durable only once uploaded: the commit that names the pack waits for close().
      async sync() {},
      async detach() {
        if (!open) throw new Error(`pack ${name} is closed`);
        open = false;
        const bytes = written();
        // The local copy is not waited for (the commit is): a copy that fails is a cache miss later.
        void keep?.(name, bytes).catch(() => undefined);
        return bytes;
      },
      async close() {
        if (!open) return;
        open = false;
        const bytes = written();
        // Created only if absent: pack names are random, so a taken name is this upload's
        // own earlier attempt (create answers true for the same bytes).
        const upload = objects.create(packKey(name), bytes);
        // A copy that fails to be kept is only a cache miss later.
        const [created] = await Promise.allSettled([upload, keep?.(name, bytes).catch(() => undefined)]);
        // Both are done with the bytes, whatever they answered: the buffer is free.
        spare(buffer);
        if (created.status === 'rejected') throw created.reason;
        if (!created.value) throw new Error(`pack ${name} exists with other bytes`);
      },
    };
  }

  /**
   * A range of a pack: from a window fetched before when it lies inside one, else one ranged GET
   * of at least READ_MIN bytes — more when reads walk through the pack (a document read in
   * order costs a GET per few MiB, not one per chunk).
   */
  async read(name: string, offset: number, length: number): Promise<Uint8Array> {
    if (this.wholePacks && this.keep) return (await this.#fetchWhole(name)).slice(offset, offset + length);
    const hit = this.#windows.find((w) => w.pack === name && offset >= w.offset && offset + length <= w.offset + w.bytes.length);
    const streak = this.#streak.get(name);
    const sequential = streak !== undefined && streak.end === offset;
    this.#streak.set(name, { end: offset + length, size: sequential ? Math.min(READ_MAX, streak.size * 2) : READ_MIN });
    if (this.#streak.size > 1024) this.#streak.delete(this.#streak.keys().next().value!);
    if (hit) return hit.bytes.slice(offset - hit.offset, offset - hit.offset + length);
    const fetch = Math.max(length, this.#streak.get(name)!.size);
    const { key, base } = this.#whereIs(name);
    let bytes: Uint8Array;
    try {
      bytes = await this.objects.get(key, { offset: base + offset, length: fetch });
    } catch (e) {
      if (isNotFound(e)) throw new PackMissingError(name);
      throw e;
    }
    if (bytes.length > length) this.#remember({ pack: name, offset, bytes });
    return bytes.slice(0, length);
  }

  #fetchWhole(name: string): Promise<Uint8Array> {
    let fetching = this.#whole.get(name);
    if (fetching) return fetching;
    fetching = (async () => {
      if (this.#wholeRunning >= WHOLE_AT_ONCE) await new Promise<void>((r) => this.#wholeWaiting.push(r));
      this.#wholeRunning++;
      try {
        const { key, base } = this.#whereIs(name);
        let bytes: Uint8Array;
        try {
          // (A carried pack runs from its offset in its log object to the object's end.)
          bytes = await this.objects.get(key, base ? { offset: base, length: Number.MAX_SAFE_INTEGER - base } : undefined);
        } catch (e) {
          if (isNotFound(e)) throw new PackMissingError(name);
          throw e;
        }
        // A copy that fails to be kept is only a cache miss later.
        void this.keep!(name, bytes).catch(() => undefined);
        return bytes;
      } finally {
        this.#wholeRunning--;
        this.#wholeWaiting.shift()?.();
      }
    })().finally(() => this.#whole.delete(name));
    this.#whole.set(name, fetching);
    return fetching;
  }

  #remember(w: Window): void {
    this.#windows.push(w);
    this.#windowBytes += w.bytes.length;
    while (this.#windowBytes > WINDOWS_BYTES && this.#windows.length > 1) this.#windowBytes -= this.#windows.shift()!.bytes.length;
  }

  remove(name: string): Promise<void> {
    for (let i = this.#windows.length - 1; i >= 0; i--) {
      if (this.#windows[i]!.pack === name) this.#windowBytes -= this.#windows.splice(i, 1)[0]!.bytes.length;
    }
    return this.objects.delete(packKey(name));
  }

  async list(): Promise<PackInfo[]> {
    const out: PackInfo[] = [];
    for await (const o of listAll(this.objects, PREFIX)) {
      const m = /^packs\/[0-9a-f]{2}\/([0-9a-f]{32})\.pack$/.exec(o.key);
      if (m) out.push({ name: m[1]!, size: o.size, modified: o.modified });
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.#spareTimer) clearTimeout(this.#spareTimer);
    this.#spareTimer = undefined;
    this.#spare.length = 0;
  }
}
