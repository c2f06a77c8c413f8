/**
 * `kura add PATH... [--tag T]... [--meta k=v]... [--as PREFIX | --path P] [--type MEDIA]
 * [--json] [--durability full|normal]`: stores files and directory trees (walk.ts says what a
 * tree adds), in input order, each under its path as given on the command line (normalized
 * and relative: walk.ts `storePath`; decision 0025). `--json` prints one line per file once it
 * is committed: {"path","entry","digest","size","chunks","newChunks","newBytes"}, where `path`
 * is the file as given (argument/relative/path under a directory argument) and `entry` the
 * path it is stored under (null for stdin without --path). Unreadable files are reported on
 * stderr and the rest still added; the exit code is then 1.
 */
import { SourceChangedError, detectMediaType, type PutMeta, type PutResult, type Store } from '@kura/store';
import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import { lstatSync, realpathSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { collect, durability, keyValues, wholeNumber } from '../args.js';
import { CliError, EXIT, describeError, isKuraError, usage } from '../exit.js';
import { bytes, rate, ratio, shownPath } from '../format.js';
import { writeJson } from '../output.js';
import { interruptible } from '../interrupt.js';
import { Progress } from '../progress.js';
import { withStore } from '../store.js';
import { STDIN, listInputs, totalSize, type Input, type InputFile } from '../walk.js';

interface AddOptions {
  jobs?: string;
  tag?: string[];
  meta?: string[];
  path?: string;
  as?: string;
  type?: string;
  json?: boolean;
  durability?: string;
}

/** Counts what has been read and stored so far, for the bar and the summary. */
interface Tally {
  read: number;
  logical: number;
  stored: number;
  documents: number;
  failed: number;
}

/**
 * Reads of a file that keeps changing while it is read, at most: each read that saw it change
 * is given up before anything of it is stored (it may mix the file's old and new bytes, a state
 * the file never had: a trial's `kura add` of a file being written stored such a version).
 */
const READ_TRIES = 3;

/** Whether `e` is a put given up because its file changed while it was read (SourceChangedError). */
const changedWhileRead = (e: unknown) => isKuraError(e, 'INVALID_INPUT') && (e as { field?: string }).field === 'source';

/**
 * The input's bytes in 1 MiB pieces, counted as they are read; a file's size and times are looked at before
 * and after, and a file that changed between fails the put at its end (SourceChangedError),
 * before it commits.
 */
async function* counted(input: InputFile, onBytes: (n: number) => void): AsyncGenerator<Uint8Array> {
  if (input.file === STDIN) {
    for await (const piece of process.stdin) {
      onBytes((piece as Uint8Array).length);
      yield piece as Uint8Array;
    }
    return;
  }
  const file = await open(input.file, 'r');
  try {
    const before = await file.stat();
    for (;;) {
      const piece = new Uint8Array(1 << 20);
      const { bytesRead } = await file.read(piece, 0, piece.length, null);
      if (bytesRead === 0) break;
      onBytes(bytesRead);
      yield bytesRead === piece.length ? piece : piece.subarray(0, bytesRead);
    }
    const after = await file.stat();
    if (after.size !== before.size || after.mtimeMs !== before.mtimeMs || after.ctimeMs !== before.ctimeMs) throw new SourceChangedError();
  } finally {
    await file.close();
  }
}

/** The file a path names, links resolved (the workers read files without following a link). */
function target(file: string): string {
  try {
    return lstatSync(file).isSymbolicLink() ? realpathSync(file) : file;
  } catch {
    return file; // (its put says what is wrong with it)
  }
}

export function register(program: Command, setExit: (code: number) => void): void {
  program
    .command('add')
    .description('store files and directory trees (recursively), printing each digest')
    .argument('<paths...>', 'files and directories to add (- for standard input)')
    .option('--tag <tag>', 'tag every document (repeatable)', collect)
    .option('--meta <key=value>', 'set metadata on every document (repeatable)', collect)
    .option('--as <prefix>', 'store the files under PREFIX instead of their own directory part (a file: PREFIX/<name>; a directory: its files under PREFIX)')
    .option('--path <path>', 'the path to store a single file or stdin under')
    .option('--type <media-type>', 'media type of every document (default: guessed from the extension)')
    .option('--json', 'one JSON line per file: {"path","entry","digest","size","chunks","newChunks","newBytes","version","versionMade"}')
    .option('--durability <mode>', 'full: fsync every document before it is reported; normal (default): faster')
    .option('--jobs <n>', `worker threads that chunk, hash and compress when adding several files (default ${availableParallelism()}; 1 = this thread)`)
    .addHelpText(
      'after',
      `
Directories are added recursively in sorted order; only regular files are stored (symlinks to
directories are not followed). Each file is stored under its path as you name it, normalized
and relative, like tar: "kura add notes docs" stores notes/... and docs/...; "./a/../b" is
"b"; "/home/me/x" is "home/me/x"; a ".." above the start is refused. Identical files at two
paths are two entries sharing one document (stored once). In --json output, "path" is the file
as you named it, "entry" the path it is stored under, "newBytes" the bytes this file added to
pack files (0 when all of it was already stored), "version" the entry's version after the put and
"versionMade" whether this put made it (false: the latest version already had these bytes).`,
    )
    .action(async (paths: string[], opts: AddOptions, cmd: Command) => {
      if (opts.path !== undefined && paths.length !== 1) throw usage('--path needs exactly one file or directory to add');
      if (opts.path !== undefined && opts.as !== undefined) throw usage('give --path (one exact path) or --as (a prefix), not both');
      const meta = keyValues(opts.meta ?? [], '--meta', false) as Record<string, string>;
      const mode = durability(opts.durability);
      const jobs = opts.jobs === undefined ? availableParallelism() : wholeNumber(opts.jobs, '--jobs');
      if (jobs < 1 || jobs > 64) throw usage(`--jobs must be between 1 and 64, got ${jobs}`);
      // Ctrl-C stops at once and says what it leaves (it exited 130 without a word: a trial).
      // Nothing is lost by stopping: each file reported was committed, and a file's put is
      // whole or nothing.
      await interruptible(() => withStore(cmd, { readonly: false, durability: mode }, async (store) => {
        // Listed first (cheap: names and sizes) so the progress bar knows the total.
        const inputs: Input[] = [];
        for await (const input of listInputs(paths, { path: opts.path, as: opts.as })) inputs.push(input);
        const t: Tally = { read: 0, logical: 0, stored: 0, documents: 0, failed: 0 };
        const bar = new Progress(totalSize(inputs), !opts.json, ({ value, total, elapsed }) =>
          [
            `${bytes(value)}/${bytes(total)}`,
            rate(value, elapsed / 1000),
            `dedup so far ${t.stored > 0 ? ratio(t.logical / t.stored) : t.logical > 0 ? '∞' : '-'}`,
            `${t.documents} files`,
          ].join(' | '),
        );
        const failed = (input: Input, e: unknown) => {
          // Options the store rejects are the caller's syntax: stop at once (exit 2).
          if (isKuraError(e, 'INVALID_INPUT') && !String((e as { field?: string }).field).startsWith('path') && !changedWhileRead(e)) throw e;
          bar.error(`${input.file === STDIN ? 'standard input' : shownPath(input.file)}: ${describeError(e)}`);
          t.failed++;
          // A full disk fails every file after it: one line, not one per file (a trial printed
          // 1,261 of them). What was added before stays; add again once there is room.
          if (isKuraError(e, 'STORAGE_FULL')) throw new CliError(`stopped after ${t.documents} file${t.documents === 1 ? '' : 's'}: the disk under the store is full; free space (kura gc, or elsewhere), then add again (what is stored stays) [STORAGE_FULL]`);
        };
        const report = async (input: InputFile, r: PutResult) => {
          t.documents++;
            t.logical += r.size;
            t.stored += r.newBytesStored;
            const line = {
              path: input.file,
              entry: input.docPath ?? null,
              digest: r.digest,
              size: r.size,
              chunks: r.chunks,
              newChunks: r.newChunks,
              newBytes: r.newBytesStored,
              // The entry's version after the put (null without a path): a script asking
              // versions() afterwards could find another writer's.
              version: r.version ?? null,
              versionMade: r.versionMade ?? false,
            };
            if (opts.json) await writeJson(line);
            else await bar.line(`${r.digest}  ${shownPath(input.file)}${input.docPath !== undefined && input.docPath !== input.file ? ` as ${shownPath(input.docPath)}` : ''}  ${bytes(r.size)} (${bytes(r.newBytesStored)} new)`);
        };
        /**
         * A file put on this thread, read again while it changes as it is read: `tries` reads at
         * most (its bytes counted by the progress bar on the first of them when `counting`).
         */
        const putHere = async (input: InputFile, tries: number, counting: boolean) => {
          for (let n = 1; n <= tries; n++) {
            const count = counting && n === 1;
            try {
              return await report(input, await put(store, input, opts, meta, (k) => count && bar.set((t.read += k))));
            } catch (e) {
              if (!changedWhileRead(e)) return failed(input, e);
            }
          }
          failed(input, new SourceChangedError(`changed while it was read, ${READ_TRIES} times: not stored (what was read mixed its old and new bytes); add it again once it is written`));
        };
        try {
          for (const input of inputs) if (input.kind === 'problem') failed(input, input.error);
          const files = inputs.filter((i): i is InputFile => i.kind === 'file');
          if (jobs > 1 && files.length > 1 && !files.some((f) => f.file === STDIN)) {
            // Several files: worker threads run the byte work, this thread commits, in order. A
            // file that changed while a worker read it is read again here, after the others.
            let i = 0;
            const again: InputFile[] = [];
            const todo = files.map((f) => ({ path: target(f.file), meta: metaFor(f, opts, meta) }));
            for await (const o of store.putFiles(todo, { workers: Math.min(jobs, files.length), refuseChanged: true, heldOpen: 'read' })) {
              const input = files[i++]!;
              if (changedWhileRead(o.error)) again.push(input);
              else if (o.error !== undefined) failed(input, o.error);
              else await report(input, o.result!);
              bar.set((t.read += input.size));
            }
            for (const input of again) await putHere(input, READ_TRIES - 1, false);
          } else {
            for (const input of files) await putHere(input, READ_TRIES, true);
          }
          if (!opts.json) {
            const failed = t.failed ? `, ${t.failed} failed` : '';
            const saved = t.stored < t.logical ? `, ${bytes(t.logical - t.stored)} saved by dedup and compression` : '';
            await bar.line(`added ${t.documents} file${t.documents === 1 ? '' : 's'}${failed}: ${bytes(t.logical)}, ${bytes(t.stored)} newly stored${saved}`);
          }
        } finally {
          bar.stop();
        }
        if (t.failed) setExit(EXIT.error);
      }), { stopped: 'the files listed above are stored; the others are not (add again: nothing is stored twice)', atOnce: () => true });
    });
}

function metaFor(input: InputFile, opts: AddOptions, meta: Record<string, string>): PutMeta {
  const mediaType = opts.type ?? (input.docPath ? detectMediaType(input.docPath) : undefined);
  return {
    ...(input.docPath !== undefined ? { path: input.docPath } : {}),
    ...(mediaType !== undefined ? { mediaType } : {}),
    ...(opts.tag?.length ? { tags: opts.tag } : {}),
    ...(Object.keys(meta).length ? { meta } : {}),
  };
}

function put(store: Store, input: InputFile, opts: AddOptions, meta: Record<string, string>, onBytes: (n: number) => void): Promise<PutResult> {
  return store.put(counted(input, onBytes), metaFor(input, opts, meta));
}
