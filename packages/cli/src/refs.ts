/**
 * Document references on the command line: a digest, or a path (PATH, PATH@N, PATH@<ISO
 * time>: store.resolve). When a path names nothing, the stored path the user most likely
 * meant: `kura add` stores each file under the path it was given, relative to where it ran,
 * so people ask for `/home/me/docs/a.md` (or `docs/a.md` in another directory) where the
 * store has `docs/a.md` (or `a.md`): the path's trailing parts are tried, longest first.
 */
import type { Store } from '@kura/store';
import type { docRef } from './args.js';
import { isKuraError } from './exit.js';

/** The digest a parsed reference names (NOT_FOUND with a hint for a path that names nothing). */
export async function resolveRef(store: Store, ref: ReturnType<typeof docRef>): Promise<string> {
  if ('digest' in ref) return ref.digest;
  try {
    return await store.resolve(ref.path);
  } catch (e) {
    throw await withPathHint(store, ref.path, e);
  }
}

/**
 * A stored path that `path` ends with and that has what was asked for (`suffix`: @N or
 * @time, else any version); none when `path` itself is stored (then only the version is
 * wrong).
 */
export async function storedPathHint(store: Store, path: string, suffix = ''): Promise<string | undefined> {
  if ((await store.versions(path)).length > 0) return undefined;
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  for (let i = 0; i < parts.length; i++) {
    const candidate = parts.slice(i).join('/');
    if (candidate === path || (await store.versions(candidate)).length === 0) continue;
    if (!suffix || (await store.resolve(candidate + suffix).then(() => true, () => false))) return candidate;
  }
  return undefined;
}

/** `ref` is PATH, PATH@N or PATH@<ISO time> (store.resolve): its path and the rest. */
function splitRef(ref: string): { path: string; suffix: string } {
  const m = /^(.+)(@(?:\d+|\d{4}-\d\d.*))$/.exec(ref);
  return m ? { path: m[1]!, suffix: m[2]! } : { path: ref, suffix: '' };
}

/** A NOT_FOUND for a path names what the user probably meant, when the store has it. */
export async function withPathHint(store: Store, ref: string, e: unknown): Promise<unknown> {
  if (!isKuraError(e, 'NOT_FOUND') && (e as { code?: unknown })?.code !== 'NOT_FOUND') return e;
  const { path, suffix } = splitRef(ref);
  const hint = await storedPathHint(store, path, suffix);
  if (hint === undefined) return e;
  return Object.assign(new Error(`${(e as Error).message}; did you mean ${hint}${suffix}? (kura add stores each file under the path it was given, relative to where it ran)`), { code: 'NOT_FOUND' });
}
