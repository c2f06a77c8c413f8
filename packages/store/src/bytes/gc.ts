/**
 * Garbage collection (FORMAT.md §9), safe while puts continue in the same process: pinned
 * chunks, the open pack and packs with records of puts in progress are left alone.
 */
import type { PackStore } from '../backend/packs.js';
import type { SqlDatabase } from '../backend/sql.js';
import { breather } from '../breather.js';
import { bytesToHex } from '../hex.js';
import type { Reader } from './read.js';
import type { ChunkRow, PackRow, Statements } from '../catalog/statements.js';
import { PACK_HEADER_SIZE, RECORD_HEADER_SIZE } from './pack-record.js';
import type { Writer } from './writer.js';
import type { CommitLog } from '../catalog/commit-log.js';
import type { Op } from '../catalog/ops.js';
import { crashPoint } from '../crash-points.js';

export interface GcReport {
  /** Chunk rows removed (unreferenced chunks). */
  chunksRemoved: number;
  /** Packs deleted because nothing in them was live. */
  packsDeleted: number;
  /** Packs rewritten because most of them was garbage. */
  packsCompacted: number;
  /** Pack files with no row (left by a crash), deleted. */
  orphansDeleted: number;
  /** Bytes of pack files removed minus bytes rewritten: what the disk got back. */
  bytesFreed: number;
}

/** A sealed pack is compacted when its live records fill less than this share of it. */
export const COMPACT_BELOW = 0.5;

/** Unreferenced chunk rows deleted per transaction: the event loop gets a turn between them. */
export const GC_BATCH = 4096;

/**
 * Where a GC is: `chunks` (unreferenced chunk rows deleted, of those found), then `packs`
 * (sealed packs looked at, deleted or compacted, of those to do).
 */
export interface GcProgress {
  phase: 'chunks' | 'packs';
  done: number;
  total: number;
}

/**
 * Seals the packs that writers which are no longer alive left open (their torn tails, if any,
 * are garbage); a live writer's open pack is left alone. Without liveness (one writer at a
 * time), every open pack but this writer's is abandoned.
 */
/** This writer's id, and the other writers of the store that are alive (node/lock.ts). */
export interface Liveness {
  id: string;
  alive(id: string): boolean;
  /** The ids of the other writers alive now. */
  others(): string[];
}

/** How long a chunk stays unreferenced before GC reclaims it while other writers are alive. */
export const DEFAULT_GC_MARGIN_MS = 60 * 60 * 1000;

export function sealAbandonedPacks(log: CommitLog, st: Statements, liveness?: Liveness): void {
  const abandoned = st.packsOpen.all().filter((p) => p.writer !== log.writer && (p.writer === null || !liveness?.alive(p.writer)));
  log.commit(abandoned.map((p): Op => ({ op: 'pack-size', name: p.name, size: p.size, sealed: true })));
}

/** What GC works with: the store's context (store-context.ts), or the parts of it GC reads. */
export interface GcContext {
  db: SqlDatabase;
  st: Statements;
  writer: Writer;
  reader: Reader;
  b: { packs: PackStore; writer?: Liveness | undefined };
  gcMarginMs?: number | undefined;
}

export async function collectGarbage(ctx: GcContext, onProgress?: (p: GcProgress) => void): Promise<GcReport> {
  const { db, st, writer } = ctx;
  const packs = ctx.b.packs;
  const liveness = ctx.b.writer;
  const marginMs = ctx.gcMarginMs ?? DEFAULT_GC_MARGIN_MS;
  const log = writer.log;
  sealAbandonedPacks(log, st, liveness);
  // Alone, a chunk's pins are all in this process (writer.ts): unreferenced rows go now. With
  // other writers alive, their puts may share a chunk this process cannot see pinned: a row
  // goes only once it has been unreferenced for the margin (FORMAT.md §9).
  const before = liveness?.others().length ? Date.now() - marginMs : undefined;
  const report: GcReport = { chunksRemoved: 0, packsDeleted: 0, packsCompacted: 0, orphansDeleted: 0, bytesFreed: 0 };
  const breathe = breather();

  // 1. Unreferenced chunk rows, in transactions of GC_BATCH with a turn of the event loop
  // between them (a server running GC keeps answering; a CLI's bar moves). Puts may commit in
  // between: each row is deleted only if it is still unreferenced, held by no upload and
  // pinned by no put in progress when its batch runs (FORMAT.md §9).
  const total = st.chunkGarbageCount.get(Date.now())!.n;
  let done = 0;
  onProgress?.({ phase: 'chunks', done, total });
  // Paged by key: rows deleted leave the index, rows kept (pinned) stay behind `after`.
  for (let after: Uint8Array = new Uint8Array(0); ; ) {
    await breathe();
    const page = st.chunkGarbagePage.all(after, Date.now(), GC_BATCH);
    if (page.length === 0) break;
    // The condemnation is re-checked as it applies (catalog/ops.ts `condemn`): a row a put
    // referenced since the page was read, or an upload holds, stays.
    const keys = page.map((r) => bytesToHex(r.key)).filter((k) => !writer.pinned(k));
    report.chunksRemoved += log.commit([before === undefined ? { op: 'condemn', keys } : { op: 'condemn', keys, before }])[0] as number;
    crashPoint('condemned');
    after = page[page.length - 1]!.key;
    done += page.length;
    onProgress?.({ phase: 'chunks', done: Math.min(done, total), total: Math.max(done, total) });
  }

  // 2. Sealed packs: delete the empty, compact the mostly garbage. Every decision is taken in
  // one synchronous step after the last await, on rows read in that step: a put that was
  // holding a pack may have committed into it while GC awaited. (A pack not in use then cannot
  // gain rows later: puts append only to the open pack.) Chunks have no index by pack (it
  // would cost every put a random index insert), so one scan finds what to move.
  const files = new Map((await packs.list()).map((p) => [p.name, p.size]));
  const empty: { id: number; name: string; size: number }[] = [];
  const toCompact: { id: number; name: string; size: number }[] = [];
  // Another live writer's pack may still gain rows after its seal: puts in flight when it
  // filled, and its own GC's moves, commit later (found by the crash-point runs: a second
  // writer's GC dropped a pack this one's compaction had copied into). It is left alone for
  // the margin after its seal, as that writer's pinned chunks are.
  const others = new Set(liveness?.others() ?? []);
  const recent = Date.now() - marginMs;
  const theirs = (p: PackRow) => p.writer !== null && p.writer !== log.writer && others.has(p.writer) && p.sealed > recent;
  db.read(() => {
    const live = new Map(st.packLiveBytes.all().map((r) => [r.pack_id, r.live]));
    for (const pack of st.packsSealed.all()) {
      if (writer.packInUse(pack.id) || theirs(pack)) continue;
      const size = files.get(pack.name) ?? pack.size;
      const liveBytes = live.get(pack.id) ?? 0;
      if (liveBytes === 0) empty.push({ id: pack.id, name: pack.name, size });
      else if (liveBytes < (size - PACK_HEADER_SIZE) * COMPACT_BELOW) toCompact.push({ id: pack.id, name: pack.name, size });
    }
  });
  // The rows first (one commit, which re-checks them: another process may have committed rows
  // into one since), then the files of those dropped: a file without a row is an orphan.
  const dropped = new Set(empty.length ? (log.commit([{ op: 'drop-packs', names: empty.map((p) => p.name) }])[0] as string[]) : []);
  for (let i = empty.length - 1; i >= 0; i--) if (!dropped.has(empty[i]!.name)) empty.splice(i, 1);
  const rows = toCompact.length ? st.chunksInPacks.all(JSON.stringify(toCompact.map((p) => p.id))) : [];
  const packWork = empty.length + toCompact.length;
  onProgress?.({ phase: 'packs', done: 0, total: packWork });
  for (const pack of empty) {
    writer.forgetPack(pack.id);
    await packs.remove(pack.name);
    crashPoint('pack-removed');
    report.packsDeleted++;
    report.bytesFreed += pack.size;
    onProgress?.({ phase: 'packs', done: report.packsDeleted, total: packWork });
  }
  for (const pack of toCompact) {
    const mine = rows.filter((r) => r.pack_id === pack.id);
    report.bytesFreed += pack.size - (await compact(ctx, pack.id, pack.name, mine));
    report.packsCompacted++;
    onProgress?.({ phase: 'packs', done: report.packsDeleted + report.packsCompacted, total: packWork });
  }

  // 3. Orphans: files the database does not know (a crash between the steps above). Listed
  // first, rows read after the await: a pack's row is committed before its file exists, so a
  // listed file whose row is missing now was never a live pack.
  const listed = await packs.list();
  // The rows are read under the write lock, after the commits other writers appended are
  // applied (CommitLog.readApplied): a pack's row can be in the log and not yet in this
  // database — another writer's batch not yet committed, or a writer that died between its
  // append and its COMMIT, whose acknowledged puts name the pack. Such a file is no orphan.
  const known = log.readApplied(() => new Set(st.packsAll.all().map((p) => p.name)));
  for (const { name, size } of listed) {
    if (!known.has(name)) {
      await packs.remove(name);
      report.orphansDeleted++;
      report.bytesFreed += size;
    }
  }
  return report;
}

/** Moves a pack's live chunks to the open pack, then drops the pack. Returns bytes rewritten. */
async function compact(ctx: GcContext, packId: number, name: string, rows: ChunkRow[]): Promise<number> {
  const { st, writer, reader } = ctx;
  const packs = ctx.b.packs;
  const moved: { key: Uint8Array; packId: number; offset: number }[] = [];
  let rewritten = 0;
  const breathe = breather();
  for (const row of rows) {
    await breathe(); // other work (puts, requests) goes on while a large pack is copied
    const key = bytesToHex(row.key);
    // Read through the checked path: damaged chunks are not copied (verify reports them).
    let payloadRecord: Uint8Array;
    try {
      await reader.chunk(key);
      payloadRecord = await packs.read(name, row.offset, RECORD_HEADER_SIZE + row.stored_len);
    } catch {
      continue;
    }
    const { chunk, opened } = await writer.appendRecordCopy(payloadRecord);
    writer.usePack(chunk.packId);
    moved.push({ key: row.key, packId: chunk.packId, offset: chunk.offset });
    rewritten += payloadRecord.length + (opened ? PACK_HEADER_SIZE : 0);
  }
  if (moved.length) crashPoint('records-moved');
  try {
    // Flushed before the rows point at the copies (durability order, FORMAT.md §8).
    // A sealed pack only loses rows (puts write to the open pack), so the rows read above
    // minus those moved (damaged ones stay for verify to report) are all that is left.
    await writer.commit([
      {
        op: 'move',
        from: name,
        rows: rows.length,
        chunks: moved.map((m) => ({ key: bytesToHex(m.key), pack: writer.packName(m.packId), offset: m.offset })),
      },
    ]);
  } finally {
    for (const m of moved) {
      writer.releasePack(m.packId);
      writer.settle(bytesToHex(m.key));
    }
  }
  if (!st.packById.get(packId)) {
    writer.forgetPack(packId);
    await packs.remove(name);
    crashPoint('pack-removed');
  }
  return rewritten;
}
