/** Packs in memory: for tests and for stores that live only as long as the process. */
import { PackMissingError, type PackInfo, type PackStore, type PackWriter } from './packs.js';

class Growable {
  bytes = new Uint8Array(1024);
  length = 0;

  append(data: Uint8Array): number {
    const at = this.length;
    if (at + data.length > this.bytes.length) {
      const next = new Uint8Array(Math.max(this.bytes.length * 2, at + data.length));
      next.set(this.bytes.subarray(0, at));
      this.bytes = next;
    }
    this.bytes.set(data, at);
    this.length += data.length;
    return at;
  }
}

export class MemoryPackStore implements PackStore {
  readonly #packs = new Map<string, Growable>();

  async create(name: string): Promise<PackWriter> {
    if (this.#packs.has(name)) throw new Error(`pack ${name} exists`);
    const pack = new Growable();
    this.#packs.set(name, pack);
    let open = true;
    return {
      name,
      get size() {
        return pack.length;
      },
      append(...parts) {
        if (!open) throw new Error(`pack ${name} is closed`);
        const at = pack.length;
        for (const p of parts) pack.append(p);
        return at;
      },
      async sync() {},
      async close() {
        open = false;
      },
    };
  }

  async read(name: string, offset: number, length: number): Promise<Uint8Array> {
    const pack = this.#packs.get(name);
    if (!pack) throw new PackMissingError(name);
    const end = Math.min(offset + length, pack.length);
    return pack.bytes.slice(Math.min(offset, end), end);
  }

  async remove(name: string): Promise<void> {
    this.#packs.delete(name);
  }

  async list(): Promise<PackInfo[]> {
    return [...this.#packs].map(([name, p]) => ({ name, size: p.length }));
  }

  async close(): Promise<void> {}

  /** Test hook: the live bytes of a pack, to damage them on purpose. */
  rawBytes(name: string): Uint8Array | undefined {
    const p = this.#packs.get(name);
    return p?.bytes.subarray(0, p.length);
  }
}
