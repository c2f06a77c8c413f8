/**
 * Large metadata batches, set-based: the whole batch goes to SQLite as JSON and each kind of
 * change is one statement over `json_each`, so the per-update cost is SQLite's, not a
 * round trip through the driver per row. Same result as applying the updates one by one
 * (`applyMeta`), which the tests check; used only when every digest in the batch is distinct,
 * so no two updates touch the same document and their order cannot matter.
 */
import { NotFoundError } from './errors.js';
import type { SqlDatabase } from './backend/sql.js';
import type { MetaChange } from './documents.js';

export const BULK_MIN = 16;

export interface DigestChange extends MetaChange {
  digest: string;
}

export function prepareBulk(db: SqlDatabase) {
  // j.value: [digestHex, ...]; `unhex` turns the hex into the stored 32-byte BLOB.
  const docs = `SELECT d.id AS id, j.value AS v FROM json_each(?) j JOIN documents d ON d.digest = unhex(j.value ->> 0)`;
  return {
    missing: db.prepare<{ d: string }>(
      `SELECT j.value ->> 0 AS d FROM json_each(?) j LEFT JOIN documents d ON d.digest = unhex(j.value ->> 0) WHERE d.id IS NULL LIMIT 1`,
    ),
    setPath: db.prepare(`UPDATE documents SET path = s.v ->> 1 FROM (${docs}) s WHERE documents.id = s.id`),
    setMediaType: db.prepare(`UPDATE documents SET media_type = s.v ->> 1 FROM (${docs}) s WHERE documents.id = s.id`),
    metaSet: db.prepare(
      `INSERT INTO meta(doc_id, key, value) SELECT id, v ->> 1, v ->> 2 FROM (${docs}) WHERE true ON CONFLICT(doc_id, key) DO UPDATE SET value = excluded.value`,
    ),
    metaDelete: db.prepare(`DELETE FROM meta WHERE (doc_id, key) IN (SELECT id, v ->> 1 FROM (${docs}))`),
    tagAdd: db.prepare(`INSERT OR IGNORE INTO tags(doc_id, tag) SELECT id, v ->> 1 FROM (${docs})`),
    tagRemove: db.prepare(`DELETE FROM tags WHERE (tag, doc_id) IN (SELECT v ->> 1, id FROM (${docs}))`),
    touch: db.prepare(`UPDATE documents SET updated_at = ? WHERE digest IN (SELECT unhex(value ->> 0) FROM json_each(?))`),
    enqueue: db.prepare(
      `INSERT INTO search_queue(doc_id) SELECT d.id FROM json_each(?) j JOIN documents d ON d.digest = unhex(j.value ->> 0) WHERE true ON CONFLICT(doc_id) DO UPDATE SET seq = seq + 1`,
    ),
  };
}

export type Bulk = ReturnType<typeof prepareBulk>;

/** Applies the changes inside the caller's transaction; NOT_FOUND (before any write) if a digest is unknown. */
export function applyBulk(bulk: Bulk, changes: readonly DigestChange[], now: number): void {
  const hex = (d: string) => d.slice(7);
  const all = JSON.stringify(changes.map((c) => [hex(c.digest)]));
  const missing = bulk.missing.get(all);
  if (missing) throw new NotFoundError(`no document sha256:${missing.d}`);
  const rows = (pick: (c: DigestChange) => unknown[][]) => {
    const out: unknown[][] = [];
    for (const c of changes) for (const r of pick(c)) out.push([hex(c.digest), ...r]);
    return out;
  };
  const run = (stmt: { run(...p: (string | number)[]): unknown }, r: unknown[][]) => {
    if (r.length) stmt.run(JSON.stringify(r));
  };
  run(bulk.setPath, rows((c) => (c.path !== undefined ? [[c.path]] : [])));
  run(bulk.setMediaType, rows((c) => (c.mediaType !== undefined ? [[c.mediaType]] : [])));
  run(bulk.metaSet, rows((c) => Object.entries(c.meta ?? {}).filter(([, v]) => v !== null)));
  run(bulk.metaDelete, rows((c) => Object.entries(c.meta ?? {}).filter(([, v]) => v === null).map(([k]) => [k])));
  run(bulk.tagAdd, rows((c) => (c.addTags ?? []).map((t) => [t])));
  run(bulk.tagRemove, rows((c) => (c.removeTags ?? []).map((t) => [t])));
  bulk.touch.run(now, all);
  bulk.enqueue.run(all);
}
