/**
 * Large metadata batches, set-based: the whole batch goes to SQLite as JSON and each kind of
 * change is one statement over `json_each`, so the per-update cost is SQLite's, not a
 * round trip through the driver per row. Same result as applying the updates one by one
 * (`applyMeta`), which the tests check; used only when every update names a distinct entry,
 * so no two updates touch the same entry and their order cannot matter.
 */
import type { SqlDatabase } from '../backend/sql.js';
import { resolveEntryId, type EntryTarget, type MetaChange } from './entries.js';
import type { Statements } from './statements.js';

export const BULK_MIN = 16;

export interface EntryChange extends MetaChange {
  entryId: number;
}

export function prepareBulk(db: SqlDatabase) {
  return {
    // The entries of many targets at once: j.key is the target's index in the batch.
    byDigest: db.prepare<{ i: number; id: number; pathless: number }>(
      'SELECT j.key AS i, e.id AS id, e.path IS NULL AS pathless FROM json_each(?) j JOIN documents d ON d.digest = unhex(j.value) JOIN entries e ON e.doc_id = d.id',
    ),
    byPath: db.prepare<{ i: number; id: number; pathless: number }>('SELECT j.key AS i, e.id AS id, 0 AS pathless FROM json_each(?) j JOIN entries e ON e.path = j.value'),
    // Below, each json_each row's value is [entryId, ...].
    setMediaType: db.prepare(`UPDATE entries SET media_type = s.v ->> 1 FROM (SELECT value AS v FROM json_each(?)) s WHERE entries.id = s.v ->> 0`),
    metaSet: db.prepare(
      `INSERT INTO meta(entry_id, key, value) SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?) WHERE true ON CONFLICT(entry_id, key) DO UPDATE SET value = excluded.value`,
    ),
    metaDelete: db.prepare(`DELETE FROM meta WHERE (entry_id, key) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`),
    tagAdd: db.prepare(`INSERT OR IGNORE INTO tags(entry_id, tag) SELECT value ->> 0, value ->> 1 FROM json_each(?)`),
    tagRemove: db.prepare(`DELETE FROM tags WHERE (tag, entry_id) IN (SELECT value ->> 1, value ->> 0 FROM json_each(?))`),
    touch: db.prepare(`UPDATE entries SET updated_at = ? WHERE id IN (SELECT value ->> 0 FROM json_each(?))`),
    enqueue: db.prepare(
      `INSERT INTO search_queue(entry_id) SELECT value ->> 0 FROM json_each(?) WHERE true ON CONFLICT(entry_id) DO UPDATE SET seq = seq + 1`,
    ),
  };
}

export type Bulk = ReturnType<typeof prepareBulk>;

/**
 * The entry ids of many targets (entries.ts `resolveEntryId` for each, with the same result):
 * two statements for the whole batch; a target that names no entry, or several, is resolved
 * alone, which throws its NOT_FOUND or AMBIGUOUS.
 */
export function resolveEntries(bulk: Bulk, st: Statements, targets: readonly EntryTarget[]): number[] {
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
  targets.forEach((t, i) => ('digest' in t ? digests : paths).push(i));
  if (digests.length) take(bulk.byDigest.all(JSON.stringify(digests.map((i) => (targets[i] as { digest: string }).digest.slice(7)))), digests);
  if (paths.length) take(bulk.byPath.all(JSON.stringify(paths.map((i) => (targets[i] as { path: string }).path))), paths);
  return targets.map((t, i) => pathless[i] ?? (count[i] === 1 ? only[i]! : resolveEntryId(st, t)));
}

/** Applies the changes inside the caller's transaction (the entries exist: resolved by the caller). */
export function applyBulk(bulk: Bulk, changes: readonly EntryChange[], now: number): void {
  const rows = (pick: (c: EntryChange) => unknown[][]) => {
    const out: unknown[][] = [];
    for (const c of changes) for (const r of pick(c)) out.push([c.entryId, ...r]);
    return out;
  };
  const run = (stmt: { run(...p: (string | number)[]): unknown }, r: unknown[][]) => {
    if (r.length) stmt.run(JSON.stringify(r));
  };
  const all = JSON.stringify(changes.map((c) => [c.entryId]));
  run(bulk.setMediaType, rows((c) => (c.mediaType !== undefined ? [[c.mediaType]] : [])));
  run(bulk.metaSet, rows((c) => Object.entries(c.meta ?? {}).filter(([, v]) => v !== null)));
  run(bulk.metaDelete, rows((c) => Object.entries(c.meta ?? {}).filter(([, v]) => v === null).map(([k]) => [k])));
  run(bulk.tagAdd, rows((c) => (c.addTags ?? []).map((t) => [t])));
  run(bulk.tagRemove, rows((c) => (c.removeTags ?? []).map((t) => [t])));
  bulk.touch.run(now, all);
  bulk.enqueue.run(all);
}
