/**
 * What `kura add PATH...` adds, in order: each argument in turn; a directory's regular files
 * depth-first in sorted name order (so the same tree always adds in the same order). Inside a
 * directory, symlinks to directories are skipped (never followed, so no cycles), as are FIFOs,
 * sockets and devices; a symlink to a regular file adds the file's bytes under the link's
 * path; a symlink that points nowhere is reported like any unreadable file.
 */
import { lstat, readdir, stat } from 'node:fs/promises';
import { basename } from 'node:path';

export interface InputFile {
  kind: 'file';
  /** What to read: the argument as given, or argument/relative/path for a file under a directory. */
  file: string;
  /** The document's `path` metadata. */
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

/**
 * Lists the inputs of `args`, streaming. `pathOption` (--path) names the document of a single
 * file or stdin argument, and prefixes the paths of a directory's files.
 */
export async function* listInputs(args: string[], pathOption: string | undefined): AsyncGenerator<Input> {
  for (const arg of args) {
    if (arg === STDIN) {
      yield { kind: 'file', file: STDIN, docPath: pathOption, size: 0 };
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
      yield* walk(arg, pathOption ? pathOption.replace(/\/+$/, '') : '');
    } else if (st.isFile()) {
      yield { kind: 'file', file: arg, docPath: pathOption ?? basename(arg), size: st.size };
    } else {
      yield { kind: 'problem', file: arg, error: new Error('not a regular file') };
    }
  }
}

async function* walk(dir: string, prefix: string): AsyncGenerator<Input> {
  let names: string[];
  try {
    names = (await readdir(dir)).sort(byName);
  } catch (error) {
    yield { kind: 'problem', file: dir, error };
    return;
  }
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
