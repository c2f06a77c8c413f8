/**
 * File stamps of snapshotted directories (FORMAT.md §13.4): one `dir_stamps` row per directory,
 * naming each regular file a snapshot read in it with the stamp it had and the digest its bytes
 * had. A later snapshot names the document of a file whose stamp is unchanged without reading
 * the file. A hint, never a source of bytes: a row that cannot be decoded counts as absent.
 *
 * One row per directory rather than per file (decision 0021): a snapshot of 10,000 files in
 * 100 directories writes and reads 100 rows, and a directory whose files did not change is not
 * written again.
 */
import { hexToBytes } from '../hex.js';
import type { Statements } from './statements.js';

export interface StampedFile {
  /** Absolute, `/`-separated. */
  path: string;
  stamp: string;
  /** Its stamp is not trusted yet (§13.4): it gets no entry. */
  recent: boolean;
  digest: string;
}

/** [name, stamp, 64 hex digits of the SHA-256], sorted by name. */
type Entry = [string, string, string];

const HEX64 = /^[0-9a-f]{64}$/;

/** The directory holding `path`, and the file's name in it. */
function split(path: string): [dir: string, name: string] {
  const i = path.lastIndexOf('/');
  return [i === 0 ? '/' : path.slice(0, i), path.slice(i + 1)];
}

/** Rows of `dir` and of every directory below it: `dir` itself, then "dir/" up to "dir0" ('0' follows '/'). */
function range(dir: string): [string, string, string] {
  const under = dir.endsWith('/') ? dir : `${dir}/`;
  return [dir, under, `${under.slice(0, -1)}0`];
}

/** A row's entries by name; an undecodable row (damaged, tampered) holds none. */
function decode(files: string): Map<string, Entry> {
  const out = new Map<string, Entry>();
  let list: unknown;
  try {
    list = JSON.parse(files);
  } catch {
    return out;
  }
  if (!Array.isArray(list)) return out;
  for (const e of list) {
    if (Array.isArray(e) && e.length === 3 && typeof e[0] === 'string' && typeof e[1] === 'string' && typeof e[2] === 'string' && HEX64.test(e[2])) {
      out.set(e[0], e as Entry);
    }
  }
  return out;
}

/** Whether a snapshot recorded stamps in `dir` or below it. */
export function hasStamps(st: Statements, dir: string): boolean {
  return st.dirStampsAny.get(...range(dir)) !== undefined;
}

/**
 * Per file, the digest its bytes had when a snapshot last read it, if its stamp is unchanged
 * and a document with that digest and size still exists; undefined where it must be read.
 * Call inside one read transaction.
 */
export function cachedDigests(st: Statements, files: readonly { path: string; stamp: string; size: number }[]): (`sha256:${string}` | undefined)[] {
  const rows = new Map<string, Map<string, Entry>>();
  return files.map((f) => {
    const [dir, name] = split(f.path);
    let row = rows.get(dir);
    if (!row) {
      const r = st.dirStampsGet.get(dir);
      row = r ? decode(r.files) : new Map();
      rows.set(dir, row);
    }
    const e = row.get(name);
    if (!e || e[1] !== f.stamp) return undefined;
    return st.docSizeByDigest.get(hexToBytes(e[2]))?.size === f.size ? (`sha256:${e[2]}` as const) : undefined;
  });
}

/**
 * Records the stamps of a snapshot of `root`: `files` are all the regular files it named
 * (`recent` ones get no entry). A directory's row is written only when it changes; rows of
 * directories under `root` without files any more are deleted. Call inside one transaction.
 */
export function recordStamps(st: Statements, root: string, files: readonly StampedFile[]): void {
  const byDir = new Map<string, Entry[]>();
  for (const f of files) {
    if (f.recent) continue;
    const [dir, name] = split(f.path);
    let list = byDir.get(dir);
    if (!list) byDir.set(dir, (list = []));
    list.push([name, f.stamp, f.digest.slice(7)]);
  }
  const before = new Map<string, string>();
  for (const { dir, files } of st.dirStampsUnder.all(...range(root))) {
    if (byDir.has(dir)) before.set(dir, files);
    else st.dirStampsDelete.run(dir);
  }
  for (const [dir, list] of byDir) {
    const files = JSON.stringify(list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
    if (before.get(dir) !== files) st.dirStampsSet.run(dir, files);
  }
}
