/**
 * `kura rm REF... [--json]`: a PATH removes that path with all its versions; a digest removes
 * that content from every path and version naming it (decision 0025). What nothing names any
 * more is reclaimed by `kura gc`. Silent on success; a ref that names nothing is reported and
 * makes the exit code 1, the others are still removed. --json prints {"digest","removed"} or {"path","removed"} per ref.
 */
import type { Command } from 'commander';
import { docRef } from '../args.js';
import { EXIT, printError } from '../exit.js';
import { writeJson } from '../output.js';
import { withStore } from '../store.js';

export function register(program: Command, setExit: (code: number) => void): void {
  program
    .command('rm')
    .description('remove paths (with their versions) or content by digest (run kura gc to reclaim space)')
    .argument('<refs...>', 'PATH, or sha256:<64 hex digits> (that content, at every path)')
    .option('--json', 'one line per ref: {"digest","removed"} or {"path","removed"}')
    .action(async (args: string[], opts: { json?: boolean }, cmd: Command) => {
      const refs = args.map(docRef); // all checked before anything is removed
      await withStore(cmd, { readonly: false }, async (store) => {
        for (const ref of refs) {
          const removed = 'digest' in ref ? await store.delete(ref.digest) : await store.deletePath(ref.path);
          if (!removed) {
            printError('digest' in ref ? `no document ${ref.digest} [NOT_FOUND]` : `no path ${ref.path} [NOT_FOUND]`);
            setExit(EXIT.error);
          }
          if (opts.json) await writeJson({ ...ref, removed });
        }
      });
    });
}
