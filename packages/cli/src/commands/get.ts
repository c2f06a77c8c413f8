/**
 * `kura get DIGEST [-o FILE]` and `kura cat DIGEST...`: a document's bytes to stdout (with
 * backpressure), or to FILE. FILE is written as FILE.tmp-<pid> and renamed into place only
 * once every byte has been checked, so damaged data (CORRUPT_DATA, exit 1) never leaves a
 * partial FILE. On stdout, bytes before the damage may already have been written.
 */
import type { Store } from '@kura/store';
import type { Command } from 'commander';
import { open, rename, rm } from 'node:fs/promises';
import { docRef } from '../args.js';
import { CliError, describeError, isKuraError } from '../exit.js';
import { writeBytes } from '../output.js';
import { resolveRef } from '../refs.js';
import { withStore } from '../store.js';

async function toStdout(store: Store, d: string): Promise<void> {
  try {
    for await (const piece of store.get(d)) await writeBytes(piece);
  } catch (e) {
    throw named(d, e);
  }
}

async function toFile(store: Store, d: string, file: string): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  let done = false;
  try {
    const pieces = store.get(d); // NOT_FOUND before any file is created
    const fh = await open(tmp, 'w');
    try {
      for await (const piece of pieces) await fh.write(piece);
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
    done = true;
  } catch (e) {
    throw isKuraError(e) ? named(d, e) : new CliError(`${file}: ${describeError(e)}`);
  } finally {
    if (!done) await rm(tmp, { force: true });
  }
}

/** Damage is reported with the document it was found in (NOT_FOUND already names it). */
function named(d: string, e: unknown): unknown {
  if (isKuraError(e, 'CORRUPT_DATA') && !e.message.includes(d)) return new CliError(`${d}: ${describeError(e)}`);
  return e;
}

export function register(program: Command): void {
  program
    .command('get')
    .description("write a document's bytes to stdout or to a file")
    .argument('<ref>', 'sha256:<64 hex digits> (as printed by kura add), or PATH, PATH@N (version N), PATH@<ISO time>')
    .option('-o, --output <file>', 'write to FILE (atomically: nothing is left behind if the data is damaged)')
    .action(async (arg: string, opts: { output?: string }, cmd: Command) => {
      const ref = docRef(arg);
      await withStore(cmd, { readonly: true }, async (store) => {
        const d = await resolveRef(store, ref);
        if (opts.output === undefined || opts.output === '-') await toStdout(store, d);
        else await toFile(store, d, opts.output);
      });
    });

  program
    .command('cat')
    .description('write documents to stdout, one after another (like kura get to stdout)')
    .argument('<refs...>', 'digests or PATH[@N] references')
    .action(async (args: string[], _opts: unknown, cmd: Command) => {
      const refs = args.map(docRef);
      await withStore(cmd, { readonly: true }, async (store) => {
        for (const ref of refs) await toStdout(store, await resolveRef(store, ref));
      });
    });
}
