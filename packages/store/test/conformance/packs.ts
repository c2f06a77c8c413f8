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
