/**
 * `kura hash [--algo sha256|blake3] FILE...`: one `<algo>:<hex>  FILE` line per file, like
 * sha256sum (so `kura hash f | sed 's/^sha256://' | sha256sum -c` checks it). A file that
 * cannot be read is reported on stderr and makes the exit code 1; the others still print.
 */
import { Blake3, Sha256 } from '@kura/core';
import type { Command } from 'commander';
import { EXIT, describeError, printError, usage } from '../exit.js';
import { displayName, openInput } from '../files.js';
import { write } from '../output.js';

const ALGOS = ['sha256', 'blake3'] as const;
type Algo = (typeof ALGOS)[number];

export async function hashFile(path: string, algo: Algo): Promise<string> {
  const hasher = algo === 'sha256' ? new Sha256() : new Blake3();
  try {
    for await (const piece of openInput(path)) hasher.update(piece as Uint8Array);
    const digest = hasher.digest();
    return digest.includes(':') ? digest : `${algo}:${digest}`;
  } finally {
    hasher.dispose();
  }
}

export function register(program: Command, setExit: (code: number) => void): void {
  program
    .command('hash')
    .description('print the SHA-256 (document digest) or BLAKE3 of files, like sha256sum')
    .option('--algo <name>', `hash algorithm: ${ALGOS.join(' or ')}`, 'sha256')
    .argument('<files...>', 'files to hash (- for standard input)')
    .action(async (files: string[], opts: { algo: string }) => {
      if (!(ALGOS as readonly string[]).includes(opts.algo)) {
        throw usage(`--algo must be one of ${ALGOS.join(', ')}, got "${opts.algo}"`);
      }
      for (const file of files) {
        try {
          await write(`${await hashFile(file, opts.algo as Algo)}  ${file}\n`);
        } catch (e) {
          printError(`${displayName(file)}: ${describeError(e)}`);
          setExit(EXIT.error);
        }
      }
    });
}
