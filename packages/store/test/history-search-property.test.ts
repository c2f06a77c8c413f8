/**
 * Search through every version (decision 0056: history spans ranked, each span's versions
 * checked exactly) against an independent answer: every version's bytes put at a path of its
 * own in a second store, searched there by the plain keyword index. For random histories —
 * puts, the same bytes at two paths or restored, paths deleted with their versions kept or
 * whole, versions forgotten or deleted one by one, media types changed, searches between (the
 * spans then follow what changed) — and random queries of the
 * grammar's forms, the (path, version) pairs found must be the same.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newStore } from './helpers/store.js';

// Words porter leaves as they are, so that the two stores' words are plainly the same.
const WORDS = ['kiwi', 'mango', 'lemon', 'peach', 'plum', 'fig'];
const PATHS = ['a.txt', 'b.txt', 'c.txt'];
const enc = new TextEncoder();

const word = fc.constantFrom(...WORDS);
const line = fc.array(word, { minLength: 1, maxLength: 3 }).map((w) => w.join(' '));
const text = fc.array(line, { minLength: 1, maxLength: 3 }).map((l) => l.join('\n'));
const path = fc.constantFrom(...PATHS);
const op = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('put' as const), path, text }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('again' as const), path, pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), path, keepVersions: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('forget' as const), keep: fc.integer({ min: 1, max: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('dropVersion' as const), path, pick: fc.nat() }) },
  // (Text types only: the independent answer reads every version by its content.)
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retype' as const), path, mediaType: fc.constantFrom('text/plain', 'text/markdown') }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('search' as const), q: word }) },
);
const query = fc.oneof(
  word,
  fc.tuple(word, word).map(([a, b]) => `${a} ${b}`),
  fc.tuple(word, word).map(([a, b]) => `${a} AND ${b}`),
  fc.tuple(word, word).map(([a, b]) => `${a} NOT ${b}`),
  fc.tuple(word, word).map(([a, b]) => `"${a} ${b}"`),
  fc.tuple(word, word).map(([a, b]) => `${a} -${b}`),
  word.map((w) => `${w.slice(0, 2)}*`),
);

describe('search through every version, against each version searched at a path of its own', () => {
  // (200 stores, each of which starts the keyword index's writer thread when it first indexes:
  // decision 0081 added ~50-100 ms a store, and runs took 42-55 s against the 60 s default.)
  it('finds the same versions', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 24 }), fc.array(query, { minLength: 1, maxLength: 4 }), async (ops, queries) => {
        const { store } = await newStore();
        const { store: oracle } = await newStore();
        try {
          const texts: string[] = [];
          for (const o of ops) {
            if (o.kind === 'put') {
              texts.push(o.text);
              await store.put(enc.encode(o.text), { path: o.path });
            } else if (o.kind === 'again' && texts.length) {
              await store.put(enc.encode(texts[o.pick % texts.length]!), { path: o.path });
            } else if (o.kind === 'delete') {
              await store.deletePath(o.path, { keepVersions: o.keepVersions }).catch(() => false);
            } else if (o.kind === 'forget') {
              await store.forgetVersions({ keep: o.keep });
            } else if (o.kind === 'dropVersion') {
              const versions = await store.versions(o.path).catch(() => []);
              if (versions.length) await store.deleteVersion(o.path, versions[o.pick % versions.length]!.version);
            } else if (o.kind === 'retype') {
              await store.updateMeta([{ path: o.path, mediaType: o.mediaType }]).catch(() => undefined);
            } else if (o.kind === 'search') {
              await store.search(o.q, { allVersions: true, collapse: false });
            }
          }
          // The independent answer: every version at a path of its own (digits: no word of the queries).
          const at = new Map<string, string>();
          let n = 0;
          for (const p of PATHS) {
            const versions = await store.versions(p).catch(() => []);
            for (const v of versions) {
              const own = `o/${n++}`;
              at.set(own, `${p}@${v.version}`);
              await oracle.put(await store.getBytes(v.digest), { path: own });
            }
          }
          for (const q of queries) {
            const got = (await store.search(q, { allVersions: true, collapse: false, limit: 1000 })).map((h) => `${h.path}@${h.version}`).sort();
            const want = (await oracle.search(q, { mode: 'keyword', limit: 1000, collapse: false })).map((h) => at.get(h.path!)!).sort();
            expect(got, `${q} after ${JSON.stringify(ops)}`).toEqual(want);
            // One path's versions alone (its spans checked without the others').
            const gotB = (await store.search(q, { allVersions: true, collapse: false, limit: 1000, pathPrefix: 'b' })).map((h) => `${h.path}@${h.version}`).sort();
            expect(gotB, `${q} in b.txt after ${JSON.stringify(ops)}`).toEqual(want.filter((w) => w.startsWith('b.txt@')));
          }
        } finally {
          await store.close();
          await oracle.close();
        }
      }),
      { numRuns: 100 },
    );
  });
});
