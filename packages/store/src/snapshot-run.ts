/**
 * A snapshot (FORMAT.md §13), on every platform the same way: scan the tree, name the
 * documents of files whose stamps say they are unchanged since the last snapshot (unread),
 * put the others (kept for the snapshot, not listed), commit the trees and the snapshot record
 * in one transaction, record the files' stamps. The platform scans and reads (SnapshotSource):
 * Node a directory (node/snapshot-run.ts), a browser the files of a dropped folder
 * (browser/snapshot-files.ts).
 */
import { InternalError } from '@kura/core';
import { NotFoundError } from './errors.js';
import { sizedByPut } from './store-writes.js';
import type { PutResult } from './put.js';
import { parseDigest } from './hex.js';
import type { SnapshotInfo } from './catalog/snapshot.js';
import { cachedDigests, hasStamps, recordStamps } from './catalog/stamps.js';
import type { Store as StoreCore } from './store.js';
import type { StoreContext } from './store-context.js';
import { leaveOut, type Scan, type ScannedFile, type SnapshotProgress } from './snapshot-scan.js';

export interface SnapshotRunOptions {
  label?: string;
  /** When the snapshot is of (restic's `backup --time`: imports, tests); default now. */
  time?: Date | string | number;
  /** Tags to find it by and for retention's keep-tag. */
  tags?: string[];
  /** Read every file, whatever its stamp says. */
  reread?: boolean;
  onProgress?: (p: SnapshotProgress) => void;
  /**
   * Stops the snapshot between directories of the scan and between files, until its commit
   * starts: it then records nothing, and rejects with the signal's reason (Ctrl-C in the CLI).
   */
  signal?: AbortSignal;
}

/**
 * `changed`: files that changed while they were read — recorded as read (bytes that may mix
 * old and new), their stamps not kept, so the next snapshot reads them again.
 */
/**
 * `unreadable`: files and directories the snapshot was not allowed to read (EACCES, EPERM),
 * left out (a directory recorded empty) — as restic does, where one such file cancelled the
 * whole snapshot here (a trial: a nightly backup made nothing).
 */
export type SnapshotReport = SnapshotInfo & { skipped: string[]; notUtf8: string[]; badNames: { path: string; why: string }[]; reused: number; vanished: string[]; excluded: number; changed: string[]; unreadable: string[] };

export interface SnapshotHost {
  store: Pick<StoreCore, 'createSnapshot'>;
  context: (op: string) => StoreContext;
}

/** How a platform reads the tree a snapshot is of. */
export interface SnapshotSource {
  /**
   * Names the tree for its files' stamps (an absolute path); none: the platform's stamps do not
   * prove a file unchanged, and every file is read every time.
   */
  root?: string;
  /** The tree; `stamped`: an earlier snapshot of `root` left stamps (most files will not be read). */
  scan(stamped: boolean, onDirectory: ((filesSoFar: number) => void) | undefined): Promise<Scan>;
  /** Gives the scanned files their stat before any is read, where the platform does it then; answers those gone since the scan. */
  settle(scan: Scan, stamped: boolean): ScannedFile[];
  /**
   * Puts the files: `record` each as it is read (its digest and size as read), `gone` each
   * deleted since the scan. `again`: files put once more because documents they reused went.
   */
  put(files: ScannedFile[], record: (f: ScannedFile, r: PutResult) => void, gone: (f: ScannedFile) => void, again: boolean, unreadable: (f: ScannedFile) => void): Promise<void>;
  /** Lets go of what the source held (workers), whatever happened. */
  end?(): void;
}

/** What was read is what the snapshot records, should the file have changed since the scan. */
export function recordRead(f: ScannedFile, r: PutResult): void {
  f.entry.digest = r.digest;
  f.entry.size = r.size;
  sizedByPut.add(f.entry); // (its size is its document's: createSnapshot need not look it up)
}

/**
 * Snapshots the tree `source` reads. A file deleted between the scan and its read is left out
 * (the tree then shows the directory as it is now) and named in `vanished`, one it may not
 * read in `unreadable`; any other failure fails the snapshot, which then records nothing
 * (decision 0024). `onProgress` is called as
 * the tree is scanned, once it is, and as each file is done (synchronously: what it throws
 * ends the snapshot).
 */
export async function snapshotRun(h: SnapshotHost, source: SnapshotSource, options: SnapshotRunOptions = {}): Promise<SnapshotReport> {
  const ctx = h.context('snapshot');
  const { onProgress, signal } = options;
  signal?.throwIfAborted();
  ctx.snapshotsRunning++;
  try {
    const root = source.root;
    const stamped = root !== undefined && !options.reread && hasStamps(ctx.st, root);
    const scanned = onProgress ? (found: number) => onProgress({ phase: 'scan', total: found, files: 0, bytes: 0, reused: 0 }) : undefined;
    const scan = await source.scan(
      stamped,
      signal
        ? (found) => {
            signal.throwIfAborted();
            scanned?.(found);
          }
        : scanned,
    );
    signal?.throwIfAborted();
    const gone = new Set<ScannedFile>(source.settle(scan, stamped));
    if (gone.size) leaveOut(scan, gone);
    // Files whose stamp is what an earlier snapshot read keep that document, unread
    // (FORMAT.md §13.4); `reread` reads every file.
    const cached = stamped ? ctx.db.read(() => cachedDigests(ctx.st, scan.files)) : [];
    const reused: ScannedFile[] = [];
    const read: ScannedFile[] = [];
    scan.files.forEach((f, i) => {
      const digest = f.recent ? undefined : cached[i];
      if (digest === undefined) return read.push(f);
      f.entry.digest = digest;
      reused.push(f);
    });
    const progress: SnapshotProgress = { phase: 'files', total: scan.files.length, files: reused.length, bytes: 0, reused: reused.length };
    onProgress?.({ ...progress });
    const done = onProgress
      ? (f: ScannedFile, r: PutResult) => {
          recordRead(f, r);
          progress.files++;
          progress.bytes += r.size;
          onProgress({ ...progress });
        }
      : recordRead;
    const goneNow = new Set<ScannedFile>();
    const changed = new Set<ScannedFile>();
    const denied = new Set<ScannedFile>();
    const deny = (f: ScannedFile) => {
      signal?.throwIfAborted();
      denied.add(f);
      progress.files++;
      onProgress?.({ ...progress });
    };
    await source.put(
      read,
      (f, r) => {
        signal?.throwIfAborted();
        if (r.changed) changed.add(f);
        done(f, r);
      },
      (f) => {
        signal?.throwIfAborted();
        goneNow.add(f);
        progress.files++;
        onProgress?.({ ...progress });
      },
      false,
      deny,
    );
    if (goneNow.size) leaveOut(scan, goneNow);
    if (denied.size) leaveOut(scan, denied);
    goneNow.forEach((f) => gone.add(f));
    const unstated = scan.files.find((f) => f.size < 0);
    if (unstated) throw new InternalError(`${unstated.path} was put without its stat`);
    const label = { ...(options.label !== undefined ? { label: options.label } : {}), ...(options.time !== undefined ? { time: options.time } : {}), ...(options.tags ? { tags: options.tags } : {}) };
    let info: SnapshotInfo;
    signal?.throwIfAborted(); // (the last moment: once its commit starts, a snapshot is recorded)
    try {
      info = await h.store.createSnapshot(scan.root, label);
    } catch (e) {
      // Documents the files name went meanwhile: a reused one (its snapshots removed, then GC),
      // or a user's that a file read now has the bytes of (a put shares it without a hold, and
      // the user deleted it since). Those files are read again, and the commit tried again.
      if (!(e instanceof NotFoundError)) throw e;
      const lost = ctx.db.read(() => scan.files.filter((f) => !ctx.st.docIdByDigest.get(parseDigest(f.entry.digest))));
      if (lost.length === 0) throw e;
      const goneLater = new Set<ScannedFile>();
      const deniedLater = new Set<ScannedFile>();
      await source.put(
        lost,
        (f, r) => {
          signal?.throwIfAborted();
          if (r.changed) changed.add(f);
          recordRead(f, r);
        },
        (f) => goneLater.add(f),
        true,
        (f) => deniedLater.add(f),
      );
      if (goneLater.size) leaveOut(scan, goneLater);
      if (deniedLater.size) leaveOut(scan, deniedLater);
      goneLater.forEach((f) => gone.add(f));
      deniedLater.forEach((f) => denied.add(f));
      const again = new Set(lost);
      read.push(...reused.filter((f) => again.has(f)));
      reused.splice(0, reused.length, ...reused.filter((f) => !again.has(f)));
      signal?.throwIfAborted();
      info = await h.store.createSnapshot(scan.root, label);
    }
    if (root !== undefined) {
      // (A file that changed while read keeps no stamp: its stamp is of a state it was not read in.)
      const stamps = scan.files.filter((f) => !changed.has(f)).map((f) => ({ path: f.path, stamp: f.stamp, recent: f.recent, digest: f.entry.digest }));
      h.context('snapshot').db.transaction(() => recordStamps(ctx.st, root, stamps)); // a hint: its own transaction
    }
    return { ...info, skipped: scan.skipped, notUtf8: scan.notUtf8, badNames: scan.badNames ?? [], reused: reused.length, excluded: scan.excluded, vanished: [...scan.vanished, ...[...gone].map((f) => f.path)].sort(), changed: [...changed].map((f) => f.path).sort(), unreadable: [...(scan.unreadable ?? []), ...[...denied].map((f) => f.path)].sort() };
  } finally {
    ctx.snapshotsRunning--;
    source.end?.();
  }
}
