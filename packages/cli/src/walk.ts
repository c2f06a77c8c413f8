/**
 * What `kura add PATH...` adds, in order: each argument in turn; a directory's regular files
 * depth-first in sorted name order (so the same tree always adds in the same order). Inside a
 * directory, symlinks to directories are skipped (never followed, so no cycles), as are FIFOs,
 * sockets and devices; a symlink to a regular file adds the file's bytes under the link's
 * path; a symlink that points nowhere is reported like any unreadable file.
 */
import { lstat, readdir, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { escapedName } from '@kura/store';
import { storePath } from './store-path.js';
import { usage } from './exit.js';

export interface InputFile {
  kind: 'file';
  /** What to read: the argument as given, or argument/relative/path for a file under a directory. */
  file: string;
  /** The path it is stored under (decision 0025); undefined: a put without a path (stdin). */
  docPath: string | undefined;
  /** The size when listed (for the progress total). */
  size: number;
}

export interface InputProblem {
  kind: 'problem';
  file: string;
  error: unknown;
}

export type Input = InputFile | InputProblem;

/** Standard input, named `-`. */
export const STDIN = '-';

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function under(dir: string, name: string): string {
  return dir.endsWith('/') ? `${dir}${name}` : `${dir}/${name}`;
}

/** Where the inputs go: their own paths, exactly `path` (one file or stdin), or under `as`. */
export interface Placement {
  /** --path: the store path of the one file or stdin argument (for a directory, its prefix). */
  path?: string | undefined;
  /** --as: a prefix replacing each argument's own directory part. */
  as?: string | undefined;
}

/**
 * Lists the inputs of `args`, streaming. A file is stored under its path as given (normalized,
 * `storePath`), a directory's files under the directory's path joined with theirs; `--as P`
 * puts a file argument at P/<its name> and a directory's files under P; `--path P` names the
 * one file or stdin argument (and prefixes a directory's files, as --as does). Every argument
 * is checked before anything is listed.
 */
export async function* listInputs(args: string[], place: Placement = {}): AsyncGenerator<Input> {
  const prefix = place.as !== undefined ? storePath(place.as, '--as') : undefined;
  const named = place.path !== undefined ? storePath(place.path, '--path') : undefined;
  const join = (a: string, b: string) => (a && b ? `${a}/${b}` : a || b);
  if (args.filter((a) => a === STDIN).length > 1) throw usage('standard input (-) can be read once: give - one time');
  if (prefix !== undefined && named === undefined && args.includes(STDIN)) {
    throw usage(`standard input has no name for --as to put under ${prefix || '.'}: give it one with --path`);
  }
  // An argument's own path is its store path only without --as or --path, which replace it:
  // `../notes/car.md --as x` is stored as x/car.md (it was refused as climbing above its start).
  const own = args.map((a) => (a === STDIN || named !== undefined || prefix !== undefined ? '' : storePath(a)));
  for (const [i, arg] of args.entries()) {
    if (arg === STDIN) {
      yield { kind: 'file', file: STDIN, docPath: named, size: 0 };
      continue;
    }
    let st;
    try {
      st = await stat(arg);
    } catch (error) {
      yield { kind: 'problem', file: arg, error };
      continue;
    }
    if (st.isDirectory()) {
      yield* walk(arg, named ?? prefix ?? own[i]!);
    } else if (st.isFile()) {
      const path = named ?? (prefix !== undefined ? join(prefix, basename(arg)) : own[i]!);
      if (!path) {
        yield { kind: 'problem', file: arg, error: new Error('names no path to store it under') };
        continue;
      }
      yield { kind: 'file', file: arg, docPath: path, size: st.size };
    } else {
      yield { kind: 'problem', file: arg, error: new Error('not a regular file') };
    }
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Linux allows any bytes but `/` and NUL in a name; Kura stores paths as UTF-8 text. Read as a
 * string, such a name would come back with U+FFFD in it and name no file at all.
 */
export function notUtf8(): Error {
  return Object.assign(new Error('the file name is not valid UTF-8, and Kura stores paths as UTF-8 text: rename it (e.g. with convmv) to store it'), {
    code: 'NOT_UTF8',
  });
}

async function* walk(dir: string, prefix: string): AsyncGenerator<Input> {
  const names: string[] = [];
  try {
    for (const raw of await readdir(dir, { encoding: 'buffer' })) {
      let name: string;
      try {
        name = UTF8.decode(raw);
      } catch {
        const file = under(dir, escapedName(raw));
        yield { kind: 'problem', file, error: notUtf8() };
        continue;
      }
      names.push(name);
    }
  } catch (error) {
    yield { kind: 'problem', file: dir, error };
    return;
  }
  names.sort(byName);
  for (const name of names) {
    const file = under(dir, name);
    const docPath = prefix ? `${prefix}/${name}` : name;
    let st;
    try {
      st = await lstat(file);
      if (st.isSymbolicLink()) {
        st = await stat(file);
        if (st.isDirectory()) continue; // not followed
      } else if (st.isDirectory()) {
        yield* walk(file, docPath);
        continue;
      }
    } catch (error) {
      yield { kind: 'problem', file, error };
      continue;
    }
    if (st.isFile()) yield { kind: 'file', file, docPath, size: st.size };
  }
}

/** Total bytes of the regular files among inputs (for the progress bar). */
export function totalSize(inputs: Input[]): number {
  return inputs.reduce((n, i) => n + (i.kind === 'file' ? i.size : 0), 0);
}
