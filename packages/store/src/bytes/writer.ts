/**
 * The writer side of a store (FORMAT.md §6, §8, §9): the open pack, records of puts that have
 * not committed, chunks pinned by puts that share them, and group commit.
 *
 * Everything here runs on one JavaScript thread, and every SQLite transaction is synchronous,
 * so "check, then act" sequences without an await in between are atomic with respect to other
 * puts and to GC. The comments mark the places where that matters.
 */
import { InternalError } from '@kura/core';
import type { PackStore, PackWriter } from '../backend/packs.js';
import type { SqlDatabase } from '../backend/sql.js';
import type { CommitLog } from '../catalog/commit-log.js';
import type { ChunkPlace, Op, OpResult } from '../catalog/ops.js';
import type { Durability } from '../options.js';
import { CODEC_GROUP, PACK_HEADER_SIZE, PackIndexBuilder, RECORD_HEADER_SIZE, groupHead, isGroupRecord, type ChunkLocation } from './pack-record.js';
import type { ChunkGroup } from '../ingest/chunk-groups.js';
import { PLAIN_RECORDS, type RecordCodec } from './record-codec.js';
import type { Statements } from '../catalog/statements.js';
import { crashPoint } from '../crash-points.js';
import { GroupCommit } from './group-commit.js';
import { SealedPacks } from './sealed-packs.js';
import { Counted } from './counted.js';
import { randomHex } from '../hex.js';

/** Packs are sealed once they reach this size. */
export const PACK_TARGET_SIZE = 64 * 1024 * 1024;
/**
 * On an object store, a pack at most this large when its commit comes travels inside the
 * commit's object (decision 0044). Its bytes stay until the log is truncated (decision 0045),
 * so GC frees them a retention later, not a margin: the bound keeps that to commits of small
 * puts (1 MiB carried the packs of 1.6 MiB text documents put one at a time, and GC freed none
 * of their garbage).
 */
export const CARRY_MAX = 256 * 1024;

export interface StoredChunk extends ChunkLocation {
  packId: number;
  offset: number;
  /** A group's member (codec CODEC_GROUP): its place in the group's raw bytes (FORMAT.md §6.2). */
  at?: number;
}

/** Where a group record went (its members are registered one by one: `member`). */
export interface GroupPlace {
  packId: number;
  offset: number;
  storedLen: number;
}

interface OpenPack {
  id: number;
  writer: PackWriter;
  dirty: boolean;
  /** An index entry for every record appended, written after the last at the seal (FORMAT.md §6). */
  index: PackIndexBuilder;
  /** Its id and name, as `openPackRow` answers every commit's apply: one object per pack, not one per put. */
  row: { readonly id: number; readonly name: string };
}

export class Writer {
  #open: OpenPack | undefined;
  #opening: Promise<OpenPack> | undefined;
  /** Chunks written by puts that have not committed, by key. */
  readonly #pending = new Map<string, StoredChunk>();
  /** Per pack: how many puts in progress have records in it (written or shared). */
  readonly #packUsers = new Counted<number>();
  /** Per chunk key: how many puts in progress share the committed chunk. */
  readonly #pins = new Counted<string>();
  /** Puts between their first byte and their commit (see `commit`). */
  #activePuts = 0;
  /** ... of which sources of a bulk stream (putMany), whose commits may gather longer (group-commit.ts). */
  #bulkPuts = 0;
  readonly #idleWaiters: (() => void)[] = [];
  #packNames = new Map<number, string>();
  /** Seals in progress (their fdatasync may not have finished). */
  readonly #sealing = new Set<Promise<void>>();
  /** Reused for every record header (appends are synchronous). */
  readonly #header = new Uint8Array(RECORD_HEADER_SIZE);
  /**
   * On an object store (decision 0040): packs sealed since the last commit, whose operations the
   * next commit carries (sealed-packs.ts); and the ids packs have until then.
   */
  readonly #sealed = new SealedPacks();
  #provisional = 0;
  readonly #group: GroupCommit;
  /**
   * Packs given up after a failed write (`#abandon`), by name, with the failure: a commit that
   * names one fails with it, since its records may never have reached the pack.
   */
  readonly #abandoned = new Map<string, unknown>();

  constructor(
    readonly db: SqlDatabase,
    readonly st: Statements,
    readonly log: CommitLog,
    readonly packs: PackStore,
    public durability: Durability,
    /** Seal packs at this size (PACK_TARGET_SIZE; smaller in tests to force rotation). */
    readonly packTarget = PACK_TARGET_SIZE,
    /** How records lie in packs: as they are, or sealed (an encrypted store; record-codec.ts). */
    readonly records: RecordCodec = PLAIN_RECORDS,
  ) {
    this.#group = new GroupCommit({
      log,
      db,
      durability: () => this.durability,
      syncAppends: () => this.syncAppends(),
      drain: () => this.#drainOpen(),
      refusal: (ops) => this.#refusal(ops),
      openPackSize: () => (this.#open ? [{ op: 'pack-size', name: this.#open.writer.name, size: this.#open.writer.size }] : []),
      uploadForCommit: () => this.uploadForCommit(),
      giveBack: (ops) => this.#sealed.giveBack(ops),
      busy: () => this.busy,
      activePuts: () => this.#activePuts,
      bulkOnly: () => this.#activePuts > 0 && this.#bulkPuts === this.#activePuts,
      openBytes: () => this.#open?.writer.size ?? 0,
    });
  }

  /** The open pack's id, which GC must never touch. */
  get openPackId(): number | undefined {
    return this.#open?.id;
  }

  /** Bytes of the open pack so far (0 when none is open). */
  get openPackSize(): number {
    return this.#open?.writer.size ?? 0;
  }

  /** The open pack's row (none on an object store: a pack gets its row in the commit after its upload). */
  get openPackRow(): { readonly id: number; readonly name: string } | undefined {
    return this.#open && !this.log.publishes ? this.#open.row : undefined;
  }

  packName(id: number): string {
    let name = this.#packNames.get(id);
    if (name === undefined) {
      name = this.st.packById.get(id)?.name;
      if (name === undefined) throw new InternalError(`pack ${id} has no row`);
      this.#packNames.set(id, name);
    }
    return name;
  }

  /** Where a stored chunk is, as a commit names it (packs by name, never by row id). */
  placeOf(c: StoredChunk): ChunkPlace {
    const place: ChunkPlace = { key: c.key, pack: this.packName(c.packId), offset: c.offset, raw: c.rawLen, stored: c.storedLen, codec: c.codec };
    if (c.at !== undefined) place.at = c.at;
    return place;
  }

  forgetPack(id: number): void {
    this.#packNames.delete(id);
  }

  /** The catalog was replaced by a checkpoint's (decision 0045): pack rows may have other ids. (Provisional ids, below 0, stay.) */
  forgetPacks(): void {
    for (const id of this.#packNames.keys()) if (id > 0) this.#packNames.delete(id);
  }

  // ---- puts in progress --------------------------------------------------------------------

  /** `bulk`: the put is a source of a bulk stream (putMany). */
  putStarted(bulk = false): void {
    this.#activePuts++;
    if (bulk) this.#bulkPuts++;
    // Open a pack now, while the put's first bytes are still being chunked and hashed: its
    // file creation (and, in a browser, its sync access handle) is then off the put's path.
    if (!this.#open && !this.#opening) void this.openPack().catch(() => undefined);
  }

  putEnded(bulk = false): void {
    this.#activePuts--;
    if (bulk) this.#bulkPuts--;
    this.#group.nudge();
    if (this.#activePuts > 0) return;
    this.#idleWaiters.splice(0).forEach((wake) => wake());
    if (!this.committing) this.log.nothingComing();
  }

  /** Whether a put is in progress. */
  get busy(): boolean {
    return this.#activePuts > 0;
  }

  /** Whether a put of a bulk stream (putMany: putFiles, snapshots) is in progress. */
  get bulk(): boolean {
    return this.#bulkPuts > 0;
  }

  /** Whether commits are queued or being made (the group commit). */
  get committing(): boolean {
    return this.#group.committing;
  }

  /** Resolves when no put is in progress (close drains them). */
  idle(): Promise<void> {
    return this.#activePuts === 0 ? Promise.resolve() : new Promise((r) => this.#idleWaiters.push(r));
  }

  /** A chunk written by a put in progress, if any (so a second put can share it). */
  pending(key: string): StoredChunk | undefined {
    return this.#pending.get(key);
  }

  usePack(packId: number): void {
    this.#packUsers.add(packId);
  }

  releasePack(packId: number): void {
    this.#packUsers.remove(packId);
  }

  packInUse(packId: number): boolean {
    return this.#packUsers.has(packId) || this.#open?.id === packId;
  }

  pin(key: string): void {
    this.#pins.add(key);
  }

  unpin(key: string): void {
    this.#pins.remove(key);
  }

  pinned(key: string): boolean {
    return this.#pins.has(key);
  }

  /** The chunk is committed now; later puts find its row. */
  settle(key: string): void {
    this.#pending.delete(key);
  }

  // ---- appending ---------------------------------------------------------------------------

  /**
   * Appends a chunk record to the open pack (opening or rotating it as needed) and registers
   * it as pending. The caller must `usePack` the returned pack and `settle` the key later.
   * `written` is false when another put wrote the same chunk while this one waited.
   */
  async append(c: ChunkLocation, payload: Uint8Array): Promise<{ chunk: StoredChunk; written: boolean }> {
    return this.inRoom(this.records.recordSize(payload.length), (pack) => this.#appendTo(pack, c, payload));
  }

  /**
   * `append` without waiting, when the open pack has room now; undefined when it must be
   * opened or sealed first (then `append`). Lets a batch of small documents place every
   * record in one synchronous pass.
   */
  appendNow(c: ChunkLocation, payload: Uint8Array): { chunk: StoredChunk; written: boolean } | undefined {
    const pack = this.#open;
    if (!pack || this.#full(pack, this.records.recordSize(payload.length))) return undefined;
    return this.#appendTo(pack, c, payload);
  }

  #appendTo(pack: OpenPack, c: ChunkLocation, payload: Uint8Array): { chunk: StoredChunk; written: boolean } {
    // Synchronous from the room check to the registration: another put may look for this
    // key next, and another may seal the pack at its next await.
    const already = this.#pending.get(c.key);
    if (already) return { chunk: already, written: false };
    const offset = this.#written(pack, () => this.records.append(pack.writer, c, payload, this.#header));
    pack.dirty = true;
    pack.index.add(this.#header, offset);
    crashPoint('record-appended');
    const stored: StoredChunk = { key: c.key, codec: c.codec, rawLen: c.rawLen, storedLen: c.storedLen, packId: pack.id, offset };
    this.#pending.set(c.key, stored);
    return { chunk: stored, written: true };
  }

  /**
   * Appends a group record (FORMAT.md §6.2) of `group`'s members to the open pack. None of them
   * is pending yet: the put registers each member as it places it (`member`), so a member some
   * other put wrote meanwhile keeps that put's copy (this one's stays unreferenced, as a
   * record written twice does). The caller must `usePack` the pack.
   */
  async appendGroup(group: ChunkGroup): Promise<GroupPlace> {
    const head = groupHead(group.members, group.rawLen, group.frame.length);
    return this.inRoom(this.records.recordSize(head.length - RECORD_HEADER_SIZE + group.frame.length), (pack) => this.#appendGroupTo(pack, head, group.frame));
  }

  /** `appendGroup` without waiting, when the open pack has room now (else undefined). */
  appendGroupNow(group: ChunkGroup): GroupPlace | undefined {
    const pack = this.#open;
    const head = groupHead(group.members, group.rawLen, group.frame.length);
    if (!pack || this.#full(pack, this.records.recordSize(head.length - RECORD_HEADER_SIZE + group.frame.length))) return undefined;
    return this.#appendGroupTo(pack, head, group.frame);
  }

  #appendGroupTo(pack: OpenPack, head: Uint8Array, frame: Uint8Array): GroupPlace {
    const offset = this.#written(pack, () => this.records.appendGroup(pack.writer, head, frame));
    pack.dirty = true;
    pack.index.addGroup(head, offset);
    crashPoint('record-appended');
    return { packId: pack.id, offset, storedLen: head.length - RECORD_HEADER_SIZE + frame.length };
  }

  /**
   * Registers the member `key` of a group appended by `appendGroup` as pending — or answers
   * another put's pending copy (`written` false). Synchronous: the check and the registration
   * are one step (see `#appendTo`).
   */
  member(key: string, group: GroupPlace, at: number, rawLen: number): { chunk: StoredChunk; written: boolean } {
    const already = this.#pending.get(key);
    if (already) return { chunk: already, written: false };
    const stored: StoredChunk = { key, codec: CODEC_GROUP, rawLen, storedLen: group.storedLen, packId: group.packId, offset: group.offset, at };
    this.#pending.set(key, stored);
    return { chunk: stored, written: true };
  }

  /** Whether `length` more bytes would take the pack past its target (a lone record always fits). */
  #full(pack: OpenPack, length: number): boolean {
    return pack.writer.size > PACK_HEADER_SIZE && pack.writer.size + length > this.packTarget;
  }

  /** Appends a chunk record that is not registered as pending (a repair of a damaged chunk). */
  async appendCopy(c: ChunkLocation, payload: Uint8Array): Promise<{ chunk: StoredChunk }> {
    return this.inRoom(this.records.recordSize(payload.length), (pack) => {
      const offset = this.#written(pack, () => this.records.append(pack.writer, c, payload, this.#header));
      pack.dirty = true;
      pack.index.add(this.#header, offset);
      return { chunk: { ...c, packId: pack.id, offset } };
    });
  }

  /**
   * Appends a whole §6 record (or §6.2 group record) read from another pack (GC compaction; sealed again here in an
   * encrypted store, for its new place); not registered as pending. `opened`: a new pack (and
   * its header) was started for it.
   */
  async appendRecordCopy(record: Uint8Array): Promise<{ chunk: { packId: number; offset: number }; opened: boolean }> {
    return this.inRoom(this.records.recordSize(record.length - RECORD_HEADER_SIZE), (pack, opened) => {
      const offset = this.#written(pack, () => this.records.appendPlain(pack.writer, record));
      pack.dirty = true;
      if (isGroupRecord(record)) pack.index.addGroup(record, offset);
      else pack.index.add(record, offset);
      return { chunk: { packId: pack.id, offset }, opened };
    });
  }

  /**
   * Runs `write` on the open pack once it has room for `length` more bytes (sealing and
   * replacing it when full), in the same synchronous step as the final check that it is still
   * the open pack. Returning the pack to the caller instead would let another put seal it in
   * the microtask before the caller's append, leaving a record after the seal's fdatasync had
   * started: acknowledged but not durable (found by the 'full' durability race test).
   */
  private async inRoom<T>(length: number, write: (pack: OpenPack, opened: boolean) => T): Promise<T> {
    let opened = false;
    for (;;) {
      if (!this.#open) opened = true;
      const pack = await this.openPack();
      if (pack !== this.#open) continue; // sealed by another put while we waited
      if (this.#full(pack, length)) {
        await this.seal(pack);
        continue;
      }
      return write(pack, opened);
    }
  }

  private async openPack(): Promise<OpenPack> {
    if (this.#open) return this.#open;
    this.#opening ??= (async () => {
      const name = randomHex(16);
      let id: number;
      if (this.log.publishes) {
        // Its row comes with the commit after its upload (seal); until then a provisional id.
        id = --this.#provisional;
      } else {
        // The row is committed before the file exists: a file no row names once every commit
        // in the log is applied is an orphan (gc.ts).
        this.log.commit([{ op: 'pack', name, writer: this.log.writer }]);
        id = this.st.packByName.get(name)!.id;
      }
      const writer = await this.packs.create(name);
      crashPoint('pack-created');
      writer.append(this.records.packHeader());
      if (this.durability === 'full') await writer.sync();
      this.#packNames.set(id, name);
      this.#open = { id, writer, dirty: false, index: new PackIndexBuilder(), row: { id, name: writer.name } };
      return this.#open;
    })().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  /**
   * Seals the open pack (or `pack`, if it is still the open one): no more appends. Its sync is
   * tracked until done, so commits in durability 'full' wait for it (syncAppends).
   */
  async seal(pack: OpenPack | undefined = this.#open, carried = false): Promise<void> {
    if (!pack || pack !== this.#open) return;
    this.#open = undefined;
    const done = (async () => {
      // After the last record (FORMAT.md §6). A failed write gives the pack up at once, before
      // any await: a commit in between must already see it given up (found in review).
      this.#written(pack, () => pack.writer.append(this.records.index(pack.writer.name, pack.index)));
      pack.dirty = true;
      if (pack.dirty || this.durability === 'full') await pack.writer.sync();
      const sealedAt = Date.now();
      const { name } = pack.writer;
      if (carried) {
        // Not uploaded: its bytes ride in the next commit's object (decision 0044).
        const bytes = await pack.writer.detach!();
        crashPoint('pack-sealing');
        this.#sealed.add(name, this.log.writer, pack.writer.size, sealedAt, bytes);
        return;
      }
      await pack.writer.close(); // (on an object store, its upload)
      crashPoint('pack-sealing');
      if (this.log.publishes) this.#sealed.add(name, this.log.writer, pack.writer.size, sealedAt);
      else this.log.commit([{ op: 'pack-size', name, size: pack.writer.size, sealed: true }]);
    })();
    this.#sealing.add(done);
    try {
      await done;
    } catch (e) {
      this.#abandon(pack, e);
      throw e;
    } finally {
      this.#sealing.delete(done);
    }
  }

  // ---- a pack given up after a failed write -------------------------------------------------

  /** Runs a write to `pack`; when it fails, the pack is given up (`#abandon`) and the failure thrown. */
  #written<T>(pack: OpenPack, write: () => T): T {
    try {
      return write();
    } catch (e) {
      this.#abandon(pack, e);
      throw e;
    }
  }

  /** Hands the open pack's gathered appends to the platform before a commit (§8); a failure gives the pack up. */
  #drainOpen(): void {
    const open = this.#open;
    if (!open?.writer.drain) return;
    try {
      open.writer.drain();
    } catch (e) {
      if (this.log.publishes) throw e;
      this.#abandon(open, e);
    }
  }

  /**
   * Gives `pack` up after a failed write (a disk or a browser's quota full, an I/O error). What
   * it still gathered is dropped, not tried again by every later write: that kept a browser
   * over its quota failing every put, however small, until the page was reloaded, and kept
   * reads of the pack failing with it. The next record opens a new pack. Records committed
   * before stay readable (their bytes were handed over before their commit, FORMAT.md §8);
   * the puts whose records the pack held fail at their commit (`#refusal`), and their chunks
   * are no longer offered to other puts. Its row is sealed at the bytes written, as GC seals
   * a crashed writer's pack (if that commit fails too, the next open's GC does it).
   * On an object store a pack is written at its seal, which already lets it go.
   */
  #abandon(pack: OpenPack, cause: unknown): void {
    const { name } = pack.writer;
    if (this.log.publishes || this.#abandoned.has(name)) return;
    if (this.#open === pack) this.#open = undefined;
    this.#abandoned.set(name, cause ?? new InternalError(`pack ${name}: a write failed`));
    for (const [key, c] of this.#pending) if (c.packId === pack.id) this.#pending.delete(key);
    const size = pack.writer.abandon?.() ?? pack.writer.size;
    try {
      this.log.commit([{ op: 'pack-size', name, size, sealed: true }]);
    } catch {
      // (The disk is still full: the row stays open until GC after the next open seals it.)
    }
  }

  /** The failure of a pack given up that `ops` name, if any: their records may never have been written. */
  #refusal(ops: readonly Op[]): unknown {
    if (this.#abandoned.size === 0) return undefined;
    for (const op of ops) {
      const names = op.op === 'put' ? op.packs : op.op === 'hold' ? (op.chunk ? [op.chunk.pack] : []) : op.op === 'move' ? op.chunks.map((c) => c.pack) : [];
      for (const name of names) if (this.#abandoned.has(name)) return this.#abandoned.get(name);
    }
    return undefined;
  }

  /** Makes every appended record durable (durability 'full'), before metadata commits. */
  private async syncAppends(): Promise<void> {
    if (this.durability !== 'full') return;
    // Packs being sealed hold records of puts about to commit: their sync must finish first.
    const syncs: Promise<void>[] = [...this.#sealing];
    const open = this.#open;
    if (open?.dirty) {
      open.dirty = false;
      syncs.push(
        open.writer.sync().catch((e: unknown) => {
          this.#abandon(open, e);
          throw e;
        }),
      );
    }
    await Promise.all(syncs);
  }

  // ---- group commit (group-commit.ts) --------------------------------------------------------

  /**
   * Commits `ops` (catalog/ops.ts) after every record appended so far is durable, and resolves
   * with their results; commits that arrive while one is being made share the next.
   */
  commit(ops: readonly Op[]): Promise<OpResult[]> {
    return this.#group.commit(ops);
  }

  /**
   * On an object store (decision 0040): uploads the open pack, waits for uploads in flight and
   * answers the packs' operations, which the next commit carries before its puts.
   */
  private async uploadForCommit(): Promise<Op[]> {
    const open = this.#open;
    if (open && open.index.count > 0) {
      // A small pack goes inside the commit's object: one request for the commit, not two. (One
      // per commit: a pack given back by a failed commit may already ride in the next.)
      const carry = open.writer.size <= CARRY_MAX && open.writer.detach !== undefined && !this.#sealed.carrying;
      await this.seal(open, carry);
    }
    await Promise.all(this.#sealing);
    return this.#sealed.take();
  }

  async close(): Promise<void> {
    await this.#group.drained();
    await this.#opening?.catch(() => undefined); // a pack a put started opening is sealed too
    if (this.log.publishes) {
      // Records no commit names (puts that failed) are not worth an upload; packs uploaded
      // since the last commit get their rows, so nothing in the bucket is unnamed.
      this.#open = undefined;
      await Promise.all(this.#sealing);
      const ops = this.#sealed.take();
      if (ops.length) await this.log.commitAsync(ops);
      return;
    }
    await this.seal();
  }
}
