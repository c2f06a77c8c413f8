/** How a path on the command line becomes a path in the store (decision 0025). */
import { posix } from 'node:path';
import { usage } from './exit.js';

/**
 * The store path of a command-line argument (decision 0025): normalized and relative, as tar
 * and restic record them — `./a/../b/` is `b`, `/home/me/x` is `home/me/x`, `.` is the empty
 * prefix. A `..` that climbs above where it starts is refused (usage error): the store has no
 * place above its root.
 */
export function storePath(arg: string, option?: '--as' | '--path'): string {
  const n = posix.normalize(arg).replace(/^\/+/, '').replace(/\/+$/, '');
  if (n === '..' || n.startsWith('../')) {
    // (Of an option's value, the fix is another value: `--as ../x` was told to give --as.)
    if (option) throw usage(`${option} ${arg}: a path in the store cannot climb above its root (..): give ${option} a path inside it, such as ${JSON.stringify(n.replace(/^(\.\.\/?)+/, '') || 'docs')}`);
    throw usage(`${arg}: a path that climbs above its start (..) cannot be stored as given; add it from its parent directory, or give --as PREFIX`);
  }
  return n === '.' ? '' : n;
}

/**
 * A path prefix on the command line, as `storePath` reads a path (`./src/` is `src/`), its
 * trailing slash kept: `ls`, `search` and `grep` found nothing under `./src` while `add` and
 * `get` read `./src/x` as `src/x` (a trial).
 */
export function storePrefix(arg: string): string {
  const p = storePath(arg);
  return p && arg.endsWith('/') ? `${p}/` : p;
}
