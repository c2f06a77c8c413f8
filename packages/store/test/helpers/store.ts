/** Temporary stores on disk and seeded data for the store tests. */
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { Store } from '../../src/node/index.js';
import { LONE_BATCH_MS } from '../../src/catalog/commit-batch.js';
import type { InitOptions } from '../../src/options.js';
import { SEARCH_TABLE } from '../../src/search/index-writer.js';

import { concatBytes } from '../../../core/test/helpers/data.js';

export { randomBytes, textBytes, expectSameBytes, splitAt, concatBytes } from '../../../core/test/helpers/data.js';

const open: Store[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close().catch(() => undefined)));
});

const dirs: string[] = [];
// Stores of the big tests take gigabytes: every temp dir goes when its file's tests are done.
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

export function tempDir(prefix = 'kura-store-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/** A new store in a fresh directory, closed after the test. */
export async function newStore(options: InitOptions = {}): Promise<{ store: Store; dir: string }> {
  const dir = join(tempDir(), 'store');
  const store = await Store.init(dir, options);
  open.push(store);
  return { store, dir };
}

/**
 * A turn of the event loop: a writer's commits reach other connections (another Store, a
 * process, a direct SQLite read) when its batch of commits ends, at the latest then (decision
 * 0028). Its own reads see them at once.
 */
/** A batch of commits has ended (decision 0028): its cap (a lone local writer's by default; OBJECT_BATCH_MS for a server on object storage), and a turn. */
export const batchEnded = (capMs = LONE_BATCH_MS) => new Promise<void>((resolve) => setTimeout(() => setImmediate(resolve), capMs + 1));

export async function reopen(dir: string, options = {}): Promise<Store> {
  const store = await Store.open(dir, options);
  open.push(store);
  return store;
}

export function track(store: Store): Store {
  open.push(store);
  return store;
}

export async function collect(it: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const p of it) parts.push(p);
  return concatBytes(parts);
}

/** Where a pack file's records end: before the index its writer appended at the seal (FORMAT.md §6). */
export function recordsEnd(file: string): number {
  const b = readFileSync(file);
  return b.toString('latin1', b.length - 4) === 'KEND' ? b.length - b.readUInt32LE(b.length - 8) : b.length;
}

/** Flips bits of the byte at `at` of `file` (damage a check must find). */
export function flipByte(file: string, at: number): void {
  const fd = openSync(file, 'r+');
  const b = Buffer.alloc(1);
  readSync(fd, b, 0, 1, at);
  b[0]! ^= 0x40;
  writeSync(fd, b, 0, 1, at);
  closeSync(fd);
}

/**
 * Makes a store's catalog (kura.db, open in `db`) as a Kura from before schema 23 left it: the
 * keyword index a table of its own (empty) and no search.db named. Set its user_version after.
 */
export function indexInCatalog(db: { exec(sql: string): unknown }): void {
  db.exec(`DROP TABLE search_file; CREATE VIRTUAL TABLE ${SEARCH_TABLE}`);
}
