/**
 * `kura hash [--algo sha256|blake3] FILE...`: one `<algo>:<hex>  FILE` line per file, like
 * sha256sum (so `kura hash f | sed -E 's/^(\\?)sha256:/\1/' | sha256sum -c` checks it). A file that
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

/**
 * A `sha256sum` line: a name with a backslash, newline or carriage return is escaped (`\\`,
 * `\n`, `\r`) and the line starts with a backslash, as coreutils writes it — a raw newline
 * split the line in two, which `sha256sum -c` refused.
 */
export function checksumLine(digest: string, name: string): string {
  if (!/[\\\n\r]/.test(name)) return `${digest}  ${name}\n`;
  const escaped = name.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
  return `\\${digest}  ${escaped}\n`;
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
          await write(checksumLine(await hashFile(file, opts.algo as Algo), file));
        } catch (e) {
          printError(`${displayName(file)}: ${describeError(e)}`);
          setExit(EXIT.error);
        }
      }
    });
}
