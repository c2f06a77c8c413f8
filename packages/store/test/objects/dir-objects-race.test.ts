/**
 * The directory object store: a delete removes the folder it emptied, and another writer's
 * create or put into that folder may have made it just before — the create must not fail
 * (an encrypted store's open failed so once in CI: two processes' conditional-create probes in
 * `probe/`, one deleting its key as the other linked its own).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectoryObjectStore } from '../../src/node/dir-objects.js';

const dir = mkdtempSync(join(tmpdir(), 'kura-dir-race-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a directory object store under concurrent creates and deletes in one folder', () => {
  it('every create and put succeeds while other keys of its folder are deleted (and the folder with them)', async () => {
    const a = new DirectoryObjectStore(dir);
    const b = new DirectoryObjectStore(dir); // (another writer of the same directory)
    const bytes = new TextEncoder().encode('x');
    const rounds = 400;
    const churn = async (store: DirectoryObjectStore, name: string) => {
      for (let i = 0; i < rounds; i++) {
        const key = `probe/${name}-${i}`;
        expect(i % 2 ? await store.create(key, bytes) : typeof (await store.put(key, bytes))).toBe(i % 2 ? true : 'string');
        await store.delete(key);
      }
    };
    await Promise.all([churn(a, 'a'), churn(b, 'b'), churn(a, 'c'), churn(b, 'd')]);
    expect((await a.list('probe/')).objects).toEqual([]);
  });

  it('a create of a key another writer holds and lets go answers true or false, never a clash (a lock taken in turns)', async () => {
    // (key-files' keys-lock: one process's create found the lock held, and it was gone by the
    // time it looked: reported as a folder of keys taking the name. Seen once in CI.)
    const writers = [new DirectoryObjectStore(dir), new DirectoryObjectStore(dir), new DirectoryObjectStore(dir)];
    const bytes = new TextEncoder().encode('held');
    let taken = 0;
    const contend = async (store: DirectoryObjectStore) => {
      for (let i = 0; i < 300; i++) {
        if (await store.create('keys-lock', new TextEncoder().encode(`${i}`))) {
          taken++;
          await store.delete('keys-lock');
        }
      }
    };
    await Promise.all(writers.map(contend));
    expect(taken).toBeGreaterThan(0);
    // The same bytes held: true (a create tried again); other bytes: false.
    expect(await writers[0]!.create('held', bytes)).toBe(true);
    expect(await writers[1]!.create('held', bytes)).toBe(true);
    expect(await writers[1]!.create('held', new TextEncoder().encode('other'))).toBe(false);
  });
});
