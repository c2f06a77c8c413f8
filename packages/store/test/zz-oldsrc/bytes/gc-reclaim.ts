/**
 * GC's last step (FORMAT.md §9, decision 0041): deleting pack files or objects no row names —
 * those a drop or a compaction left (`dropped_packs`) once their margin has passed, and
 * orphans (a writer that crashed between writing a pack and its commit) — then forgetting the
 * drops whose files are gone, in a commit.
 */
import type { PackInfo, PackStore } from '../backend/packs.js';
import type { CommitLog } from '../catalog/commit-log.js';
import type { Statements } from '../catalog/statements.js';
import { crashPoint } from '../crash-points.js';

/**
 * On an object store, a pack object no row names and no drop records is deleted only once it
 * is this old by its LastModified: a writer uploads a pack before the commit that names it.
 */
export const ORPHAN_MARGIN_MS = 24 * 60 * 60 * 1000;

/**
 * A writer never publishes a commit naming a pack it sealed longer ago than this (writer.ts):
 * well inside ORPHAN_MARGIN_MS, so no GC takes a pack a commit is about to name.
 */
export const UPLOAD_MAX_AGE_MS = 6 * 60 * 60 * 1000;

export interface ReclaimReport {
  packsDeleted: number;
  orphansDeleted: number;
  /** Dropped packs whose files or objects wait for their margin. */
  packsWaiting: number;
  bytesWaiting: number;
  bytesDeleted: number;
}

export interface ReclaimOptions {
  /** How long after its drop a pack's file or object goes (0 on a local disk). */
  dropMarginMs: number;
  /** Undefined: files no row names are orphans at once (a local store commits a pack's row before its file). */
  orphanMarginMs: number | undefined;
}

export async function reclaimPacks(log: CommitLog, st: Statements, packs: PackStore, o: ReclaimOptions): Promise<ReclaimReport> {
  const report: ReclaimReport = { packsDeleted: 0, orphansDeleted: 0, packsWaiting: 0, bytesWaiting: 0, bytesDeleted: 0 };
  // Listed first, rows read after the listing with every commit the log holds applied: a pack
  // named by a commit made before the rows are read is no orphan. Locally under the write lock
  // (CommitLog.readApplied: another writer's batch not yet committed, or a writer that died
  // between its append and its COMMIT, whose acknowledged puts name the pack); on an object
  // store after a refresh.
  const listed = await packs.list();
  const read = () => ({ known: new Set(st.packsAll.all().map((p) => p.name)), dropped: new Map(st.droppedPacks.all().map((d) => [d.name, d.at])) });
  let rows: ReturnType<typeof read>;
  if (log.publishes) {
    await log.refresh();
    rows = read();
  } else {
    rows = log.readApplied(read);
  }
  const now = Date.now();
  const gone: string[] = [];
  const remove = async (p: PackInfo) => {
    await packs.remove(p.name);
    crashPoint('pack-removed');
    report.bytesDeleted += p.size;
  };
  for (const p of listed) {
    if (rows.known.has(p.name)) continue;
    const at = rows.dropped.get(p.name);
    if (at !== undefined) {
      if (at > now - o.dropMarginMs) {
        report.packsWaiting++;
        report.bytesWaiting += p.size;
        continue;
      }
      await remove(p);
      report.packsDeleted++;
      gone.push(p.name);
    } else if (o.orphanMarginMs === undefined || (p.modified !== undefined && p.modified <= now - o.orphanMarginMs)) {
      await remove(p);
      report.orphansDeleted++;
    }
  }
  // Drops whose files went before (a crash after the delete, another collector) are forgotten too.
  const listedNames = new Set(listed.map((p) => p.name));
  for (const [name, at] of rows.dropped) if (!listedNames.has(name) && at <= now - o.dropMarginMs) gone.push(name);
  if (gone.length) await log.commitAsync([{ op: 'forget-packs', names: gone }]);
  return report;
}
