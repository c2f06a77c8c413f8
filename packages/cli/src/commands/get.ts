/**
 * `kura get DIGEST [-o FILE]` and `kura cat DIGEST...`: a document's bytes to stdout (with
 * backpressure), or to FILE. A digest names any document the store holds, a file only
 * snapshots keep too (`kura search --snapshot` hands those out); `--snapshot ID` reads a
 * file by its path in that snapshot. FILE is written as FILE.tmp-<pid> and renamed into place only
 * once every byte has been checked, so damaged data (CORRUPT_DATA, exit 1) never leaves a
 * partial FILE. On stdout, bytes before the damage may already have been written.
 */
import { leavesHole, type Store } from '@kura/store';
import type { Command } from 'commander';
import { open, rename, rm, stat } from 'node:fs/promises';
import { docRef } from '../args.js';
import { CliError, describeError, isKuraError } from '../exit.js';
import { writeBytes } from '../output.js';
import { resolveRef } from '../refs.js';
import { withStore } from '../store.js';
import { interruptible } from '../interrupt.js';

/** The document's bytes, each chunk checked: any document the store holds (NOT_FOUND before a byte otherwise). */
async function pieces(store: Store, d: string): Promise<AsyncIterable<Uint8Array>> {
  return (await store.document(d, { unlisted: true })).stream();
}

async function toStdout(store: Store, d: string): Promise<void> {
  try {
    for await (const piece of await pieces(store, d)) await writeBytes(piece);
  } catch (e) {
    throw named(d, e);
  }
}

async function toFile(store: Store, d: string, file: string, signal: AbortSignal): Promise<void> {
  // A directory (or a name ending in /) is no file to write: said as such, before anything is
  // made (`-o outdir/` made outdir/.tmp-PID, then failed "not a directory").
  if (file.endsWith('/') || (await stat(file).then((s) => s.isDirectory(), () => false))) {
    throw new CliError(`${file}: is a directory: -o takes the file to write (${file.replace(/\/+$/, '')}/NAME) [EISDIR]`);
  }
  const tmp = `${file}.tmp-${process.pid}`;
  let done = false;
  try {
    const bytes = await pieces(store, d); // NOT_FOUND before any file is created
    const fh = await open(tmp, 'w');
    try {
      let at = 0;
      for await (const piece of bytes) {
        signal.throwIfAborted(); // Ctrl-C: the temporary file goes (below)
        // Zeros are left holes, as a restore leaves them (decision 0074): a disk image comes
        // back taking the disk its data takes.
        if (!leavesHole(piece)) for (let done = 0; done < piece.length; ) done += (await fh.write(piece, done, piece.length - done, at + done)).bytesWritten;
        at += piece.length;
      }
      await fh.truncate(at); // (the length of a file that ends in a hole)
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

/** What REF names: in a snapshot, the file at that path (a digest is taken as it is). */
async function digestOf(store: Store, ref: ReturnType<typeof docRef>, snapshot: string | undefined): Promise<string> {
  if (snapshot === undefined || 'digest' in ref) return resolveRef(store, ref);
  return (await store.snapshotFile(snapshot, ref.path)).digest;
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
    .option('-o, --output <file>', 'write to FILE (atomically: nothing is left behind if the data is damaged or Ctrl-C stops it)')
    .option('--snapshot <id>', 'REF is the path of a file in this snapshot (an id or its first digits)')
    .action(async (arg: string, opts: { output?: string; snapshot?: string }, cmd: Command) => {
      const ref = docRef(arg);
      await withStore(cmd, { readonly: true }, async (store) => {
        const d = await digestOf(store, ref, opts.snapshot);
        if (opts.output === undefined || opts.output === '-') await toStdout(store, d);
        else await interruptible((signal) => toFile(store, d, opts.output!, signal));
      });
    });

  program
    .command('cat')
    .description('write documents to stdout, one after another (like kura get to stdout)')
    .argument('<refs...>', 'digests or PATH[@N] references')
    .option('--snapshot <id>', 'the REFS are paths of files in this snapshot (an id or its first digits)')
    .action(async (args: string[], opts: { snapshot?: string }, cmd: Command) => {
      const refs = args.map(docRef);
      await withStore(cmd, { readonly: true }, async (store) => {
        for (const ref of refs) await toStdout(store, await digestOf(store, ref, opts.snapshot));
      });
    });
}
