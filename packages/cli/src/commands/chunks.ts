/**
 * `kura chunks [--min N --avg N --max N --seed N] [--json] FILE`: every FastCDC chunk of a
 * file with its BLAKE3 key, streamed (memory stays bounded whatever the file size). Plain
 * output is `offset length key` per line; `--json` prints one JSON object per line (NDJSON):
 * `{"offset":0,"length":19186,"key":"<hex>"}`. A summary goes to stderr.
 */
import { Ingester, InvalidInputError, type ChunkParams } from '@kura/core';
import type { Command } from 'commander';
import { usage } from '../exit.js';
import { openInput } from '../files.js';
import { write } from '../output.js';

interface ChunkOptions {
  min?: string;
  avg?: string;
  max?: string;
  seed?: string;
  json?: boolean;
}

function integer(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw usage(`${flag} must be a whole number of bytes, got "${value}"`);
  return Number(value);
}

function seed(value: string | undefined): bigint | undefined {
  if (value === undefined) return undefined;
  if (!/^(\d+|0x[0-9a-fA-F]+)$/.test(value)) throw usage(`--seed must be a decimal or 0x-hex integer, got "${value}"`);
  return BigInt(value);
}

export function params(opts: ChunkOptions): ChunkParams {
  const p: ChunkParams = {};
  const min = integer(opts.min, '--min');
  const avg = integer(opts.avg, '--avg');
  const max = integer(opts.max, '--max');
  const s = seed(opts.seed);
  if (avg !== undefined) p.avg = avg;
  if (min !== undefined) p.min = min;
  if (max !== undefined) p.max = max;
  if (s !== undefined) p.seed = s;
  return p;
}

export function register(program: Command): void {
  program
    .command('chunks')
    .description('list the content-defined chunks of a file with their BLAKE3 keys')
    .option('--avg <bytes>', 'average chunk size, a power of two (default 16384)')
    .option('--min <bytes>', 'minimum chunk size, must be avg/4')
    .option('--max <bytes>', 'maximum chunk size, must be 4*avg')
    .option('--seed <n>', 'chunking seed, 0 <= n < 2^64 (default 0)')
    .option('--json', 'one JSON object per chunk per line')
    .argument('<file>', 'file to chunk (- for standard input)')
    .action(async (file: string, opts: ChunkOptions) => {
      let ingester: Ingester;
      try {
        ingester = new Ingester({ chunking: params(opts), compression: false });
      } catch (e) {
        if (e instanceof InvalidInputError) throw usage(e.message);
        throw e;
      }
      const format = opts.json
        ? (c: { offset: number; length: number; key: string }) =>
            `{"offset":${c.offset},"length":${c.length},"key":"${c.key}"}\n`
        : (c: { offset: number; length: number; key: string }) => `${c.offset}\t${c.length}\t${c.key}\n`;
      try {
        for await (const piece of openInput(file)) {
          const lines = ingester.update(piece as Uint8Array).map(format);
          if (lines.length) await write(lines.join(''));
        }
        const last = ingester.finish().map(format);
        if (last.length) await write(last.join(''));
        const r = ingester.result!;
        process.stderr.write(`${r.chunks} chunk${r.chunks === 1 ? '' : 's'}, ${r.size} bytes, ${r.digest}\n`);
      } finally {
        ingester.dispose();
      }
    });
}
