/**
 * Directory snapshots (FORMAT.md §13), platform-neutral: tree objects in their canonical
 * encoding, committing a snapshot with the holds it adds, releasing one, walking, diffing and
 * sizing them. Reading a directory and writing files back are the platform's (node/snapshots.ts).
 */
import { CorruptDataError, InvalidInputError, sha256, type Digest } from '@kura/core';
import { purgeDocument } from './entries.js';
import { AmbiguousError, NotFoundError } from '../errors.js';
import { formatDigest, hexToBytes, parseDigest, parseDigestInto, randomHex } from '../hex.js';
import { derivedSnapshotId } from './schema.js';
import { decodeManifest } from '../bytes/manifest.js';
import { storedShare } from '../bytes/pack-record.js';
import type { SnapshotRow, Statements } from './statements.js';

export const TREE_FORMAT = 'kura-tree/1';

/** The digest a tree's entry holds, decoded in place (a statement copies what it binds): one per file of a first snapshot. */
const HELD = new Uint8Array(32);

export interface FileEntry {
  type: 'file';
  name: string;
  /** Permission bits (mode & 0o7777). */
  mode: number;
  size: number;
  digest: Digest;
  /** Modification time, ms since the epoch (absent when the snapshot does not record times). */
  mtime?: number;
}

export interface SymlinkEntry {
  type: 'symlink';
  name: string;
  target: string;
}

/** A directory as stored: its entries name subtrees by digest. */
export interface DirEntry {
  type: 'dir';
  name: string;
  mode: number;
  tree: Digest;
  mtime?: number;
}

export type TreeEntry = FileEntry | DirEntry | SymlinkEntry;

/** A directory as given to `createSnapshot`: subdirectories inline, files already put. */
export interface DirNode {
  type: 'dir';
  name: string;
  mode: number;
  mtime?: number;
  entries: (FileEntry | SymlinkEntry | DirNode)[];
}

export interface SnapshotInfo {
  /** 32 hex digits from the log (FORMAT.md §13, snapshot ids); any unique prefix of 4 or more names it. */
  id: string;
  label: string | null;
  createdAt: string;
  /** Files in the tree (symlinks and directories not counted). */
  files: number;
  /** Sum of the files' sizes. */
  bytes: number;
  /** The root tree's digest. */
  tree: Digest;
  /** Its tags (`kura snapshot --tag`), for retention's `keep-tag` and to find it by. */
  tags: string[];
  /** Kept whatever a retention policy says (`kura pin`). */
  pinned: boolean;
  /**
   * Minutes east of UTC where it was made (absent for snapshots from before schema 22):
   * retention counts its hours, days, weeks, months and years there, as restic does.
   */
  utcOffset?: number;
}

const MAX_NAME = 1024;

/** Why a name cannot be an entry of a tree, or undefined when it can. */
export function badName(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return 'an empty name';
  if (name === '.' || name === '..') return `the name ${JSON.stringify(name)}`;
  if (name.includes('/') || name.includes('\\') || name.includes('\0')) return `a name with a separator or NUL: ${JSON.stringify(name)}`;
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(name)) return 'a name that is not valid UTF-8';
  if (name.length > MAX_NAME) return 'a name longer than 1024 characters';
  return undefined;
}

const utf8 = new TextEncoder();
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}
/**
 * Entry order: the UTF-8 bytes of the names (not UTF-16 code units, which order differently
 * beyond the BMP). Plain comparison where both names are ASCII (the common case) agrees.
 */
const ASCII = /^[\x00-\x7f]*$/;
const byName = (a: { name: string }, b: { name: string }) =>
  ASCII.test(a.name) && ASCII.test(b.name) ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : compareBytes(utf8.encode(a.name), utf8.encode(b.name));

/** The canonical encoding: fixed key order, entries sorted by the UTF-8 bytes of their names. */
export function encodeTree(entries: TreeEntry[]): Uint8Array {
  const sorted = [...entries].sort(byName);
  for (let i = 0; i < sorted.length; i++) {
    const why = badName(sorted[i]!.name);
    if (why) throw new InvalidInputError(`a tree cannot hold ${why}`, 'name');
    if (i > 0 && sorted[i - 1]!.name === sorted[i]!.name) throw new InvalidInputError(`two entries named ${JSON.stringify(sorted[i]!.name)}`, 'name');
  }
  const canonical = sorted.map((e) => {
    if (e.type === 'file') {
      return e.mtime === undefined
        ? { name: e.name, type: e.type, mode: e.mode, size: e.size, digest: e.digest }
        : { name: e.name, type: e.type, mode: e.mode, size: e.size, digest: e.digest, mtime: e.mtime };
    }
    if (e.type === 'dir') {
      return e.mtime === undefined ? { name: e.name, type: e.type, mode: e.mode, tree: e.tree } : { name: e.name, type: e.type, mode: e.mode, tree: e.tree, mtime: e.mtime };
    }
    return { name: e.name, type: e.type, target: e.target };
  });
  return utf8.encode(JSON.stringify({ format: TREE_FORMAT, entries: canonical }));
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const isInt = (v: unknown, min = 0) => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;

/**
 * Decodes and checks a stored tree. Anything that does not match the format — a tampered or
 * damaged row — is CORRUPT_DATA; names are checked again so a crafted tree cannot smuggle a
 * path separator or `..` into a restore.
 */
export function decodeTree(body: Uint8Array, digest: string): TreeEntry[] {
  const fail = (why: string) => new CorruptDataError(`tree ${digest}: ${why}`, 'tree', { digest });
  if (sha256(body) !== digest) throw fail('its bytes do not hash to its digest');
  let v: { format?: unknown; entries?: unknown };
  try {
    v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    throw fail('not valid JSON');
  }
  if (v.format !== TREE_FORMAT || !Array.isArray(v.entries)) throw fail(`not a ${TREE_FORMAT} object`);
  return v.entries.map((e: Record<string, unknown>) => {
    const why = badName(e?.name);
    if (why) throw fail(`it holds ${why}`);
    if (e.type === 'file' && isInt(e.mode) && isInt(e.size) && typeof e.digest === 'string' && DIGEST.test(e.digest) && (e.mtime === undefined || isInt(e.mtime, -8.64e15))) {
      return e as unknown as FileEntry;
    }
    if (e.type === 'dir' && isInt(e.mode) && typeof e.tree === 'string' && DIGEST.test(e.tree) && (e.mtime === undefined || isInt(e.mtime, -8.64e15))) {
      return e as unknown as DirEntry;
    }
    if (e.type === 'symlink' && typeof e.target === 'string' && e.target.length > 0 && !e.target.includes('\0')) return e as unknown as SymlinkEntry;
    throw fail(`an entry is malformed: ${JSON.stringify(e).slice(0, 200)}`);
  });
}

export function readTree(st: Statements, digest: string): TreeEntry[] {
  const row = st.treeGet.get(parseDigest(digest));
  if (!row) throw new CorruptDataError(`tree ${digest} is missing`, 'missing-tree', { digest });
  return decodeTree(row.body, digest);
}

/**
 * Stores a snapshot of `root` in one transaction (the caller's): encodes every directory
 * bottom-up, inserts the trees that are new, and adds the holds they make — a new tree holds
 * its files and subtrees; the snapshot holds its root. Linear in the number of entries.
 */
export function commitSnapshot(st: Statements, root: DirNode, label: string | null, now: number, uid: string | undefined, tags: readonly string[] = [], utcOffset?: number): SnapshotInfo {
  let files = 0;
  let bytes = 0;
  const stored = new Map<DirNode, Digest>();
  const store = (dir: DirNode): Digest => {
    const entries: TreeEntry[] = dir.entries.map((e) => {
      if (e.type !== 'dir') {
        if (e.type === 'file') {
          files++;
          bytes += e.size;
        }
        return e;
      }
      const tree = stored.get(e)!;
      stored.delete(e);
      return e.mtime === undefined ? { type: 'dir', name: e.name, mode: e.mode, tree } : { type: 'dir', name: e.name, mode: e.mode, tree, mtime: e.mtime };
    });
    const body = encodeTree(entries);
    const digest = sha256(body);
    const key = hexToBytes(digest.slice(7));
    if (st.treeInsert.run(key, body).changes === 1) {
      for (const e of entries) {
        if (e.type === 'file') {
          if (st.docHoldByDigest.run(1, parseDigestInto(e.digest, HELD)).changes !== 1) {
            throw new NotFoundError(`no document ${e.digest} for ${e.name}: put the files before the snapshot`);
          }
        } else if (e.type === 'dir') {
          st.treeHold.run(1, parseDigestInto(e.tree, HELD));
        }
      }
    }
    return digest;
  };
  // Bottom-up without recursion: a tree 1,900 directories deep overflowed the stack (a trial).
  const todo: { dir: DirNode; next: number }[] = [{ dir: root, next: 0 }];
  let tree: Digest | undefined;
  while (todo.length) {
    const top = todo[todo.length - 1]!;
    const e = top.dir.entries[top.next];
    if (e !== undefined) {
      top.next++;
      if (e.type === 'dir') todo.push({ dir: e, next: 0 });
      continue;
    }
    todo.pop();
    const digest = store(top.dir);
    if (todo.length) stored.set(top.dir, digest);
    else tree = digest;
  }
  if (tree === undefined) throw new Error('unreachable: the root is stored last');
  st.treeHold.run(1, parseDigest(tree));
  const key = parseDigest(tree);
  const rowid = Number(st.snapshotInsert.run(key, label, now, files, bytes, uid ?? null, tags.length ? JSON.stringify(tags) : null, utcOffset ?? null).lastInsertRowid);
  // An operation from before ids came from the log: the id its row derives (schema.ts).
  const id = uid ?? derivedSnapshotId({ id: rowid, created_at: now, tree: key });
  if (uid === undefined) st.snapshotSetUid.run(id, rowid);
  return { id, label, createdAt: new Date(now).toISOString(), files, bytes, tree, tags: [...tags], pinned: false, ...(utcOffset !== undefined ? { utcOffset } : {}) };
}

export function snapshotInfo(row: SnapshotRow): SnapshotInfo {
  return { id: row.uid, label: row.label, createdAt: new Date(row.created_at).toISOString(), files: row.files, bytes: row.bytes, tree: formatDigest(row.tree), tags: snapshotTags(row), pinned: row.pinned === 1, ...(row.utc_offset !== null && row.utc_offset !== undefined ? { utcOffset: row.utc_offset } : {}) };
}

/** A snapshot row's tags (none before schema 16). */
export function snapshotTags(row: Pick<SnapshotRow, 'tags'>): string[] {
  return row.tags ? (JSON.parse(row.tags) as string[]) : [];
}

/** A new snapshot's id: 32 random hex digits (128 bits), drawn by the writer and logged. */
export function newSnapshotId(): string {
  return randomHex(16);
}

const SNAPSHOT_REF = /^[0-9a-f]{4,32}$/;

/**
 * The snapshot an id names: the whole id or a prefix of at least 4 of its digits, as git
 * takes a commit's (INVALID_INPUT when it is not one, NOT_FOUND, AMBIGUOUS when the prefix
 * names several). `field`: what the caller's own parameter is called (a search's `snapshot`).
 */
export function requireSnapshot(st: Statements, ref: string, field = 'id'): SnapshotRow {
  if (typeof ref !== 'string' || !SNAPSHOT_REF.test(ref)) throw new InvalidInputError(`a snapshot id is 4 to 32 hex digits (a prefix of one), not ${JSON.stringify(ref)}`, field);
  const rows = st.snapshotsByPrefix.all(ref, `${ref}g`);
  if (rows.length === 0) throw new NotFoundError(`no snapshot ${ref}`);
  if (rows.length > 1) {
    const ids = rows.map((r) => r.uid);
    throw new AmbiguousError(`snapshot id ${ref} names several snapshots (${ids.map((i) => i.slice(0, 12)).join(', ')}, ...): give more of its digits`, { snapshots: ids });
  }
  return rows[0]!;
}

/**
 * Removes a snapshot (in the caller's transaction): releases its root; a tree whose holds reach
 * 0 is deleted and releases its entries; a document whose holds reach 0 and that no entry or
 * version names is deleted, its chunks left to GC.
 */
export function releaseSnapshot(st: Statements, row: SnapshotRow): void {
  st.snapshotDelete.run(row.id);
  const stack = [formatDigest(row.tree)];
  while (stack.length) {
    const digest = stack.pop()!;
    const key = parseDigest(digest);
    st.treeHold.run(-1, key);
    const tree = st.treeGet.get(key);
    if (!tree || tree.holds > 0) continue;
    const entries = decodeTree(tree.body, digest);
    st.treeDelete.run(key);
    for (const e of entries) {
      if (e.type === 'dir') stack.push(e.tree);
      else if (e.type === 'file') {
        const doc = st.docAnyByDigest.get(parseDigest(e.digest));
        if (!doc) continue;
        st.docHold.run(-1, doc.id);
        if (doc.holds <= 1 && doc.refs <= 0) purgeDocument(st, doc);
      }
    }
  }
}

/** One entry of a walk: its path below the root (`/`-separated) and the entry. */
export interface WalkEntry {
  path: string;
  entry: TreeEntry;
}

/** The entry at `path` (`/`-separated, from the tree's root) under a tree, read one directory at a time; undefined when none. */
export function findInTree(st: Statements, digest: string, path: string): TreeEntry | undefined {
  let tree = digest;
  const names = path.split('/');
  for (let i = 0; i < names.length; i++) {
    const entry = readTree(st, tree).find((e) => e.name === names[i]);
    if (!entry || i === names.length - 1) return entry;
    if (entry.type !== 'dir') return undefined;
    tree = entry.tree;
  }
  return undefined;
}

/** Every entry under a tree, depth first, a directory before its contents, names in order. */
export function* walkTree(st: Statements, digest: string, prefix = ''): Generator<WalkEntry> {
  // An explicit stack, not nested generators: each level of those was a frame every entry
  // below it passed through, and 1,900 levels overflowed the stack (a trial).
  const todo: { entries: TreeEntry[]; next: number; prefix: string }[] = [{ entries: readTree(st, digest), next: 0, prefix }];
  while (todo.length) {
    const top = todo[todo.length - 1]!;
    const entry = top.entries[top.next++];
    if (entry === undefined) {
      todo.pop();
      continue;
    }
    const path = top.prefix ? `${top.prefix}/${entry.name}` : entry.name;
    yield { path, entry };
    if (entry.type === 'dir') todo.push({ entries: readTree(st, entry.tree), next: 0, prefix: path });
  }
}

export interface SnapshotDiff {
  added: WalkEntry[];
  removed: WalkEntry[];
  /** Same path, other content: digest, type, mode or link target (a: before, b: after). */
  changed: { path: string; a: TreeEntry; b: TreeEntry }[];
}

/** Differences between two trees; subtrees with equal digests are skipped without reading. */
export function diffTrees(st: Statements, a: string, b: string): SnapshotDiff {
  const out: SnapshotDiff = { added: [], removed: [], changed: [] };
  const all = (list: WalkEntry[], w: WalkEntry) => {
    list.push(w);
    if (w.entry.type === 'dir') for (const sub of walkTree(st, w.entry.tree, w.path)) list.push(sub);
  };
  const step = (ta: string, tb: string, prefix: string) => {
    if (ta === tb) return;
    const ea = readTree(st, ta);
    const eb = readTree(st, tb);
    let i = 0;
    let j = 0;
    const at = (name: string) => (prefix ? `${prefix}/${name}` : name);
    while (i < ea.length || j < eb.length) {
      const c = i >= ea.length ? 1 : j >= eb.length ? -1 : byName(ea[i]!, eb[j]!);
      if (c < 0) {
        all(out.removed, { path: at(ea[i]!.name), entry: ea[i]! });
        i++;
      } else if (c > 0) {
        all(out.added, { path: at(eb[j]!.name), entry: eb[j]! });
        j++;
      } else {
        const x = ea[i++]!;
        const y = eb[j++]!;
        const path = at(x.name);
        if (x.type === 'dir' && y.type === 'dir') {
          if (x.mode !== y.mode) out.changed.push({ path, a: x, b: y });
          step(x.tree, y.tree, path);
        } else if (x.type !== y.type) {
          out.changed.push({ path, a: x, b: y });
          if (x.type === 'dir') for (const sub of walkTree(st, x.tree, path)) out.removed.push(sub);
          if (y.type === 'dir') for (const sub of walkTree(st, y.tree, path)) out.added.push(sub);
        } else if (
          // (A file's time counts when both snapshots recorded one: `touch` alone is a change.)
          (x.type === 'file' && y.type === 'file' && (x.digest !== y.digest || x.mode !== y.mode || (x.mtime !== undefined && y.mtime !== undefined && x.mtime !== y.mtime))) ||
          (x.type === 'symlink' && y.type === 'symlink' && x.target !== y.target)
        ) {
          out.changed.push({ path, a: x, b: y });
        }
      }
    }
  };
  step(a, b, '');
  return out;
}

/**
 * Bytes that removing the snapshot would free: the release is simulated (no writes), then the
 * chunks whose every reference comes from documents the release would delete are summed.
 */
export function snapshotExclusiveSize(st: Statements, row: SnapshotRow): number {
  const treeDrops = new Map<string, number>();
  const docDrops = new Map<string, number>();
  const stack = [formatDigest(row.tree)];
  while (stack.length) {
    const digest = stack.pop()!;
    const dropped = (treeDrops.get(digest) ?? 0) + 1;
    treeDrops.set(digest, dropped);
    const tree = st.treeGet.get(parseDigest(digest));
    if (!tree || tree.holds - dropped > 0) continue;
    for (const e of decodeTree(tree.body, digest)) {
      if (e.type === 'dir') stack.push(e.tree);
      else if (e.type === 'file') docDrops.set(e.digest, (docDrops.get(e.digest) ?? 0) + 1);
    }
  }
  const chunkDrops = new Map<string, number>();
  for (const [digest, n] of docDrops) {
    const doc = st.docAnyByDigest.get(parseDigest(digest));
    if (!doc || doc.refs > 0 || doc.holds - n > 0) continue;
    for (const e of decodeManifest(doc.manifest)) chunkDrops.set(e.key, (chunkDrops.get(e.key) ?? 0) + 1);
  }
  let bytes = 0;
  for (const [key, n] of chunkDrops) {
    const c = st.chunkGet.get(hexToBytes(key));
    if (c && c.refs - n <= 0) bytes += storedShare(c);
  }
  return bytes;
}
