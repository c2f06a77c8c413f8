/**
 * Packs as objects `packs/<aa>/<name>.pack` (FORMAT.md §5, decision 0040). A pack is written
 * in memory and uploaded whole when it is closed (sealed, its index trailer appended by the
 * writer): an object is never visible half-written, and a commit names a pack only after its
 * upload (bytes/writer.ts). Reads are ranged GETs.
 */
import { PackMissingError, type PackInfo, type PackStore, type PackWriter } from '../backend/packs.js';
import { NotFoundError } from '../errors.js';
import { listAll, type ObjectStore } from './object-store.js';

const PREFIX = 'packs/';

export function packKey(name: string): string {
  return `${PREFIX}${name.slice(0, 2)}/${name}.pack`;
}

export class ObjectPackStore implements PackStore {
  constructor(readonly objects: ObjectStore) {}

  async create(name: string): Promise<PackWriter> {
    const parts: Uint8Array[] = [];
    let size = 0;
    let open = true;
    const objects = this.objects;
    return {
      name,
      get size() {
        return size;
      },
      append(...more) {
        if (!open) throw new Error(`pack ${name} is closed`);
        const at = size;
        // Copied: callers reuse their header buffers (writer.ts).
        for (const p of more) {
          parts.push(p.slice());
          size += p.length;
        }
        return at;
      },
      // Durable only once uploaded: the commit that names the pack waits for close().
      async sync() {},
      async close() {
        if (!open) return;
        open = false;
        const bytes = new Uint8Array(size);
        let at = 0;
        for (const p of parts.splice(0)) {
          bytes.set(p, at);
          at += p.length;
        }
        // Created only if absent: pack names are random, so a taken name is this upload's
        // own earlier attempt (create answers true for the same bytes).
        if (!(await objects.create(packKey(name), bytes))) throw new Error(`pack ${name} exists with other bytes`);
      },
    };
  }

  async read(name: string, offset: number, length: number): Promise<Uint8Array> {
    try {
      return await this.objects.get(packKey(name), { offset, length });
    } catch (e) {
      if (e instanceof NotFoundError) throw new PackMissingError(name);
      throw e;
    }
  }

  remove(name: string): Promise<void> {
    return this.objects.delete(packKey(name));
  }

  async list(): Promise<PackInfo[]> {
    const out: PackInfo[] = [];
    for await (const o of listAll(this.objects, PREFIX)) {
      const m = /^packs\/[0-9a-f]{2}\/([0-9a-f]{32})\.pack$/.exec(o.key);
      if (m) out.push({ name: m[1]!, size: o.size });
    }
    return out;
  }

  async close(): Promise<void> {}
}
