/**
 * Copying one store into another (`kura copy`, issue 50 item 2; decision 0061): paths with
 * their versions (and the versions' times), media types, tags and metadata, the entries
 * without a path, snapshots with their ids, labels, times and tags, and pins — between any two
 * stores (a directory, a bucket, in a browser), through their public API alone.
 *
 * Only what the destination lacks crosses: a version already there (same document, same
 * time) is skipped; content the destination holds is named without its bytes (`link`); other
 * content is read from the source (checked against its digest as every read is) and put, so
 * the destination stores only the chunks it lacks. Run again, a copy finds everything present
 * and sends nothing; killed, it is run again and completes (every step is a commit of its own
 * and is recognised next time).
 */
import { InvalidInputError, type Digest } from '@kura/core';
import type { DocumentInfo } from '../catalog/entries.js';
import type { DirNode, FileEntry, SnapshotInfo, SymlinkEntry } from '../catalog/snapshot.js';
import type { Store } from '../store.js';

export interface CopyOptions {
  /** Paths under these prefixes; default every path, and the entries without one. */
  prefixes?: string[];
  /** Snapshots by id (or a unique prefix): default all of them, unless prefixes alone select. */
  snapshots?: string[] | 'all' | 'none';
  /** Documents read and put at once: the destination commits concurrent puts in groups. */
  concurrency?: number;
  onProgress?: (report: CopyReport) => void;
}

export interface CopyReport {
  /** Entries looked at (paths and entries without one). */
  entries: number;
  versionsCopied: number;
  versionsPresent: number;
  /** Entries whose media type, tags or metadata were made the source's. */
  entriesUpdated: number;
  /** Documents read from the source and put. */
  documentsSent: number;
  bytesSent: number;
  /** Versions of content the destination held, named there without bytes. */
  documentsLinked: number;
  /**
   * Documents the destination held with chunks its verify found damaged: put again from the
   * source's bytes, which writes those chunks anew (verify's advice, "copy them back from
   * another store", found them present and sent nothing: a trial).
   */
  documentsMended: number;
  snapshotsCopied: number;
  snapshotsPresent: number;
  pins: number;
  /**
   * Paths the destination changed on its own since the source's versions it lacks were made:
   * copied, those would have become the path's latest over a newer version of its own (and
   * its versions' times gone out of order). Left as they are in the destination; nothing of
   * them is copied (neither versions nor tags and metadata).
   */
  conflicts: { path: string; message: string }[];
  /** What could not be copied (a damaged document in the source, …); the rest was. */
  errors: { what: string; code: string; message: string }[];
}

/** Any store, on any platform: the copy uses the API they share. */
type AnyStore = Store;

const codeOf = (e: unknown) => (typeof (e as { code?: unknown })?.code === 'string' ? (e as { code: string }).code : 'INTERNAL');
const isNotFound = (e: unknown) => codeOf(e) === 'NOT_FOUND';

/** Runs `work` over `items`, `n` at a time, in order of start. */
async function pool<T>(items: readonly T[], n: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane));
}

/** The directory tree of a snapshot, rebuilt from its entries (the root's own name and mode are not stored). */
async function treeOf(store: AnyStore, id: string): Promise<{ root: DirNode; files: FileEntry[] }> {
  const root: DirNode = { type: 'dir', name: '', mode: 0o755, entries: [] };
  const dirs = new Map<string, DirNode>([['', root]]);
  const files: FileEntry[] = [];
  for await (const { path, entry } of store.snapshotEntries(id)) {
    const slash = path.lastIndexOf('/');
    const parent = dirs.get(slash < 0 ? '' : path.slice(0, slash))!;
    if (entry.type === 'dir') {
      const d: DirNode = { type: 'dir', name: entry.name, mode: entry.mode, ...(entry.mtime !== undefined ? { mtime: entry.mtime } : {}), entries: [] };
      dirs.set(path, d);
      parent.entries.push(d);
    } else if (entry.type === 'file') {
      files.push(entry);
      parent.entries.push(entry);
    } else parent.entries.push(entry satisfies SymlinkEntry);
  }
  return { root, files };
}

/**
 * The versions of a path by their digest and time, each to be taken once: `take` answers the
 * first not yet taken with the digest and time of `v`, or undefined.
 */
function pairs<T extends { digest: string; createdAt: string }>(versions: readonly T[]): { take: (v: { digest: string; createdAt: string }) => T | undefined } {
  const byKey = new Map<string, T[]>();
  for (const v of versions) {
    const key = `${v.digest} ${v.createdAt}`;
    const list = byKey.get(key);
    if (list) list.push(v);
    else byKey.set(key, [v]);
  }
  return { take: (v) => byKey.get(`${v.digest} ${v.createdAt}`)?.shift() };
}

export async function copyStore(src: AnyStore, dst: AnyStore, options: CopyOptions = {}): Promise<CopyReport> {
  // (Into itself, a copy finds everything present and says so: a mistake in the arguments, told.
  // Two opens of one store are the caller's to tell apart — kura copy compares their places;
  // a store id is no place: a `cp -r` of a store kept up to date with copies shares it.)
  if (src === dst) throw new InvalidInputError('the source and the destination are the same store: nothing to copy', 'dst');
  // A copy reads most of the source: a source on object storage fetches each pack whole, in
  // one request (decision 0061), instead of by ranges its concurrent readers break.
  src.fetchWholePacks(true);
  try {
    return await copyAll(src, dst, options);
  } finally {
    src.fetchWholePacks(false);
  }
}

async function copyAll(src: AnyStore, dst: AnyStore, options: CopyOptions): Promise<CopyReport> {
  const report: CopyReport = { entries: 0, versionsCopied: 0, versionsPresent: 0, entriesUpdated: 0, documentsSent: 0, bytesSent: 0, documentsLinked: 0, documentsMended: 0, snapshotsCopied: 0, snapshotsPresent: 0, pins: 0, conflicts: [], errors: [] };
  const n = Math.max(1, options.concurrency ?? 8);
  const progress = () => options.onProgress?.(report);
  const failed = (what: string, e: unknown) => {
    if (!(e instanceof Error) || codeOf(e) === 'INTERNAL') throw e; // a bug, not damage: stop
    report.errors.push({ what, code: codeOf(e), message: e.message });
  };

  type Meta = { path?: string; time?: string; version?: number; mediaType?: string; tags?: string[]; meta?: Record<string, string> };
  /** Per document, the last bring of it: two paths showing one document take turns, so the second names it without bytes. */
  const turns = new Map<Digest, Promise<void>>();
  /** `again`: a version of the document the destination's path shows already (see copyPath). */
  const bring = (digest: Digest, meta: Meta, listed = true, again = false): Promise<void> => {
    const mine = (turns.get(digest) ?? Promise.resolve()).catch(() => undefined).then(() => bringNow(digest, meta, listed, again));
    turns.set(digest, mine);
    return mine.finally(() => {
      if (turns.get(digest) === mine) turns.delete(digest);
    });
  };

  /** Documents mended (or being mended), each once. */
  const mending = new Map<Digest, Promise<void>>();
  /**
   * When the destination holds `digest` with chunks its verify found damaged: the source's
   * bytes put there, naming nothing (a snapshot's put), which writes those chunks anew.
   */
  const mend = (digest: Digest): Promise<void> => {
    let m = mending.get(digest);
    if (!m) {
      m = (async () => {
        if ((await dst.damagedChunksOf(digest)) === 0) return;
        const r = await dst.put((await src.document(digest, { unlisted: true })).stream(), { expectDigest: digest }, { listed: false });
        report.documentsMended++;
        report.bytesSent += r.size;
      })();
      mending.set(digest, m);
    }
    return m;
  };

  /** Puts the source's bytes of `digest` in the destination with `meta`, or names them there when it has them. */
  const bringNow = async (digest: Digest, meta: Meta, listed: boolean, again: boolean): Promise<void> => {
    if (await dst.has(digest)) {
      await mend(digest);
      if (!listed) return; // a snapshot's file: being there is all it needs
      try {
        await dst.link(digest, meta, again ? { newVersion: true } : {});
        report.documentsLinked++;
        return;
      } catch (e) {
        if (!isNotFound(e)) throw e; // kept only by snapshots there (or gone meanwhile): send it
      }
    }
    // `unlisted`: a snapshot's file is a document no entry shows.
    const r = await dst.put((await src.document(digest, { unlisted: true })).stream(), { ...meta, expectDigest: digest }, { listed });
    report.documentsSent++;
    report.bytesSent += r.size;
  };

  /** Makes the destination entry's media type, tags and metadata the source's. */
  const attributes = async (from: DocumentInfo, target: { path: string } | { digest: Digest }): Promise<void> => {
    const to = await dst.stat('path' in target ? target.path : target.digest);
    const addTags = from.tags.filter((t) => !to.tags.includes(t));
    const removeTags = to.tags.filter((t) => !from.tags.includes(t));
    const meta: Record<string, string | null> = {};
    for (const [k, v] of Object.entries(from.meta)) if (to.meta[k] !== v) meta[k] = v;
    for (const k of Object.keys(to.meta)) if (!(k in from.meta)) meta[k] = null;
    const mediaType = from.mediaType !== to.mediaType ? { mediaType: from.mediaType } : {};
    if (!addTags.length && !removeTags.length && !Object.keys(meta).length && !('mediaType' in mediaType)) return;
    await dst.updateMeta([{ ...target, ...mediaType, ...(addTags.length ? { addTags } : {}), ...(removeTags.length ? { removeTags } : {}), ...(Object.keys(meta).length ? { meta } : {}) }]);
    report.entriesUpdated++;
  };

  /** `listed`: the path has an entry in the source (else it was deleted with its versions kept: no attributes to copy). */
  const copyPath = async (entry: DocumentInfo & { path: string }, listed = true): Promise<number> => {
    const path = entry.path;
    const from = await src.versions(path);
    const had = await dst.versions(path).catch((e: unknown) => (isNotFound(e) ? [] : Promise.reject(e)));
    // Versions are paired in order, one for one: several versions of a path may hold the same
    // bytes at the same time (puts of one commit), so a version of the destination stands for
    // one of the source's at most (a copy stopped between two such was completed as if whole).
    const present = pairs(had);
    // Diverged: a version of the destination's own (none of the source's) newer than a source
    // version it lacks. Copied, the source's older bytes became the path's latest, numbered
    // after the destination's newer one, and `path@<time>` answered wrongly (a trial).
    const check = pairs(had);
    const missing = from.filter((v) => !check.take(v));
    const ours = pairs(from);
    const own = had.filter((w) => !ours.take(w));
    // (With nothing missing, its own version newer than the source's newest: its tags and
    // metadata are its own too, and were made the source's: found in review.)
    const since = missing[0] ?? from.at(-1);
    const newerOwn = since && own.find((w) => w.createdAt > since.createdAt);
    if (since && newerOwn) {
      report.conflicts.push({ path, message: `changed in the destination since (@${newerOwn.version} of ${newerOwn.createdAt} is its own, newer than the source's @${since.version} of ${since.createdAt}): left as it is there; copy it by hand, or remove the destination's versions, to take the source's` });
      return 0;
    }
    let copied = 0;
    // A put of the document a path shows makes no version: a source path deleted with its
    // versions kept and put again unchanged (what watch does when a file goes and comes back)
    // has X then X, and the second X is linked as a new version (its entry made again, with
    // the source's tags and metadata).
    let shows = await dst.stat(path).then(
      (d) => d.digest,
      (e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)),
    );
    for (const v of from) {
      if (present.take(v)) {
        await mend(v.digest);
        report.versionsPresent++;
        continue;
      }
      const again = v.digest === shows;
      const attributes = again && listed ? { tags: entry.tags, meta: entry.meta } : {};
      await bring(v.digest, { path, time: v.createdAt, version: v.version, ...(entry.mediaType !== null ? { mediaType: entry.mediaType } : {}), ...attributes }, true, again);
      shows = v.digest; // (the version made is the path's latest: numbers only grow)
      report.versionsCopied++;
      copied++;
    }
    if (from.some((v) => v.pinned)) {
      const now = pairs(await dst.versions(path));
      for (const v of from) {
        const there = now.take(v);
        if (v.pinned && there && !there.pinned) {
          await dst.pin({ path, version: there.version });
          report.pins++;
        }
      }
    }
    if (listed) await attributes(entry, { path });
    return copied;
  };

  const copyPathless = async (entry: DocumentInfo): Promise<void> => {
    let there: DocumentInfo | undefined;
    try {
      there = await dst.stat(entry.digest);
    } catch (e) {
      if (!isNotFound(e) && codeOf(e) !== 'AMBIGUOUS') throw e;
    }
    if (there?.path === null) {
      await mend(entry.digest);
      report.versionsPresent++;
    }
    else {
      await bring(entry.digest, { time: entry.createdAt, ...(entry.mediaType !== null ? { mediaType: entry.mediaType } : {}) });
      report.versionsCopied++;
    }
    await attributes(entry, { digest: entry.digest });
  };

  // Paths (and entries without one), a page at a time: those under the prefixes, or all of
  // them when nothing is selected.
  const somePrefixes = (options.prefixes?.length ?? 0) > 0;
  const everything = !somePrefixes;
  if (somePrefixes || options.snapshots === undefined) {
    let cursor: string | undefined;
    do {
      const page = await src.list({ limit: 256, ...(everything ? {} : { pathPrefixes: options.prefixes }), ...(cursor ? { cursor } : {}) });
      await pool(page.items, n, async (entry) => {
        try {
          if (entry.path === null) await copyPathless(entry);
          else await copyPath(entry as DocumentInfo & { path: string });
        } catch (e) {
          failed(entry.path ?? entry.digest, e);
        }
        report.entries++;
        progress();
      });
      cursor = page.nextCursor;
    } while (cursor);
    // Paths deleted with their versions kept (a watched file deleted on disk): `list` does not
    // show them, and a copy without them lost every deleted note's history. Their versions are
    // copied as any path's; then, when the destination's path shows the source's last version
    // (made by this copy, by one killed before its delete, or by a copy from before the source
    // deleted it), it is deleted there too, versions kept. A path showing something newer of
    // the destination's own stays.
    let after: string | undefined;
    for (;;) {
      const page = await src.deletedPaths({ ...(everything ? {} : { prefixes: options.prefixes }), ...(after !== undefined ? { after } : {}), limit: 256 });
      if (page.length === 0) break;
      await pool(page, n, async ({ path, deletedAt }) => {
        try {
          await copyPath({ path, digest: '' as Digest, tags: [], meta: {}, mediaType: null } as unknown as DocumentInfo & { path: string }, false);
          const shown = await dst.stat(path).then(
            () => true,
            (e: unknown) => (isNotFound(e) ? false : Promise.reject(e)),
          );
          if (shown) {
            const [last, newest] = [(await src.versions(path)).at(-1), (await dst.versions(path)).at(-1)];
            if (last && newest && last.digest === newest.digest && last.createdAt === newest.createdAt) await dst.deletePath(path, { keepVersions: true, time: deletedAt }); // (when it went there: retention counts from it)
          }
        } catch (e) {
          failed(path, e);
        }
        report.entries++;
        progress();
      });
      after = page.at(-1)!.path;
    }
  }

  // Snapshots: those named, else all of them unless prefixes select paths alone.
  const chosen = options.snapshots ?? (somePrefixes ? 'none' : 'all');
  if (chosen !== 'none') {
    const all = await src.snapshots();
    const wanted: SnapshotInfo[] = chosen === 'all' ? all : await Promise.all(chosen.map((id) => src.snapshotInfo(id)));
    const there = new Map((await dst.snapshots()).map((s) => [s.id, s]));
    const damagedThere = await dst.damagedChunks();
    for (const s of wanted) {
      try {
        const had = there.get(s.id);
        if (had) {
          // Its files' documents mended where the destination's verify found damage (read
          // only then: a tree walk each run would cost every incremental copy).
          if (damagedThere > 0) {
            const { files } = await treeOf(src, s.id);
            await pool([...new Set(files.map((f) => f.digest))], n, (d) => mend(d));
          }
          report.snapshotsPresent++;
        } else {
          const { root, files } = await treeOf(src, s.id);
          const digests = [...new Set(files.map((f) => f.digest))];
          await pool(digests, n, (d) => bring(d, {}, false));
          await dst.createSnapshot(root, { id: s.id, ...(s.label !== null ? { label: s.label } : {}), time: s.createdAt, tags: s.tags, ...(s.utcOffset !== undefined ? { utcOffset: s.utcOffset } : {}) });
          report.snapshotsCopied++;
        }
        if (s.pinned && !had?.pinned) {
          await dst.pin({ snapshot: s.id });
          report.pins++;
        }
      } catch (e) {
        failed(`snapshot ${s.id}`, e);
      }
      progress();
    }
  }
  return report;
}
