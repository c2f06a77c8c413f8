/**
 * `kura stats [--json]`: the store's sizes. --json prints one line with, in this order,
 * {"entries","documents","logicalBytes","uniqueChunkBytes","storedBytes","dedupRatio","compressionRatio"}
 * followed by {"packBytes","chunks","packs","keptDocuments","keptBytes"}.
 */
import type { StoreStats } from '@kura/store';
import type { Command } from 'commander';
import { bytes, count, ratio } from '../format.js';
import { write, writeJson } from '../output.js';
import { withStore } from '../store.js';

export function statsJson(s: StoreStats) {
  return {
    entries: s.entries,
    documents: s.documents,
    logicalBytes: s.logicalBytes,
    uniqueChunkBytes: s.uniqueChunkBytes,
    storedBytes: s.storedBytes,
    dedupRatio: s.dedupRatio,
    compressionRatio: s.compressionRatio,
    packBytes: s.packBytes,
    chunks: s.chunks,
    packs: s.packs,
    keptDocuments: s.keptDocuments,
    keptBytes: s.keptBytes,
  };
}

function table(s: StoreStats): string {
  const sized = (n: number) => `${bytes(n)} (${count(n)} bytes)`;
  const rows: [string, string][] = [
    ['entries', count(s.entries)],
    ['documents', count(s.documents)],
    ['logical bytes', sized(s.logicalBytes)],
    ['kept documents', `${count(s.keptDocuments)} (every version and snapshot file)`],
    ['kept bytes', sized(s.keptBytes)],
    ['unique chunk bytes', sized(s.uniqueChunkBytes)],
    ['stored bytes', sized(s.storedBytes)],
    ['pack files', `${sized(s.packBytes)} in ${count(s.packs)} pack${s.packs === 1 ? '' : 's'}`],
    ['chunks', count(s.chunks)],
    ['dedup ratio', ratio(s.dedupRatio)],
    ['compression ratio', ratio(s.compressionRatio)],
    ['overall', ratio(s.storedBytes > 0 ? s.keptBytes / s.storedBytes : 1)],
  ];
  return rows.map(([k, v]) => `${k.padEnd(20)}${v}\n`).join('');
}

export function register(program: Command): void {
  program
    .command('stats')
    .description('sizes of the store: entries, documents, bytes, dedup and compression ratios')
    .option('--json', 'one JSON line: entries, documents, logicalBytes, uniqueChunkBytes, storedBytes, dedupRatio, compressionRatio, packBytes, chunks, packs, keptDocuments, keptBytes')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      await withStore(cmd, { readonly: true }, async (store) => {
        const s = await store.stats();
        if (opts.json) await writeJson(statsJson(s));
        else await write(table(s));
      });
    });
}
