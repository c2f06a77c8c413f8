/**
 * Garbage collection (FORMAT.md §9), safe while puts continue in the same process: pinned
 * chunks, the open pack and packs with records of puts in progress are left alone.
 */
import type { PackStore } from '../backend/packs.js';
import type { SqlDatabase } from '../backend/sql.js';
import { CorruptDataError } from '@kura/core';
import { breather } from '../breather.js';
import { bytesToHex, formatDigest } from '../hex.js';
import type { Reader } from './read.js';
import type { ChunkRow, PackRow, Statements } from '../catalog/statements.js';
import { INDEX_ENTRY_SIZE, INDEX_OVERHEAD, PACK_HEADER_SIZE } from './pack-record.js';
import type { Writer } from './writer.js';
import type { CommitLog } from '../catalog/commit-log.js';
import type { Op } from '../catalog/ops.js';
import { crashPoint } from '../crash-points.js';
import { ORPHAN_MARGIN_MS, reclaimPacks } from './gc-reclaim.js';
import { GcLease, requireClock } from './gc-lease.js';
import type { LogStore } from '../catalog/log-store.js';
import { DEFAULT_LOG_RETENTION_MS, truncatable, truncateLog, truncationPoint } from '../catalog/log-truncate.js';

export interface GcReport {
  /** Documents nothing held (a snapshot stopped before its commit left them), removed with their chunks' references. */
  documentsRemoved: number;
  /** Chunk rows removed (unreferenced chunks). */
  chunksRemoved: number;
  /** Pack files (objects) deleted because nothing in them was live: dropped by this GC or, on an object store, one a margin before. */
  packsDeleted: number;
  /** Packs rewritten because most of them was garbage. */
  packsCompacted: number;
  /** Pack files with no row (left by a crash), deleted. */
  orphansDeleted: number;
  /**
   * Bytes of pack files deleted minus bytes rewritten: what the disk got back. On an object
   * store a run that compacts can free less than it rewrote (the old packs wait: bytesWaiting).
   */
  bytesFreed: number;
  /** On an object store: dropped packs whose objects wait for the margin (decision 0041), and their bytes. */
  packsWaiting: number;
  bytesWaiting: number;
  /**
   * On an object store: bytes of small packs carried in their commits' log objects (decision
   * 0044) whose rows this run dropped or compacted away — not given back now: they go with
   * those objects at the log's truncation (decision 0045, `KURA_LOG_RETENTION_MS` after their
   * commits; a trial read `bytesFreed: 0` and `bytesWaiting: 0` as "nothing stays").
   */
  bytesInLog: number;
  /** On an object store: log objects and checkpoints deleted by the log's truncation (decision 0045). */
  logCommitsDeleted: number;
  checkpointsDeleted: number;
  /**
   * Unused chunks kept for the margin (FORMAT.md §9): while other writers have the store open
   * (a watch, a server), and always on object storage or an encrypted store (`margin`), a chunk
   * goes only once it has been unused for the margin — GC could not tell otherwise that another
   * process's put is not about to use it. Their stored bytes, and when the last of them may go
   * (ISO time; a GC run then removes them). Zero, and no `waitingUntil`, when none wait.
   */
  chunksWaiting: number;
  chunkBytesWaiting: number;
  waitingUntil?: string;
  /** Why unused chunks wait: `writers` (other writers alive), `shared` (object storage, an encrypted store); absent when they do not. */
  margin?: 'writers' | 'shared';
  /**
   * Live chunks a compaction could not copy because their records are damaged (keys): their
   * packs stay, and are not counted compacted, until they are repaired (a put of the same
   * bytes) or their documents removed. GC reported such a pack "compacted" at every run,
   * naming nothing (a trial).
   */
  chunksDamaged: string[];
}

/** An open pack this large is looked at by GC, and sealed for compaction when mostly garbage. */
const OPEN_PACK_LOOKED_AT = 1 << 20;
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

export async function sealAbandonedPacks(log: CommitLog, st: Statements, liveness?: Liveness): Promise<void> {
  const abandoned = st.packsOpen.all().filter((p) => p.writer !== log.writer && (p.writer === null || !liveness?.alive(p.writer)));
  if (abandoned.length) await log.commitAsync(abandoned.map((p): Op => ({ op: 'pack-size', name: p.name, size: p.size, sealed: true })));
}

/** What GC works with: the store's context (store-context.ts), or the parts of it GC reads. */
export interface GcContext {
  db: SqlDatabase;
  st: Statements;
  writer: Writer;
  reader: Reader;
  b: { packs: PackStore; log?: LogStore; writer?: Liveness | undefined; clockOffsetMs?: (() => number | undefined) | undefined; gcHolder?: string | undefined };
  /** Snapshots being taken in this process (StoreContext). */
  snapshotsRunning?: number;
  gcMarginMs?: number | undefined;
  logRetentionMs?: number | undefined;
}

export async function collectGarbage(ctx: GcContext, onProgress?: (p: GcProgress) => void): Promise<GcReport> {
  // On an object store (decision 0041): only with a clock close to the storage's, and only
  // while this server holds the lease.
  if (!ctx.writer.log.publishes) return collect(ctx, undefined, onProgress);
  requireClock(ctx.b.clockOffsetMs?.());
  const lease = await GcLease.take(ctx.writer.log, ctx.b.gcHolder ?? ctx.writer.log.writer);
  try {
    return await collect(ctx, lease, onProgress);
  } finally {
    await lease.release();
  }
}

async function collect(ctx: GcContext, lease: GcLease | undefined, onProgress?: (p: GcProgress) => void): Promise<GcReport> {
  const { db, st, writer } = ctx;
  const packs = ctx.b.packs;
  const liveness = ctx.b.writer;
  const marginMs = ctx.gcMarginMs ?? DEFAULT_GC_MARGIN_MS;
  const log = writer.log;
  const objects = log.publishes;
  await sealAbandonedPacks(log, st, liveness);
  // Alone, a chunk's pins are all in this process (writer.ts): unreferenced rows go now. With
  // other writers alive — on an object store, always: other servers are never known — their
  // puts may share a chunk this process cannot see pinned: a row goes only once it has been
  // unreferenced for the margin (FORMAT.md §9).
  const margined = objects || (liveness?.others().length ?? 0) > 0;
  const report: GcReport = { documentsRemoved: 0, chunksRemoved: 0, packsDeleted: 0, packsCompacted: 0, orphansDeleted: 0, bytesFreed: 0, packsWaiting: 0, bytesWaiting: 0, bytesInLog: 0, logCommitsDeleted: 0, checkpointsDeleted: 0, chunksWaiting: 0, chunkBytesWaiting: 0, chunksDamaged: [] };
  // On an object store the log is truncated once a checkpoint has existed for the retention
  // (decision 0045): up to that checkpoint's seq, after the packs commits there carry are moved out (step 2).
  const truncating = objects && ctx.b.log && truncatable(ctx.b.log) ? ctx.b.log : undefined;
  const truncateTo = truncating && (await truncationPoint(truncating, Date.now() + (ctx.b.clockOffsetMs?.() ?? 0), ctx.logRetentionMs ?? DEFAULT_LOG_RETENTION_MS));
  const breathe = breather();

  // 0. Documents nothing holds — no entry, version or snapshot: a snapshot stopped before its
  // commit (Ctrl-C) left its files' documents, and their chunks, for good; gc freed nothing and
  // `rm` could not name them (a trial). None while this process takes a snapshot (its files'
  // documents are held by nothing until it commits); with other writers alive, or on an object
  // store, only those older than the margin (another's snapshot may be under way; one whose
  // document went fails at its commit, naming the file, and nothing is lost).
  if (!ctx.snapshotsRunning) {
    const before = margined ? Date.now() - marginMs : Number.MAX_SAFE_INTEGER;
    for (;;) {
      await breathe();
      const unheld = st.docsUnheld.all(before, GC_BATCH);
      if (unheld.length === 0) break;
      // (Applied in log order: a put of the same bytes since makes the document again.)
      const done = await log.commitAsync(unheld.map((d): Op => ({ op: 'delete-document', digest: formatDigest(d.digest), unheld: true })));
      report.documentsRemoved += done.filter((r) => r === true).length;
      if (unheld.length < GC_BATCH) break;
    }
  }

  // 1. Unreferenced chunk rows, in transactions of GC_BATCH with a turn of the event loop
  // between them (a server running GC keeps answering; a CLI's bar moves). Puts may commit in
  // between: each row is deleted only if it is still unreferenced, held by no upload and
  // pinned by no put in progress when its batch runs (FORMAT.md §9).
  const total = st.chunkGarbageCount.get(Date.now())!.n;
  let done = 0;
  onProgress?.({ phase: 'chunks', done, total });
  // Paged by key: rows deleted leave the index, rows kept (pinned, or marked and waiting) stay behind `after`.
  for (let after: Uint8Array = new Uint8Array(0); ; ) {
    await breathe();
    if (lease) await lease.keep();
    const page = st.chunkGarbagePage.all(after, Date.now(), GC_BATCH);
    if (page.length === 0) break;
    // The condemnation is re-checked as it applies (catalog/ops.ts `condemn`): a row a put
    // referenced since the page was read, or an upload holds, stays.
    const keys = page.map((r) => bytesToHex(r.key)).filter((k) => !writer.pinned(k));
    const op: Op = margined ? { op: 'condemn', keys, before: Date.now() - marginMs } : { op: 'condemn', keys };
    report.chunksRemoved += (await log.commitAsync([op]))[0] as number;
    crashPoint('condemned');
    after = page[page.length - 1]!.key;
    done += page.length;
    onProgress?.({ phase: 'chunks', done: Math.min(done, total), total: Math.max(done, total) });
  }
  if (margined) {
    // What waits for the margin, said: "freed 0 B" alone, while another writer was open or on
    // an encrypted store, read as GC not working (two trials).
    const w = db.read(() => st.condemnedWaiting.get()!);
    report.chunksWaiting = w.n;
    report.chunkBytesWaiting = w.bytes;
    if (w.n > 0 && w.last !== null) {
      report.waitingUntil = new Date(w.last + marginMs).toISOString();
      report.margin = objects ? 'shared' : 'writers';
    }
  }

  // 1b. The open pack, when what step 1 left live in it is little enough that it would be
  // compacted were it sealed: sealed now, so step 2 takes it. A long-lived writer (a browser
  // tab, a server) keeps its pack open until 64 MiB, and a GC after a delete freed nothing of
  // it (a tab's 3 MB file stayed until a reload). Sealing is what filling does: puts in
  // progress keep the pack in use (packInUse), and step 2 passes it by until they commit.
  // (Measuring it scans the chunks, as step 2 does: only for an open pack of OPEN_PACK_LOOKED_AT.)
  const open = objects ? undefined : writer.openPackRow;
  const openSize = writer.openPackSize;
  if (open && openSize >= OPEN_PACK_LOOKED_AT) {
    const liveBytes = db.read(() => st.packLiveBytes.all().find((r) => r.pack_id === open.id)?.live ?? 0);
    if (liveBytes < (openSize - PACK_HEADER_SIZE) * COMPACT_BELOW && writer.openPackRow?.id === open.id) {
      await writer.seal();
      // The seal wrote the pack's index: what step 3 deletes is that much more than the disk
      // held before this GC, and `bytesFreed` is what the disk got back (a trial: 21,082,524
      // "freed" of a 21,024,819-byte pack).
      const sealed = db.read(() => st.packById.get(open.id));
      if (sealed) report.bytesFreed -= Math.max(0, sealed.size - openSize);
    }
  }

  // 2. Sealed packs: drop the empty, compact the mostly garbage. Every decision is taken in
  // one synchronous step after the last await, on rows read in that step: a put that was
  // holding a pack may have committed into it while GC awaited. (A pack not in use then cannot
  // gain rows later: puts append only to the open pack.) Chunks have no index by pack (it
  // would cost every put a random index insert), so one scan finds what to move.
  if (lease) await lease.keep();
  const files = new Map((await packs.list()).map((p) => [p.name, p.size]));
  const empty: string[] = [];
  const toCompact: { id: number; name: string; size: number; carried: boolean }[] = [];
  // Another live writer's pack may still gain rows after its seal: puts in flight when it
  // filled, and its own GC's moves, commit later (found by the crash-point runs: a second
  // writer's GC dropped a pack this one's compaction had copied into). It is left alone for
  // the margin after its seal, as that writer's pinned chunks are. (On an object store a
  // pack's rows come in the commit after its upload, with its seal: nothing comes later.)
  const others = new Set(liveness?.others() ?? []);
  const recent = Date.now() - marginMs;
  const theirs = (p: PackRow) => p.writer !== null && p.writer !== log.writer && others.has(p.writer) && p.sealed > recent;
  db.read(() => {
    // What a pack's live records would take sealed again: their bytes and their index entries
    // (a pack's size counts its index). Without the index, a pack of tiny chunks (52 index
    // bytes to ~58 of record each) looked half garbage at every GC and was copied, unchanged,
    // again and again: "freed 520 B" each run, and the log growing by the copies' commits.
    const live = new Map(st.packLiveBytes.all().map((r) => [r.pack_id, r.live + r.records * INDEX_ENTRY_SIZE + INDEX_OVERHEAD]));
    for (const pack of st.packsSealed.all()) {
      if (writer.packInUse(pack.id) || theirs(pack)) continue;
      const size = files.get(pack.name) ?? pack.size;
      const liveBytes = live.get(pack.id) ?? 0;
      const carriedBeforeTruncation = truncateTo !== undefined && pack.log_seq !== null && pack.log_seq <= truncateTo;
      // (A carried pack's bytes stay in the log, but for those this run's truncation deletes.)
      const staysInLog = pack.log_seq !== null && !carriedBeforeTruncation;
      if (liveBytes === 0) {
        empty.push(pack.name);
        if (staysInLog) report.bytesInLog += size;
      } else if (carriedBeforeTruncation || liveBytes < (size - PACK_HEADER_SIZE) * COMPACT_BELOW) toCompact.push({ id: pack.id, name: pack.name, size, carried: staysInLog });
    }
  });
  // The rows go first (one commit, which re-checks them: another writer may have committed
  // rows into one since); their files in step 3, once the drop is old enough.
  const rows = toCompact.length ? st.chunksInPacks.all(JSON.stringify(toCompact.map((p) => p.id))) : [];
  // (Only on an object store may an await come between the decisions and the commit: its
  // commit is published against the log's newest state, and re-checked there.)
  if (lease) await lease.keep();
  if (empty.length) await log.commitAsync([{ op: 'drop-packs', names: empty }]);
  onProgress?.({ phase: 'packs', done: 0, total: toCompact.length });
  // Locally one commit per pack. On an object store every commit uploads the packs its
  // records went to, so the copies of many packs share commits (and new packs): up to
  // MOVES_PER_COMMIT chunks each.
  for (let i = 0; i < toCompact.length; ) {
    if (lease) await lease.keep();
    const group: { name: string; rows: ChunkRow[] }[] = [];
    const carried: { name: string; size: number }[] = [];
    let chunks = 0;
    do {
      const pack = toCompact[i++]!;
      const mine = rows.filter((r) => r.pack_id === pack.id);
      group.push({ name: pack.name, rows: mine });
      if (pack.carried) carried.push(pack);
      chunks += mine.length;
    } while (objects && i < toCompact.length && chunks < MOVES_PER_COMMIT);
    const done = await compact(ctx, group);
    report.bytesFreed -= done.rewritten;
    report.packsCompacted += group.length - done.kept.size;
    for (const c of carried) if (!done.kept.has(c.name)) report.bytesInLog += c.size;
    report.chunksDamaged.push(...done.damaged);
    onProgress?.({ phase: 'packs', done: report.packsCompacted, total: toCompact.length });
  }

  // 3. Files or objects no row names: dropped ones once their margin has passed (none on a
  // local disk), orphans of a crash (on an object store, after a day).
  if (lease) await lease.keep();
  const reclaimed = await reclaimPacks(log, st, packs, { dropMarginMs: objects ? marginMs : 0, orphanMarginMs: objects ? ORPHAN_MARGIN_MS : undefined });
  report.packsDeleted = reclaimed.packsDeleted;
  report.orphansDeleted = reclaimed.orphansDeleted;
  report.packsWaiting = reclaimed.packsWaiting;
  report.bytesWaiting = reclaimed.bytesWaiting;
  report.bytesFreed += reclaimed.bytesDeleted;

  // 4. The log's truncation (decision 0045), with every commit up to that point applied here.
  if (truncating && truncateTo !== undefined) {
    await lease!.keep();
    await log.refresh();
    const truncated = await truncateLog(truncating, st, truncateTo);
    report.logCommitsDeleted = truncated.commitsDeleted;
    report.checkpointsDeleted = truncated.checkpointsDeleted;
  }
  return report;
}

/** Chunks moved by one commit of compaction on an object store (its JSON stays a few MiB). */
const MOVES_PER_COMMIT = 16_384;

/** Moves the packs' live chunks to the open pack, in one commit; each move drops its pack. Returns bytes rewritten. */
/** Copies the packs' live records into the open pack; answers the bytes written, and the damaged chunks not copied (and the packs they keep). */
async function compact(ctx: GcContext, group: { name: string; rows: ChunkRow[] }[]): Promise<{ rewritten: number; damaged: string[]; kept: Set<string> }> {
  const { writer, reader } = ctx;
  const packs = ctx.b.packs;
  const moves: { from: string; rows: number; moved: { key: Uint8Array; packId: number; offset: number }[] }[] = [];
  let rewritten = 0;
  const damaged: string[] = [];
  const kept = new Set<string>();
  const breathe = breather();
  for (const { name, rows } of group) {
    const moved: { key: Uint8Array; packId: number; offset: number }[] = [];
    moves.push({ from: name, rows: rows.length, moved });
    // Records copied, by their offset in the old pack: a group record (FORMAT.md §6.2) is
    // copied whole, once, and every live member moves with it (its place in the group kept).
    const copies = new Map<number, { packId: number; offset: number }>();
    for (const row of rows) {
      await breathe(); // other work (puts, requests) goes on while a large pack is copied
      const key = bytesToHex(row.key);
      // Read through the checked path: damaged chunks are not copied (verify reports them).
      let copy = copies.get(row.offset);
      let record: Uint8Array | undefined;
      try {
        await reader.chunk(key);
        const records = writer.records;
        if (!copy) record = records.plain(name, row.offset, await packs.read(name, row.offset, records.recordSize(row.stored_len)), key);
      } catch (e) {
        if (e instanceof CorruptDataError) {
          damaged.push(key);
          kept.add(name);
        }
        continue;
      }
      if (record) {
        const { chunk, opened } = await writer.appendRecordCopy(record);
        copies.set(row.offset, (copy = chunk));
        rewritten += writer.records.recordSize(row.stored_len) + (opened ? PACK_HEADER_SIZE : 0);
      }
      writer.usePack(copy!.packId);
      moved.push({ key: row.key, packId: copy!.packId, offset: copy!.offset });
    }
  }
  if (moves.some((m) => m.moved.length)) crashPoint('records-moved');
  try {
    // Flushed before the rows point at the copies (durability order, FORMAT.md §8).
    // A sealed pack only loses rows (puts write to the open pack), so the rows read above
    // minus those moved (damaged ones stay for verify to report) are all that is left.
    await writer.commit(
      moves.map((m) => ({
        op: 'move',
        from: m.from,
        rows: m.rows,
        chunks: m.moved.map((c) => ({ key: bytesToHex(c.key), pack: writer.packName(c.packId), offset: c.offset })),
      })),
    );
  } finally {
    for (const m of moves.flatMap((x) => x.moved)) {
      writer.releasePack(m.packId);
      writer.settle(bytesToHex(m.key));
    }
  }
  return { rewritten, damaged, kept };
}
