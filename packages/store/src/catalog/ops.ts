/**
 * The operations a commit carries (FORMAT.md §15.3) and the one function that applies them to
 * the database: used as a writer commits and when a database is rebuilt from the log, so a
 * replay gives the same rows, ids and version numbers the writers saw. Every operation is a
 * function of the database before it, its own fields and its commit's time — never of the
 * clock, a random number or another database's row ids (packs are named, not numbered).
 */
import { InternalError, InvalidInputError } from '@kura/core';
import { MissingChunksError, NotFoundError } from '../errors.js';
import type { RunResult, SqlDatabase } from '../backend/sql.js';
import {
  applyMeta,
  deleteDocument,
  deletePath,
  purgeDocument,
  deleteVersion,
  deletePathKeepingVersions,
  recordPut,
  resolveEntryId,
  type EntryTarget,
  type MetaChange,
  type PutAttributes,
} from './entries.js';
import { bytesToHex, hexInto, hexToBytes, parseDigest, parseDigestInto } from '../hex.js';
import { ENTRY_SIZE } from '../bytes/manifest.js';
import { BULK_MIN, applyBulk, prepareBulk, resolveEntries, type Bulk } from './meta-batch.js';
import { CODEC_GROUP, PACK_HEADER_SIZE } from '../bytes/pack-record.js';
import { commitSnapshot, releaseSnapshot, requireSnapshot, type DirNode, type SnapshotInfo } from './snapshot.js';
import type { Statements } from './statements.js';
import type { TargetCache } from './target-cache.js';

/** Where a chunk's record is: key (BLAKE3 hex), pack name, offset and lengths, codec. */
export interface ChunkPlace {
  key: string;
  pack: string;
  offset: number;
  raw: number;
  stored: number;
  codec: number;
  /** A group's member (codec 2, FORMAT.md §6.2): its place in the group's raw bytes. */
  at?: number;
}

export type Op =
  /**
   * Writer `writer` started a pack (its row; the file follows). `inline`: on an object store,
   * the pack's bytes follow this commit's frame in its log object (decision 0044).
   */
  | { op: 'pack'; name: string; writer: string; inline?: true }
  /** A pack's size grew to at least `size`; `sealed`: no more appends. */
  | { op: 'pack-size'; name: string; size: number; sealed?: true }
  /**
   * A document: digest (`sha256:…`), size, manifest (hex of FORMAT.md §7's blob); where the
   * chunks this put wrote are (`places`, a chunk the store had is not listed) and fresh copies
   * of damaged chunks (`repairs`), each as flat runs of 5 numbers [ordinal of the key among the
   * manifest's distinct keys in order, index into `packs`, offset, stored length, codec]; `at`,
   * for each run of `places` whose codec is 2 (a group's member, FORMAT.md §6.2), in order, its
   * place in the group's raw bytes; and its entry's attributes (absent: a snapshot's file, no
   * entry).
   */
  | { op: 'put'; digest: string; size: number; manifest: string; packs: string[]; places: number[]; at?: number[]; repairs?: number[]; entry?: PutAttributes }
  /** An uploaded chunk (FORMAT.md §12), kept until `until`; `chunk` when written (`repair`: replacing a damaged copy). */
  | { op: 'hold'; key: string; until: number; chunk?: ChunkPlace; repair?: true }
  /** Metadata changes, all or none. A digest target is resolved here, in log order. */
  | { op: 'meta'; updates: { target: EntryTarget; change: MetaChange }[] }
  /** `policy` (schema 16): a removal by a retention policy, skipped when the version is pinned or gone. */
  | { op: 'delete-version'; path: string; version: number; policy?: true }
  /**
   * `keepVersions` (schema 16, decision 0059): the path goes, its versions stay; `time`: when
   * it went (ms since the epoch; a copy carries the source's; absent: the commit's time).
   */
  | { op: 'delete-path'; path: string; keepVersions?: true; time?: number }
  /**
   * `unheld` (GC, FORMAT.md §9): the document only if nothing holds it (no entry, version or
   * snapshot) — what a snapshot stopped before its commit left. (Without it a document nothing
   * names is left alone, as it always was: logs written before keep their meaning.)
   */
  | { op: 'delete-document'; digest: string; unheld?: true }
  /**
   * `id`: the snapshot's id (FORMAT.md §13, snapshot ids; absent in operations logged before
   * schema 9). `time`: when it is of (ms since the epoch; absent: the commit's time), `tags`
   * (schema 16).
   */
  | { op: 'snapshot'; root: DirNode; label: string | null; id?: string; time?: number; tags?: string[]; utcOffset?: number }
  /**
   * `id`: the snapshot's whole id (a number: its row, in operations logged before schema 9).
   * `policy` (schema 16): a removal by a retention policy, skipped when the snapshot is pinned or gone.
   */
  | { op: 'rm-snapshot'; id: string | number; policy?: true }
  /** A pin (schema 16, decision 0058): the snapshot (whole id) or the version is kept whatever a policy says, or no longer. */
  | { op: 'pin'; target: { snapshot: string } | { path: string; version: number }; pinned: boolean }
  /** A retention policy kept in the store (schema 16): `rules` (checked by its writer) set it, null removes it. */
  | { op: 'policy'; target: string; rules: object | null }
  /**
   * An access token kept in the store (schema 17, decision 0060): `hash` (SHA-256 of its secret,
   * hex), its scopes and path prefixes (null: every path) add it under `name`, which must be
   * free; `hash` null revokes the token of that name.
   */
  | { op: 'token'; name: string; hash: string | null; scopes?: string[]; prefixes?: string[] | null }
  /**
   * GC: unreferenced chunk rows go, unless a put or an upload hold took them meanwhile. With
   * `before` (other writers alive, FORMAT.md §9) a row goes only if it was marked unreferenced
   * at or before that time; an unmarked one is marked now.
   */
  | { op: 'condemn'; keys: string[]; before?: number }
  /**
   * GC compaction: chunks copied out of pack `from`, which held `rows` chunk rows when GC read
   * them; its row goes once every one has moved or gone and none is left in it.
   */
  | { op: 'move'; from: string; rows: number; chunks: { key: string; pack: string; offset: number }[] }
  /** GC: sealed packs no chunk row points into; one a chunk row points into again stays. */
  | { op: 'drop-packs'; names: string[] }
  /**
   * GC on an object store (decision 0041): `holder` runs GC until the commit's time plus `ms`
   * (0: releases it), unless another holder's lease has not run out; answers whether it holds.
   */
  | { op: 'gc-lease'; holder: string; ms: number }
  /** GC: dropped packs whose files or objects are gone (FORMAT.md §9): their records go. */
  | { op: 'forget-packs'; names: string[] };

/**
 * The commit an operation is applied from: its seq and where its frame ends in its log object
 * or segment — where a pack it carries begins (decision 0044).
 */
export interface CommitPlace {
  seq: number;
  end: number;
}

/** A pack's bytes, riding on its `pack` operation until the commit that carries them is encoded: never in the log's JSON. */
const CARRIED = Symbol('carried pack bytes');

/** `op` (an inline `pack` operation) with the pack's bytes attached. */
export function carrying(op: Op & { op: 'pack' }, bytes: Uint8Array): Op {
  (op as { [CARRIED]?: Uint8Array })[CARRIED] = bytes;
  return op;
}

/** The bytes an inline `pack` operation carries (carrying), if any. */
export function carriedBytes(op: Op): Uint8Array | undefined {
  return (op as { [CARRIED]?: Uint8Array })[CARRIED];
}

/** What applying an operation answers (a snapshot its info, a delete whether it found anything, a condemnation its count). */
export type OpResult = SnapshotInfo | boolean | number | string[] | undefined;

export interface ApplyContext {
  db: SqlDatabase;
  st: Statements;
  bulk?: Bulk;
  /**
   * This writer's open pack, when it has one: a put into it needs no lookup of its row (no
   * other writer drops a live writer's open pack; a sealed one it may, so those are looked up).
   */
  openPack?: () => { id: number; name: string } | undefined;
  /** Which entry a target names, kept by a writer between its commits (target-cache.ts). */
  targets?: TargetCache;
  /** Told the id of every pack row that goes: SQLite may give the id to the next pack. */
  packGone?: (id: number) => void;
  /**
   * The pack row the last `pack` operation made, and the application of a commit that made it
   * (its CommitPlace, by identity): the puts after it in the same commit name it (on an object
   * store, a commit of small puts names only the pack it carries), and each would otherwise
   * look it up by name. An application of a commit runs its `pack` operations before the puts
   * that name them, and a rolled-back one that is run again runs them again; another commit,
   * or another application, has another place; a dropped pack forgets it.
   */
  madePack?: { at: CommitPlace; name: string; id: number } | undefined;
}

/**
 * An ApplyContext with every property present from the start, the same in every store of the
 * process: made as `{ db, st }` and given its other properties later (some in another order,
 * as a store replayed or caught up before its writer attached), each store made its objects
 * take another path through V8's hidden classes, and opening a second store threw away the
 * optimized code of every put (`applyPut` and what calls it).
 */
export function applyContext(db: SqlDatabase, st: Statements, targets?: TargetCache): ApplyContext {
  return { db, st, bulk: undefined, openPack: undefined, targets, packGone: undefined, madePack: undefined };
}

/** A pack's row goes: its file or object a margin later (dropped_packs, FORMAT.md §9). */
function dropPack(ctx: ApplyContext, id: number, name: string, time: number): void {
  ctx.st.packDelete.run(id);
  ctx.st.packDropped.run(name, time);
  ctx.packGone?.(id);
  if (ctx.madePack?.id === id) ctx.madePack = undefined;
}

/** Operations that never change which entry a path or a digest names (the rest clear ApplyContext.targets). */
const KEEPS_TARGETS: ReadonlySet<Op['op']> = new Set(['pack', 'pack-size', 'hold', 'meta', 'snapshot', 'rm-snapshot', 'pin', 'policy', 'token', 'condemn', 'move', 'drop-packs', 'gc-lease', 'forget-packs']);

function packId(st: Statements, name: string, op: Op['op']): number {
  const row = st.packIdByName.get(name);
  if (!row) throw new InternalError(`a ${op} operation names pack ${name}, which has no row`);
  return row.id;
}

export function applyOp(ctx: ApplyContext, op: Op, time: number, at?: CommitPlace): OpResult {
  const { st } = ctx;
  if (!KEEPS_TARGETS.has(op.op)) ctx.targets?.clear();
  switch (op.op) {
    case 'pack': {
      let made: RunResult;
      if (!op.inline) made = st.packInsert.run(op.name, PACK_HEADER_SIZE, time, op.writer);
      else if (at) made = st.packInsertInline.run(op.name, PACK_HEADER_SIZE, time, op.writer, at.seq, at.end);
      else throw new InternalError(`pack ${op.name} is carried by its commit, but this replay does not say which commit (decision 0044)`);
      // (A row that was there already — a commit whose answer was lost, applied before — is
      // looked up by the puts as before.)
      ctx.madePack = made.changes === 1 && at ? { at, name: op.name, id: Number(made.lastInsertRowid) } : undefined;
      return undefined;
    }
    case 'pack-size': {
      // A pack another writer's GC dropped meanwhile (it found it sealed and empty) has no row
      // to grow: nothing to do; a put that names it is refused on its own (MISSING_CHUNKS).
      const id = st.packIdByName.get(op.name)?.id;
      if (id === undefined) return undefined;
      st.packGrow.run(op.size, id);
      if (op.sealed) st.packSeal.run(time, id);
      return undefined;
    }
    case 'put':
      applyPut(ctx, op, time, at);
      return undefined;
    case 'hold': {
      const k = hexToBytes(op.key);
      if (op.chunk) {
        const c = op.chunk;
        if (op.repair) {
          st.chunkRepair.run(packId(st, c.pack, op.op), c.offset, c.raw, c.stored, c.codec, k);
          st.damagedClear.run(k);
        } else {
          st.chunkUpsert.run(k, packId(st, c.pack, op.op), c.offset, c.raw, c.stored, c.codec, 0); // (uploads are never group members)
        }
      }
      st.holdSet.run(k, op.until);
      return undefined;
    }
    case 'meta':
      applyMetaUpdates(ctx, op.updates);
      return undefined;
    case 'delete-version':
      if (op.policy && st.versionGet.get(op.path, op.version)?.pinned === 1) return false;
      return deleteVersion(st, op.path, op.version, time);
    case 'delete-path':
      return op.keepVersions ? deletePathKeepingVersions(st, op.path, op.time ?? time) : deletePath(st, op.path);
    case 'delete-document': {
      if (op.unheld) {
        const doc = st.docAnyByDigest.get(parseDigest(op.digest));
        if (!doc || doc.refs > 0 || doc.holds > 0) return false; // (held since GC read it)
        purgeDocument(st, doc);
        return true;
      }
      const doc = st.docByDigest.get(parseDigest(op.digest));
      return doc ? deleteDocument(st, doc, time) : false;
    }
    case 'snapshot':
      // An id given by the caller (a copy from another store keeps its snapshots' ids) may be taken.
      if (op.id !== undefined && st.snapshotByUid.get(op.id)) throw new InvalidInputError(`a snapshot ${op.id} exists`, 'id');
      return commitSnapshot(st, op.root, op.label, op.time ?? time, op.id, op.tags, op.utcOffset);
    case 'rm-snapshot': {
      // A number is the snapshot's row: operations logged before schema 9 name it so.
      if (op.policy) {
        const row = st.snapshotByUid.get(String(op.id));
        if (row && row.pinned === 0) releaseSnapshot(st, row);
        return undefined;
      }
      const row = typeof op.id === 'number' ? st.snapshotGet.get(op.id) : requireSnapshot(st, op.id);
      if (!row) throw new NotFoundError(`no snapshot ${op.id}`);
      releaseSnapshot(st, row);
      return undefined;
    }
    case 'policy':
      // Answers whether the target had a policy before.
      if (op.rules === null) return st.policyDelete.run(op.target).changes === 1;
      st.policySet.run(op.target, JSON.stringify(op.rules));
      return undefined;
    case 'token':
      // Answers whether a token of that name was there (a revocation), else adds it.
      if (op.hash === null) return st.tokenDelete.run(op.name).changes === 1;
      if (st.tokenByName.get(op.name)) throw new InvalidInputError(`a token named ${op.name} exists: revoke it first, or choose another name`, 'name');
      st.tokenInsert.run(op.name, op.hash, JSON.stringify(op.scopes ?? []), op.prefixes ? JSON.stringify(op.prefixes) : null, time);
      return undefined;
    case 'pin': {
      // Answers whether the snapshot or version exists (and is now pinned as asked).
      const t = op.target;
      if ('snapshot' in t) return st.snapshotPin.run(op.pinned ? 1 : 0, requireSnapshot(st, t.snapshot).id).changes === 1;
      return st.versionPin.run(op.pinned ? 1 : 0, t.path, t.version).changes === 1;
    }
    case 'condemn': {
      st.holdsExpire.run(time);
      let removed = 0;
      if (op.before === undefined) {
        for (const key of op.keys) {
          const k = hexToBytes(key);
          if (st.chunkDelete.run(k, time).changes) (removed++, st.condemnedClear.run(k));
        }
        return removed;
      }
      st.condemnedRevived.run();
      for (const key of op.keys) {
        const k = hexToBytes(key);
        const since = st.condemnedSince.get(k)?.since;
        if (since === undefined) {
          if (st.chunkExists.get(k)?.refs === 0) st.condemnedMark.run(k, time);
        } else if (since <= op.before && st.chunkDelete.run(k, time).changes) {
          removed++;
          st.condemnedClear.run(k);
        }
      }
      return removed;
    }
    case 'move': {
      // Another writer's GC compacted or dropped the pack first: nothing left to move.
      const from = st.packIdByName.get(op.from)?.id;
      if (from === undefined) return undefined;
      let left = op.rows;
      for (const m of op.chunks) left -= st.chunkMove.run(packId(st, m.pack, op.op), m.offset, hexToBytes(m.key), from).changes;
      if (left <= 0 && !st.chunkInPack.get(from)) dropPack(ctx, from, op.from, time);
      return undefined;
    }
    case 'drop-packs': {
      // Re-checked here, in the commit: another writer may have committed rows into one of
      // them since GC looked (its records were written before the pack was sealed). One scan.
      const rows = op.names.map((n) => st.packByName.get(n)).filter((r) => r !== undefined);
      const used = new Set(st.packsWithChunks.all(JSON.stringify(rows.map((r) => r.id))).map((r) => r.pack_id));
      const dropped: string[] = [];
      for (const r of rows) {
        if (used.has(r.id)) continue;
        dropPack(ctx, r.id, r.name, time);
        dropped.push(r.name);
      }
      return dropped;
    }
    case 'gc-lease': {
      const lease = st.gcLease.get();
      if (lease && lease.holder !== op.holder && lease.until > time) return false;
      st.gcLeaseSet.run(op.holder, time + op.ms);
      return true;
    }
    case 'forget-packs':
      for (const name of op.names) st.droppedForget.run(name);
      return undefined;
    default:
      throw new InternalError(`unknown operation ${(op as { op: unknown }).op}`);
  }
}

/** A manifest's distinct chunk keys in order of first appearance, with how often each appears and its raw length. */
export type Distinct = Map<string, { n: number; raw: number }>;

/**
 * What applying a put operation computes from its manifest, when its writer has it at hand
 * (put.ts counts as it places chunks): the same manifest bytes and Distinct, without a second
 * copy of a large document's keys (a 2 GiB document has ~130,000).
 */
export function knowManifest(op: Extract<Op, { op: 'put' }>, known: KnownManifest): void {
  (op as { [KNOWN]?: KnownManifest })[KNOWN] = known;
}

interface KnownManifest {
  bytes: Uint8Array;
  distinct: Distinct;
}

/**
 * A symbol-keyed property of the operation (JSON.stringify skips it, so the log never sees it),
 * not a WeakMap: an ephemeron per put made every scavenge of a busy writer slower.
 */
const KNOWN = Symbol('known manifest');
/** The path's version a put's application left (recordPut): what the put answers (PutResult.version). */
export const APPLIED_VERSION = Symbol('applied version');

function distinctOf(manifest: Uint8Array): Distinct {
  const distinct: Distinct = new Map();
  const view = new DataView(manifest.buffer, manifest.byteOffset, manifest.byteLength);
  for (let at = 0; at + ENTRY_SIZE <= manifest.length; at += ENTRY_SIZE) {
    const key = bytesToHex(manifest.subarray(at, at + 32));
    const d = distinct.get(key);
    if (d) d.n++;
    else distinct.set(key, { n: 1, raw: view.getUint32(at + 32, true) });
  }
  return distinct;
}

/** A document's rows (FORMAT.md §8): its chunk references, then its entry or version. */
function applyPut(ctx: ApplyContext, op: Extract<Op, { op: 'put' }>, time: number, at: CommitPlace | undefined): void {
  const { st } = ctx;
  const known = (op as { [KNOWN]?: KnownManifest })[KNOWN];
  const manifest = known?.bytes ?? hexToBytes(op.manifest);
  const distinct = known?.distinct ?? distinctOf(manifest);
  // Arrays built by push, not by a spread or `map`: those make arrays of another elements
  // kind once V8 optimizes them inline than when they run as builtins, and the optimized code
  // met the other kind and was thrown away (a "wrong map" in runKey, once per writer).
  const keys: string[] = [];
  for (const key of distinct.keys()) keys.push(key);
  // A pack or a shared chunk another writer's GC reclaimed while this put was in progress
  // (FORMAT.md §9): the put is refused, nothing changes, and putting again stores it.
  const open = ctx.openPack?.();
  const made = at && ctx.madePack?.at === at ? ctx.madePack : undefined;
  const packIds: (number | undefined)[] = [];
  for (const name of op.packs) packIds.push(name === open?.name ? open.id : name === made?.name ? made.id : st.packIdByName.get(name)?.id);
  // Plain loops over the flat runs, not a callback per run: this is every put's apply, and
  // the smaller function is optimized sooner in a writer's first second.
  const repairs = op.repairs;
  if (repairs) {
    for (let i = 0; i + 5 <= repairs.length; i += 5) {
      const key = runKey(op, keys, packIds, repairs, i);
      const k = hexInto(key, KEY, 0);
      st.chunkRepair.run(packIds[repairs[i + 1]!]!, repairs[i + 2]!, distinct.get(key)!.raw, repairs[i + 3]!, repairs[i + 4]!, k);
      st.damagedClear.run(k);
    }
  }
  // Keys and the digest are decoded into buffers of this module (statements copy what they
  // bind), not a new array each: with the rest of a small file's put, those were the scavenger's.
  const digest = parseDigestInto(op.digest, DIGEST);
  // A user's put names a new document once (entries.ts recordPut, `fresh`).
  const inserted = st.docInsert.run(digest, op.size, manifest.length / ENTRY_SIZE, manifest, time, op.entry ? 1 : 0);
  let docId: number;
  if (inserted.changes === 0) {
    // Same bytes again: chunks this put wrote stay unreferenced (GC reclaims their records).
    docId = st.docAnyByDigest.get(digest)!.id;
  } else {
    const places = op.places;
    const placed = placedScratch(keys.length); // by ordinal
    let member = 0;
    for (let i = 0; i + 5 <= places.length; i += 5) {
      const key = runKey(op, keys, packIds, places, i);
      placed[places[i]!] = 1;
      const d = distinct.get(key)!;
      const codec = places[i + 4]!;
      if (codec === CODEC_GROUP) {
        st.chunkUpsertMember.run(hexInto(key, KEY, 0), packIds[places[i + 1]!]!, places[i + 2]!, d.raw, places[i + 3]!, codec, d.n, groupAt(op.at?.[member++], op.op));
      } else {
        st.chunkUpsert.run(hexInto(key, KEY, 0), packIds[places[i + 1]!]!, places[i + 2]!, d.raw, places[i + 3]!, codec, d.n);
      }
    }
    for (let ordinal = 0; ordinal < keys.length; ordinal++) {
      if (placed[ordinal]) continue;
      const key = keys[ordinal]!;
      if (st.chunkAddRefs.run(distinct.get(key)!.n, hexInto(key, KEY, 0)).changes !== 1) throw reclaimed([key], `chunk ${key}`);
    }
    docId = Number(inserted.lastInsertRowid);
  }
  // A user's put names the document at its path (or as a pathless entry); a snapshot's file is
  // kept by the snapshot's trees alone (FORMAT.md §13).
  if (op.entry) {
    const version = recordPut(st, docId, op.entry, time, inserted.changes === 1);
    // Kept on the operation for the put that made it (its commit applies this same object);
    // a replay elsewhere has no one to tell.
    if (version) (op as { [APPLIED_VERSION]?: typeof version })[APPLIED_VERSION] = version;
  }
}

/** A chunk key and a document digest as applyPut binds them (decoded in place, one put at a time). */
const KEY = new Uint8Array(32);
const DIGEST = new Uint8Array(32);
let PLACED = new Uint8Array(256);

/** A zeroed flag per distinct key of the put being applied (grown for a large document, kept). */
function placedScratch(n: number): Uint8Array {
  if (n > PLACED.length) PLACED = new Uint8Array(Math.max(n, PLACED.length * 2));
  if (n > 16) return PLACED.fill(0, 0, n);
  for (let i = 0; i < n; i++) PLACED[i] = 0; // (most puts: a few keys, where a call to fill cost more)
  return PLACED;
}

/** A group's member's place in its group (a commit without it is refused). */
function groupAt(at: number | undefined, op: string): number {
  if (at === undefined || !Number.isSafeInteger(at) || at < 0) throw new InternalError(`a ${op} places a group's member without its place in the group`);
  return at;
}

/**
 * The key of the run at `i` of a put's flat runs (ordinal, pack, offset, stored, codec: `put`
 * in Op), once its ordinal and its pack are checked.
 */
function runKey(op: Extract<Op, { op: 'put' }>, keys: string[], packIds: (number | undefined)[], flat: readonly number[], i: number): string {
  const key = keys[flat[i]!];
  const p = flat[i + 1]!;
  if (key === undefined || p >= op.packs.length) throw new InternalError(`a put of ${op.digest} places a chunk outside its manifest or packs`);
  if (packIds[p] === undefined) throw reclaimed([key], `pack ${op.packs[p]}`);
  return key;
}

function reclaimed(keys: string[], what: string): MissingChunksError {
  return new MissingChunksError(keys, `${what} was reclaimed by GC (in another process) while this put was in progress: nothing was stored; put it again`);
}

/** All resolved before anything changes: an unknown or ambiguous target changes nothing. */
function applyMetaUpdates(ctx: ApplyContext, updates: { target: EntryTarget; change: MetaChange }[]): void {
  const { st, targets } = ctx;
  if (updates.length < BULK_MIN) {
    // Plain loops: see applyPut on the arrays TurboFan builds inline.
    const ids: number[] = [];
    for (let i = 0; i < updates.length; i++) {
      const target = updates[i]!.target;
      let id = targets?.get(target);
      if (id === undefined) {
        id = resolveEntryId(st, target);
        targets?.set(target, id);
      }
      ids.push(id);
    }
    for (let i = 0; i < updates.length; i++) applyMeta(st, ids[i]!, updates[i]!.change);
    return;
  }
  const bulk = (ctx.bulk ??= prepareBulk(ctx.db));
  const ids = resolveEntries(bulk, st, updates.map((u) => u.target), targets);
  const changes = updates.map((u) => u.change);
  if (new Set(ids).size === ids.length) applyBulk(bulk, st, ids, changes);
  else changes.forEach((c, i) => applyMeta(st, ids[i]!, c));
}
