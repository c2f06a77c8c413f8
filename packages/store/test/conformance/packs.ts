/**
 * The PackStore contract (src/backend/packs.ts) as checks that run anywhere: in vitest for
 * the memory and file-system stores (backends.test.ts) and inside Chromium for the OPFS store
 * (apps/web/test/conformance). No test framework here: a failed check throws.
 */
import { PackMissingError, type PackStore } from '../../src/backend/packs.js';

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

function equal(actual: unknown, expected: unknown, what: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

async function rejects(p: Promise<unknown>, check: (e: unknown) => boolean, what: string): Promise<void> {
  try {
    await p;
  } catch (e) {
    if (check(e)) return;
    throw new Error(`${what}: rejected with the wrong error: ${String(e)}`);
  }
  throw new Error(`${what}: did not reject`);
}

function throws(fn: () => unknown, what: string): void {
  try {
    fn();
  } catch {
    return;
  }
  throw new Error(`${what}: did not throw`);
}

export interface PackCheck {
  name: string;
  run(make: () => PackStore | Promise<PackStore>): Promise<void>;
}

export const packChecks: PackCheck[] = [
  {
    name: 'appends return increasing offsets; reads see appended bytes at once',
    async run(make) {
      const s = await make();
      const w = await s.create('0123456789abcdef0123456789abcdef');
      equal(w.append(bytes('hello ')), 0, 'first offset');
      equal(w.append(bytes('wor'), bytes('ld')), 6, 'second offset (two parts)');
      equal(w.size, 11, 'size');
      equal(text(await s.read(w.name, 6, 5)), 'world', 'read before sync');
      await w.sync();
      await w.close();
      equal(text(await s.read(w.name, 0, 11)), 'hello world', 'read after close');
      await s.close();
    },
  },
  {
    name: 'short reads past the end return fewer bytes; missing packs throw PackMissingError',
    async run(make) {
      const s = await make();
      const w = await s.create('aa000000000000000000000000000000');
      w.append(bytes('abc'));
      await w.close();
      equal(text(await s.read(w.name, 1, 10)), 'bc', 'short read');
      equal((await s.read(w.name, 10, 10)).length, 0, 'read past the end');
      await rejects(s.read('bb000000000000000000000000000000', 0, 1), (e) => e instanceof PackMissingError, 'missing pack');
      await s.close();
    },
  },
  {
    name: 'creating an existing pack fails; remove is idempotent; list names what exists',
    async run(make) {
      const s = await make();
      const a = await s.create('cc000000000000000000000000000000');
      a.append(bytes('12345'));
      await a.close();
      await rejects(s.create('cc000000000000000000000000000000'), () => true, 'create existing');
      await s.create('dd000000000000000000000000000000');
      equal(
        (await s.list()).sort((x, y) => x.name.localeCompare(y.name)),
        [
          { name: 'cc000000000000000000000000000000', size: 5 },
          { name: 'dd000000000000000000000000000000', size: 0 },
        ],
        'list',
      );
      await s.remove('cc000000000000000000000000000000');
      await s.remove('cc000000000000000000000000000000');
      equal((await s.list()).map((p) => p.name), ['dd000000000000000000000000000000'], 'list after remove');
      await rejects(s.read('cc000000000000000000000000000000', 0, 1), (e) => e instanceof PackMissingError, 'read removed');
      await s.close();
    },
  },
  {
    name: 'a closed writer refuses appends',
    async run(make) {
      const s = await make();
      const w = await s.create('ee000000000000000000000000000000');
      await w.close();
      throws(() => w.append(bytes('x')), 'append after close');
      await s.close();
    },
  },
  {
    // Writers may gather appends in memory (OPFS gathers 1 MiB): records smaller and larger
    // than such a buffer, across its edges, must land at their offsets, whole and in order.
    name: 'small and large appends across buffer edges read back exactly; list and drain see them',
    async run(make) {
      const s = await make();
      const w = await s.create('ee000000000000000000000000000000');
      const sizes = [16, 70_000, 1 << 20, 5, (1 << 20) - 3, 3 << 20, 17_000, 900_000, 250_000, 1];
      const records: { at: number; data: Uint8Array }[] = [];
      let seed = 7;
      for (const [i, size] of sizes.entries()) {
        const data = new Uint8Array(size);
        for (let j = 0; j < size; j++) data[j] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
        // Every other record in two parts, as the store appends header and payload.
        const cut = i % 2 ? size >> 1 : size;
        records.push({ at: w.append(data.subarray(0, cut), ...(cut < size ? [data.subarray(cut)] : [])), data });
      }
      const total = sizes.reduce((a, b) => a + b, 0);
      equal(w.size, total, 'size');
      equal(records.map((r) => r.at), sizes.map((_, i) => sizes.slice(0, i).reduce((a, b) => a + b, 0)), 'offsets');
      equal((await s.list()).find((p) => p.name === w.name)?.size, total, 'listed size before any sync');
      for (const [i, r] of records.entries()) {
        const back = await s.read(w.name, r.at, r.data.length);
        if (back.length !== r.data.length || back.some((b, j) => b !== r.data[j])) throw new Error(`record ${i} (${r.data.length} bytes) read back wrong`);
      }
      w.drain?.();
      w.append(bytes('tail'));
      equal(text(await s.read(w.name, total, 4)), 'tail', 'append after a drain');
      await w.close();
      equal((await s.list()).find((p) => p.name === w.name)?.size, total + 4, 'listed size after close');
      equal(text(await s.read(w.name, total, 10)), 'tail', 'read after close');
      await s.close();
    },
  },
  {
    name: 'many packs at once: each reads back its own bytes',
    async run(make) {
      const s = await make();
      const names = Array.from({ length: 80 }, (_, i) => i.toString(16).padStart(32, 'f'));
      for (const [i, n] of names.entries()) {
        const w = await s.create(n);
        w.append(bytes(`pack ${i} `.repeat(i + 1)));
        await w.close();
      }
      // More packs than a store keeps open at once: reads reopen evicted ones.
      for (const [i, n] of names.entries()) equal(text(await s.read(n, 0, 100_000)), `pack ${i} `.repeat(i + 1), `pack ${i}`);
      await s.close();
    },
  },
];
