/**
 * The configuration object (kura-store.json, FORMAT.md §15.1) is checked by every open, read-only
 * ones too: a damaged one was read as fine by `ls` and `verify`, and one claiming a newer format
 * was written to by `add`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import { newStore } from './helpers/store.js';

async function storeWith(change: (config: Record<string, string>) => Record<string, string> | string): Promise<string> {
  const { store, dir } = await newStore();
  await store.put(new TextEncoder().encode('x'), { path: 'x' });
  await store.close();
  const file = join(dir, 'kura-store.json');
  const changed = change(JSON.parse(readFileSync(file, 'utf8')));
  writeFileSync(file, typeof changed === 'string' ? changed : JSON.stringify(changed));
  return dir;
}

describe('the configuration object, at every open', () => {
  const both = async (dir: string) => [
    await Store.open(dir, { readonly: true }).then((s) => s.close().then(() => 'opened'), (e: { code?: string; reason?: string }) => `${e.code}:${e.reason ?? ''}`),
    await Store.open(dir).then((s) => s.close().then(() => 'opened'), (e: { code?: string; reason?: string }) => `${e.code}:${e.reason ?? ''}`),
  ];

  it('opens when it is the store\'s own', async () => {
    expect(await both(await storeWith((c) => c))).toEqual(['opened', 'opened']);
  });

  it('not JSON, or not a Kura store\'s: CORRUPT_DATA (config), for readers and writers', async () => {
    expect(await both(await storeWith(() => '{not json'))).toEqual(['CORRUPT_DATA:config', 'CORRUPT_DATA:config']);
    expect(await both(await storeWith((c) => ({ ...c, format: 'something-else' })))).toEqual(['CORRUPT_DATA:config', 'CORRUPT_DATA:config']);
    expect(await both(await storeWith((c) => ({ ...c, format_version: 'one' })))).toEqual(['CORRUPT_DATA:config', 'CORRUPT_DATA:config']);
  });

  it('a newer format: FORMAT_MISMATCH, and nothing is written', async () => {
    const dir = await storeWith(() => ({ format: 'kura-store', format_version: '99' }));
    const [reader, writer] = await both(dir);
    expect(reader).toMatch(/^FORMAT_MISMATCH/);
    expect(writer).toMatch(/^FORMAT_MISMATCH/);
  });

  it('settings the database contradicts (another store\'s id, other chunking): CORRUPT_DATA (config)', async () => {
    expect(await both(await storeWith((c) => ({ ...c, store_id: '0'.repeat(32) })))).toEqual(['CORRUPT_DATA:config', 'CORRUPT_DATA:config']);
    expect(await both(await storeWith((c) => ({ ...c, chunk_avg: '65536' })))).toEqual(['CORRUPT_DATA:config', 'CORRUPT_DATA:config']);
    expect(await both(await storeWith((c) => Object.fromEntries(Object.entries(c).filter(([k]) => k !== 'chunk_seed'))))).toEqual(['CORRUPT_DATA:config', 'CORRUPT_DATA:config']);
  });
});
