/**
 * How a store's database comes to match its log (FORMAT.md §15.4): a new store starts both; a
 * store from before the log gets a checkpoint of its catalog at seq 0; a database that is
 * missing is rebuilt from the configuration object, the newest checkpoint and the commits
 * after it; an existing one applies whatever the log has beyond it (commit-log.ts).
 */
import { CorruptDataError, InvalidInputError, isKuraError } from '@kura/core';
import type { SqlDatabase } from '../backend/sql.js';
import { FormatMismatchError, NotFoundError, WrongPasswordError } from '../errors.js';
import { FORMAT_NAME, PLAIN_FORMAT_VERSION } from '../store-types.js';
import { ENCRYPTED_FORMAT_VERSION } from '../encryption/config.js';
import { SCHEMA_VERSION, fillSnapshotIds } from './schema.js';
import type { Statements } from './statements.js';
import { checkpointName, clearCatalog, encodeCheckpoint, loadCheckpoint } from './checkpoint.js';
import { commitsAfter, decodeCommit, emptyHead, readHead, writeHead, type LogHead } from './commits.js';
import { inJobsTransaction } from './commit-jobs.js';
import type { LogStore } from './log-store.js';
import { publishes } from './object-commits.js';
import { applyContext, applyOp } from './ops.js';
import { ENQUEUE_ALL } from './search-queue.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Commits replayed per transaction by a rebuild. */
const REPLAY_BATCH = 1000;

export function encodeConfig(config: ReadonlyMap<string, string>): Uint8Array {
  return encoder.encode(JSON.stringify(Object.fromEntries([...config].sort(([a], [b]) => (a < b ? -1 : 1))), null, 2) + '\n');
}

export async function readConfigObject(log: LogStore): Promise<Map<string, string> | undefined> {
  const bytes = await log.readConfig();
  if (!bytes || bytes.length === 0) return undefined; // (an empty file: a create that never finished)
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch (e) {
    throw new CorruptDataError(`the store's configuration (kura-store.json) is not JSON: ${(e as Error).message}`, 'config');
  }
  if (typeof value !== 'object' || value === null || Object.values(value).some((v) => typeof v !== 'string')) {
    throw new CorruptDataError("the store's configuration (kura-store.json) is not a map of strings", 'config');
  }
  // An encrypted store read without its key (FORMAT.md §17.3): nothing of it can be read.
  if ('encryption' in value && !log.sealing) throw new WrongPasswordError('this store is encrypted: open it with its password', 'missing');
  return new Map(Object.entries(value as Record<string, string>));
}

/** Settings fixed when a store is made, which its database repeats (config rows): they must agree. */
const FIXED = ['format', 'format_version', 'store_id', 'chunk_avg', 'chunk_seed'] as const;

/**
 * The configuration object checked against what this Kura reads and against the database made
 * from it: a store written by a newer Kura is FORMAT_MISMATCH, a configuration that is not a
 * Kura store's or that the database contradicts is CORRUPT_DATA (`config`). A reader checks it
 * too: a damaged configuration was read as fine by `ls` and `verify`, and one claiming format
 * 99 was written to by `add`.
 */
export function checkConfigObject(config: ReadonlyMap<string, string>, rows: ReadonlyMap<string, string>): void {
  if (config.get('format') !== FORMAT_NAME) throw new CorruptDataError(`the store's configuration (kura-store.json) names no Kura store (format ${JSON.stringify(config.get('format') ?? null)})`, 'config');
  const version = Number(config.get('format_version'));
  if (!Number.isInteger(version) || version < 1) throw new CorruptDataError(`the store's configuration (kura-store.json) has no format version it could have (${JSON.stringify(config.get('format_version') ?? null)})`, 'config');
  const known = config.has('encryption') ? ENCRYPTED_FORMAT_VERSION : PLAIN_FORMAT_VERSION;
  // (The database's own word first: a newer Kura that wrote it is said as such.)
  for (const v of [Number(rows.get('format_version') ?? 0), version]) {
    if (v > known) throw new FormatMismatchError(`the store was written by a newer Kura (format ${v}; this one reads ${known})`, String(known), String(v));
  }
  if (config.has('encryption')) return; // (its sealed settings are checked when they are opened)
  for (const key of FIXED) {
    if (rows.has(key) && config.get(key) !== rows.get(key)) {
      throw new CorruptDataError(`the store's configuration (kura-store.json) and its database disagree on ${key} (${JSON.stringify(config.get(key) ?? null)} against ${JSON.stringify(rows.get(key))}): the file was changed, or is another store's`, 'config');
    }
  }
}

/** The store id a database was made for, or undefined when it has none yet (an empty database). */
export function storeIdOf(db: SqlDatabase): string | undefined {
  try {
    return db.prepare<{ value: string }>("SELECT value FROM config WHERE key = 'store_id'").get()?.value;
  } catch {
    return undefined; // no tables yet
  }
}

/** A new store: its configuration object, then the database's config rows and an empty log position. */
export async function createCatalog(db: SqlDatabase, st: Statements, log: LogStore, config: ReadonlyMap<string, string>): Promise<void> {
  if (!(await log.createConfig(encodeConfig(config)))) throw new InvalidInputError('a store already exists here', 'dir');
  db.transaction(() => {
    for (const [k, v] of config) st.configSet.run(k, v);
    writeHead(st, emptyHead());
  });
}

/**
 * Brings a migrated database to its log before the store opens for writing: a database from
 * before the log is checkpointed at seq 0 (and its configuration object written); an empty
 * database is rebuilt. Returns true when it rebuilt.
 */
export async function prepareCatalog(db: SqlDatabase, st: Statements, log: LogStore): Promise<boolean> {
  const config = await readConfigObject(log);
  const rows = new Map(st.configAll.all().map((r) => [r.key, r.value]));
  if (config) checkConfigObject(config, rows);
  if (rows.size === 0) {
    if (!config) throw new NotFoundError('not a Kura store (no store configuration)');
    await rebuildCatalog(db, st, log, config);
    return true;
  }
  if (!config) await log.createConfig(encodeConfig(rows));
  if (!readHead(st)) {
    // Made before the log: its catalog so far is the checkpoint the log starts after.
    const head = emptyHead();
    const name = checkpointName(0);
    if (!(await log.checkpoints()).includes(name)) await log.createCheckpoint(name, encodeCheckpoint(db, head, SCHEMA_VERSION));
    db.transaction(() => writeHead(st, head));
  }
  return false;
}

/**
 * Fills an empty (migrated) database from the log: the configuration, the newest checkpoint,
 * then every commit after it, REPLAY_BATCH per transaction; every entry queued for the search
 * index.
 */
export async function rebuildCatalog(db: SqlDatabase, st: Statements, log: LogStore, config: ReadonlyMap<string, string>): Promise<LogHead & { checkpoint: number | undefined }> {
  const head = await replayCatalog(db, st, log, config);
  // The search index is derived (FORMAT.md §10): every entry is indexed again, those of the
  // checkpoint included.
  st.queued.undoTo(0); // what the operations queued: all of it, below
  db.transaction(() => db.exec(`DELETE FROM search_queue; ${ENQUEUE_ALL}`));
  return head;
}

/**
 * Fills an empty (migrated) database from the log up to commit `upTo` (the whole log when
 * Infinity): the configuration, the newest whole checkpoint at or below it, then the commits
 * after that. What is derived from the catalog is the caller's to make.
 */
export async function replayCatalog(db: SqlDatabase, st: Statements, log: LogStore, config: ReadonlyMap<string, string>, upTo = Infinity): Promise<LogHead & { checkpoint: number | undefined }> {
  // The newest checkpoint that is whole, else the one before…, else the log from its start: a
  // damaged checkpoint blocked the rebuild although the whole log was there (a trial). (A log
  // truncated after a checkpoint breaks its chain without one: CORRUPT_DATA, as before.)
  const names = (await log.checkpoints()).filter((name) => Number(name) <= upTo);
  let head = emptyHead();
  let used: string | undefined;
  for (const name of [...names.reverse(), undefined]) {
    try {
      const bytes = name === undefined ? undefined : await log.readCheckpoint(name);
      db.transaction(() => {
        for (const [k, v] of config) st.configSet.run(k, v);
        head = bytes ? { ...loadCheckpoint(db, bytes, name!), segment: '', end: 0 } : emptyHead();
        fillSnapshotIds(db); // a checkpoint from before schema 9 has no ids: derived, as a migration does
        writeHead(st, head);
      });
      used = name;
      break;
    } catch (e) {
      // (An encrypted store's damaged checkpoint fails its authentication: `unauthentic`.)
      const reason = (e as { reason?: string }).reason;
      if (!(name !== undefined && isKuraError(e) && e.code === 'CORRUPT_DATA' && (reason === 'checkpoint' || reason === 'unauthentic'))) throw e;
    }
  }
  return { ...(await replayCommits(db, st, log, head, upTo)), checkpoint: used === undefined ? undefined : Number(used) };
}

/** Applies the log's commits after `head` up to `upTo` (all when Infinity), REPLAY_BATCH per transaction; answers the new head. */
export async function replayCommits(db: SqlDatabase, st: Statements, log: LogStore, head: LogHead, upTo = Infinity): Promise<LogHead> {
  const { commits, headAt } = await commitsAfter(log, head, publishes(log));
  if (!head.segment && headAt) {
    // The checkpoint's commit, found: the head names its place, as a replay of it would (and a
    // server on an object store lists the log after it, not from the start).
    head = { ...head, ...headAt };
    db.transaction(() => writeHead(st, head));
  }
  const wanted = commits.filter((c) => c.frame.seq <= upTo);
  const ctx = applyContext(db, st);
  for (let i = 0; i < wanted.length; i += REPLAY_BATCH) {
    const batch = wanted.slice(i, i + REPLAY_BATCH);
    inJobsTransaction(ctx, (applyJobs) => {
      for (const { frame, segment } of batch) {
        const c = decodeCommit(frame, log.sealing);
        const end = frame.offset + frame.length;
        const at = { seq: c.seq, end };
        applyJobs(c, (op) => applyOp(ctx, op, c.time, at));
        head = { seq: c.seq, hash: c.hash, segment, end };
      }
      writeHead(st, head);
    });
  }
  return head;
}

/**
 * Replaces the catalog with a checkpoint's (decision 0045): a server whose head the log no
 * longer holds — it was stopped or paused past the log's retention, and the commits after its
 * head were truncated — starts again from the checkpoint that covers them, as a new server
 * would. What is derived (the search index, extracted text, vectors) is made again. Answers
 * the new head (naming no segment: the catch-up lists the log after its seq).
 */
export function rebaseCatalog(db: SqlDatabase, st: Statements, bytes: Uint8Array, name: string): LogHead {
  let head = emptyHead();
  st.queued.undoTo(0);
  db.transaction(() => {
    clearCatalog(db);
    head = { ...loadCheckpoint(db, bytes, name), segment: '', end: 0 };
    fillSnapshotIds(db);
    writeHead(st, head);
    db.exec(ENQUEUE_ALL);
  });
  return head;
}
