/**
 * `Store.verify`: the bytes side (chunks, documents, trees, packs; bytes/verify.ts), the log's
 * hash chain (catalog/log-verify.ts) and the database against a replay of the log
 * (catalog/catalog-verify.ts), checked against each other and reported together. On an
 * object store what is checked is the bucket, not this server's copies (decision 0043).
 */
import { verifyCatalog } from './catalog/catalog-verify.js';
import { verifyLog } from './catalog/log-verify.js';
import { verifyStore, type VerifyProgress, type VerifyReport } from './bytes/verify.js';
import type { StoreContext } from './store-context.js';
import { markDamaged } from './store-writes.js';

export async function verifyAll(ctx: StoreContext, onProgress?: (p: VerifyProgress) => void, options: { readData?: boolean } = {}): Promise<VerifyReport> {
  await ctx.log.refresh(); // (an object store: the log's newest commits first)
  // By default the data is read where reading it is cheap: a local store, or an encrypted
  // store's objects in a local directory (its packs are files here too).
  const readData = options.readData ?? (!ctx.log.publishes || ctx.b.dataOnDisk === true);
  const packs = ctx.b.packs.origin?.() ?? ctx.b.packs; // (what the bucket holds, not this server's copies)
  const report = await verifyStore(ctx.st, ctx.reader.over(packs), packs, onProgress, ctx.readonly ? undefined : markDamaged(ctx), readData);
  const log = await verifyLog(ctx.st, ctx.b.log);
  report.logCommitsChecked = log.commitsChecked;
  report.damagedLog = log.damaged;
  if (log.damaged.length) report.ok = false;
  const catalog = await verifyCatalog(ctx.db, ctx.st, ctx.b.log, ctx.b.scratchDb);
  report.catalogChecked = catalog.checked;
  report.catalogRowsChecked = catalog.rowsChecked;
  report.damagedCatalog = catalog.damaged;
  if (catalog.damaged.length) report.ok = false;
  // An encrypted store's key files: one that cannot be read was "ok" to verify (a trial).
  report.damagedKeys = (await ctx.b.damagedKeys?.()) ?? [];
  if (report.damagedKeys.length) report.ok = false;
  return report;
}
