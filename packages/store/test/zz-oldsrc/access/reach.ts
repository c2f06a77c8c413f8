/**
 * What a token limited to path prefixes reaches (decision 0060): a document only through a path
 * under one of them. The server's limited view of the store (apps/server/src/access/) asks
 * these before it hands out a document named by its digest.
 */
import { parseDigest } from '../hex.js';
import { prefixesSql } from '../options.js';
import type { StoreContext } from '../store-context.js';

/** Whether some version of a path under one of `prefixes` is the document `digest`. */
export function heldUnder(ctx: StoreContext, digest: string, prefixes: readonly string[]): boolean {
  const bytes = parseDigest(digest);
  const under = prefixesSql('v.path', prefixes);
  return ctx.db.read(
    () =>
      ctx.db
        .prepare<{ one: number }>(`SELECT 1 AS one FROM versions v JOIN documents d ON d.id = v.doc_id WHERE d.digest = ? AND ${under.sql} LIMIT 1`)
        .get(bytes, ...under.params) !== undefined,
  );
}

/** The paths under `prefixes` whose latest version is the document `digest` (at most `limit`), by path. */
export function shownUnder(ctx: StoreContext, digest: string, prefixes: readonly string[], limit = 100): string[] {
  const bytes = parseDigest(digest);
  const under = prefixesSql('e.path', prefixes);
  return ctx.db.read(() =>
    ctx.db
      .prepare<{ path: string }>(`SELECT e.path AS path FROM entries e JOIN documents d ON d.id = e.doc_id WHERE d.digest = ? AND ${under.sql} ORDER BY e.path LIMIT ?`)
      .all(bytes, ...under.params, limit)
      .map((r) => r.path),
  );
}
