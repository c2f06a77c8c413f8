/**
 * Large metadata batches, set-based: each kind of change is a few statements for the whole
 * batch (the values bound many rows at a time, or as JSON over `json_each`), so the
 * per-update cost is SQLite's, not a round trip through the driver per row. Same result as
 * applying the updates one by one (`applyMeta`), which the tests check; used only when every
 * update names a distinct entry, so no two updates touch the same entry and their order
 * cannot matter.
 */
import type { SqlDatabase, SqlStatement, SqlValue } from '../backend/sql.js';
import { resolveEntryId, type EntryTarget, type MetaChange } from './entries.js';
import type { Statements } from './statements.js';
import type { TargetCache } from './target-cache.js';

export const BULK_MIN = 16;

/** Rows one multi-row upsert binds at most (3 values each: far below SQLite's 32,766). */
const UPSERT_ROWS = 256;

export function prepareBulk(db: SqlDatabase) {
  const upserts = new Map<number, SqlStatement>();
  return {
    // The entries of many targets at once: j.key is the target's index in the batch.
    byDigest: db.prepare<{ i: number; id: number; pathless: number }>(
      'SELECT j.key AS i, e.id AS id, e.path IS NULL AS pathless FROM json_each(?) j JOIN documents d ON d.digest = unhex(j.value) JOIN entries e ON e.doc_id = d.id',
    ),
    byPath: db.prepare<{ i: number; id: number; pathless: number }>('SELECT j.key AS i, e.id AS id, 0 AS pathless FROM json_each(?) j JOIN entries e ON e.path = j.value'),
    // Below, each json_each row's value is [entryId, ...].
    setMediaType: db.prepare(`UPDATE entries SET media_type = s.v ->> 1 FROM (SELECT value AS v FROM json_each(?)) s WHERE entries.id = s.v ->> 0`),
    /** An upsert of `rows` (entry, key, value) rows, made once per row count. */
    metaSet(rows: number): SqlStatement {
      let s = upserts.get(rows);
      if (!s) {
        const values = Array.from({ length: rows }, () => '(?, ?, ?)').join(', ');
        s = db.prepare(`INSERT INTO meta(entry_id, key, value) VALUES ${values} ON CONFLICT(entry_id, key) DO UPDATE SET value = excluded.value`);
        upserts.set(rows, s);
      }
      return s;
    },
    metaDelete: db.prepare(`DELETE FROM meta WHERE (entry_id, key) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`),
    tagAdd: db.prepare(`INSERT OR IGNORE INTO tags(entry_id, tag) SELECT value ->> 0, value ->> 1 FROM json_each(?)`),
    tagRemove: db.prepare(`DELETE FROM tags WHERE (tag, entry_id) IN (SELECT value ->> 1, value ->> 0 FROM json_each(?))`),
  };
}

export type Bulk = ReturnType<typeof prepareBulk>;

/**
 * The entry ids of many targets (entries.ts `resolveEntryId` for each, with the same result):
 * those the cache knows, then two statements for the rest; a target that names no entry, or
 * several, is resolved alone, which throws its NOT_FOUND or AMBIGUOUS.
 */
export function resolveEntries(bulk: Bulk, st: Statements, targets: readonly EntryTarget[], cache?: TargetCache): number[] {
  const ids: (number | undefined)[] = targets.map((t) => cache?.get(t));
  const pathless: (number | undefined)[] = new Array(targets.length);
  const only: (number | undefined)[] = new Array(targets.length);
  const count = new Array<number>(targets.length).fill(0);
  const take = (rows: { i: number; id: number; pathless: number }[], at: number[]) => {
    for (const r of rows) {
      const i = at[r.i]!;
      if (r.pathless) pathless[i] = r.id;
      only[i] = r.id;
      count[i]!++;
    }
  };
  const digests: number[] = [];
  const paths: number[] = [];
  targets.forEach((t, i) => ids[i] === undefined && ('digest' in t ? digests : paths).push(i));
  if (digests.length) take(bulk.byDigest.all(JSON.stringify(digests.map((i) => (targets[i] as { digest: string }).digest.slice(7)))), digests);
  if (paths.length) take(bulk.byPath.all(JSON.stringify(paths.map((i) => (targets[i] as { path: string }).path))), paths);
  return targets.map((t, i) => {
    if (ids[i] !== undefined) return ids[i];
    const id = pathless[i] ?? (count[i] === 1 ? only[i]! : resolveEntryId(st, t));
    cache?.set(t, id);
    return id;
  });
}

/** Applies change i to entry ids[i], inside the caller's transaction (the entries exist: resolved by the caller). */
export function applyBulk(bulk: Bulk, st: Statements, ids: readonly number[], changes: readonly MetaChange[]): void {
  const media: unknown[] = [];
  const set: SqlValue[] = [];
  const unset: unknown[] = [];
  const add: unknown[] = [];
  const remove: unknown[] = [];
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i]!;
    const id = ids[i]!;
    if (c.mediaType !== undefined) media.push([id, c.mediaType]);
    if (c.meta) {
      for (const k of Object.keys(c.meta)) {
        const v = c.meta[k]!;
        if (v === null) unset.push([id, k]);
        else set.push(id, k, v);
      }
    }
    for (const t of c.addTags ?? []) add.push([id, t]);
    for (const t of c.removeTags ?? []) remove.push([id, t]);
  }
  const run = (stmt: SqlStatement, rows: unknown[]) => {
    if (rows.length) stmt.run(JSON.stringify(rows));
  };
  run(bulk.setMediaType, media);
  for (let at = 0; at < set.length; at += UPSERT_ROWS * 3) {
    const values = set.slice(at, at + UPSERT_ROWS * 3);
    bulk.metaSet(values.length / 3).run(...values);
  }
  run(bulk.metaDelete, unset);
  run(bulk.tagAdd, add);
  run(bulk.tagRemove, remove);
  st.queued.addAll(ids);
}
