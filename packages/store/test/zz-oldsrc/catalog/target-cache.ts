/**
 * Which entry a target (a path, or a digest) names, remembered between commits (decision
 * 0033): a batch of metadata changes would otherwise look up every target's document and
 * entries again, which costs about as much as the changes themselves.
 *
 * Only what names an entry changes it: the commit log clears the cache when it applies an
 * operation that may (ops.ts `keepsTargets`), when another writer committed since this one's
 * last commit (its changes are in the database, not seen here), and when a transaction rolls
 * back (what it cached may never have been).
 */
import type { EntryTarget } from './entries.js';

/** Enough for the targets of the largest batches many times over; past it, it starts again. */
const MAX = 65_536;

export class TargetCache {
  // Two maps, keyed by the strings as given: no key string is made per lookup. A digest spelt
  // another way is looked up once more, no harm done.
  readonly #byPath = new Map<string, number>();
  readonly #byDigest = new Map<string, number>();

  get(target: EntryTarget): number | undefined {
    return 'path' in target ? this.#byPath.get(target.path) : this.#byDigest.get(target.digest);
  }

  set(target: EntryTarget, id: number): void {
    if (this.#byPath.size + this.#byDigest.size >= MAX) this.clear();
    if ('path' in target) this.#byPath.set(target.path, id);
    else this.#byDigest.set(target.digest, id);
  }

  clear(): void {
    // Every put clears it: an empty cache's clear should cost nothing.
    if (this.#byPath.size) this.#byPath.clear();
    if (this.#byDigest.size) this.#byDigest.clear();
  }
}
