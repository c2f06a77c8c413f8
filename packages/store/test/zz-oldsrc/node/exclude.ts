/**
 * Exclude patterns of a snapshot (`snapshot(dir, { exclude })`, `kura snapshot --exclude`),
 * globs in picomatch's syntax (`*`, `?`, `**`, `{a,b}`, `[abc]`), read the way .gitignore
 * reads them:
 * - a pattern without `/` matches an entry's name at any depth (`node_modules`, `*.log`,
 *   `.git`);
 * - a pattern with `/` matches the entry's path from the snapshot's root (`build/out`,
 *   `docs/drafts/**`); a leading `/` or `./` only anchors it there (`/dist`);
 * - a trailing `/` matches directories only (`cache/`).
 * `*` matches names that start with a dot too. An excluded directory is not read at all.
 */
import picomatch from 'picomatch';
import { InvalidInputError } from '@kura/core';

/** Whether the entry at `path` (from the root, `/`-separated) named `name` is left out. */
export type Excluder = (path: string, name: string, isDir: boolean) => boolean;

export function excluder(patterns: readonly string[] | undefined): Excluder | undefined {
  if (patterns === undefined || patterns.length === 0) return undefined;
  if (!Array.isArray(patterns)) throw new InvalidInputError('exclude must be an array of glob patterns', 'exclude');
  const rules = patterns.map((raw) => {
    if (typeof raw !== 'string' || raw.trim() === '' || raw.includes('\0')) {
      throw new InvalidInputError(`an exclude pattern must be a non-empty string without NUL, got ${JSON.stringify(raw)}`, 'exclude');
    }
    let pattern = raw;
    const dirOnly = pattern.endsWith('/');
    if (dirOnly) pattern = pattern.replace(/\/+$/, '');
    const anchored = pattern.startsWith('/') || pattern.startsWith('./');
    pattern = pattern.replace(/^(\.\/|\/)+/, '');
    if (pattern === '' || pattern === '.' || pattern === '..') throw new InvalidInputError(`the exclude pattern ${JSON.stringify(raw)} names nothing in the tree`, 'exclude');
    const byPath = anchored || pattern.includes('/');
    return { match: picomatch(pattern, { dot: true }), byPath, dirOnly };
  });
  return (path, name, isDir) => rules.some((r) => (!r.dirOnly || isDir) && r.match(r.byPath ? path : name));
}
