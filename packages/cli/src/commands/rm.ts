/**
 * `kura rm DIGEST... [--json]`: deletes documents (their chunks are reclaimed by `kura gc`).
 * Silent on success; an unknown digest is reported and makes the exit code 1, the others are
 * still removed. --json prints {"digest","removed"} per digest.
 */
import type { Command } from 'commander';
import { digest } from '../args.js';
import { EXIT, printError } from '../exit.js';
import { writeJson } from '../output.js';
import { withStore } from '../store.js';

export function register(program: Command, setExit: (code: number) => void): void {
  program
    .command('rm')
    .description('remove documents (run kura gc to reclaim their space)')
    .argument('<digests...>', 'sha256:<64 hex digits>')
    .option('--json', 'one line per digest: {"digest","removed"}')
    .action(async (args: string[], opts: { json?: boolean }, cmd: Command) => {
      const ds = args.map(digest); // all checked before anything is removed
      await withStore(cmd, { readonly: false }, async (store) => {
        for (const d of ds) {
          const removed = await store.delete(d);
          if (!removed) {
            printError(`no document ${d}`);
            setExit(EXIT.error);
          }
          if (opts.json) await writeJson({ digest: d, removed });
        }
      });
    });
}
