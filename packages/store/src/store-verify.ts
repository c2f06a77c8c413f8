/**
 * `Store.verify`: the bytes side (chunks, documents, trees, packs; bytes/verify.ts), the log's
 * hash chain (catalog/log-verify.ts) and the database against a replay of the log
 * (catalog/catalog-verify.ts), checked against each other and reported together. On an
 * object store what is checked is the bucket, not this server's copies (decision 0043).
 */
import { verifyCatalog } from './catalog/catalog-verify.js';
import { verifyLog } from './catalog/log-verify.js';
import type { LogStore } from './catalog/log-store.js';
import { publishes } from './catalog/object-commits.js';
import { verifyStore, type VerifyProgress, type VerifyReport } from './bytes/verify.js';
import type { StoreContext } from './store-context.js';
import { markDamaged } from './store-writes.js';
import { remakeIndex } from './store-index.js';

export async function verifyAll(ctx: StoreContext, onProgress?: (p: VerifyProgress) => void, options: { readData?: boolean } = {}): Promise<VerifyReport> {
  await ctx.log.refresh(); // (an object store: the log's newest commits first)
  // By default the data is read where reading it is cheap: a local store, or an encrypted
  // store's objects in a local directory (its packs are files here too).
  const readData = options.readData ?? (!ctx.log.publishes || ctx.b.dataOnDisk === true);
  const packs = ctx.b.packs.origin?.() ?? ctx.b.packs; // (what the bucket holds, not this server's copies)
  const report = await verifyStore(ctx.st, ctx.reader.over(packs), packs, onProgress, ctx.readonly ? undefined : markDamaged(ctx), readData);
  const logStore = readOnce(ctx.b.log);
  const log = await verifyLog(ctx.st, logStore);
  report.logCommitsChecked = log.commitsChecked;
  report.damagedLog = log.damaged;
  if (log.damaged.length) report.ok = false;
  const catalog = await verifyCatalog(ctx.db, ctx.st, logStore, ctx.b.scratchDb);
  report.catalogChecked = catalog.checked;
  report.catalogRowsChecked = catalog.rowsChecked;
  report.damagedCatalog = catalog.damaged;
  if (catalog.damaged.length) report.ok = false;
  // An encrypted store's key files: one that cannot be read was "ok" to verify (a trial).
  report.damagedKeys = (await ctx.b.damagedKeys?.()) ?? [];
  if (report.damagedKeys.length) report.ok = false;
  const indexProblems = ctx.search.check(true);
  if (indexProblems.length) {
    report.ok = false;
    const remade = ctx.search.remake !== undefined;
    if (remade) await remakeIndex(ctx);
    report.damagedSearchIndex = indexProblems.map((message) => ({ message, remade }));
  }
  return report;
}

/**
 * On object storage, the log with each commit object read once: log-verify reads the whole
 * log, and the catalog's replay reads its end again — up to 5,000 GETs more (decision 0073).
 * Objects there never change once made; a local log's newest segment grows (a writer appends
 * while verify runs), so a local log is read as it is.
 */
function readOnce(log: LogStore): LogStore {
  if (!publishes(log)) return log;
  const read = new Map<string, Promise<Uint8Array>>();
  const readSegment = (name: string): Promise<Uint8Array> => {
    let bytes = read.get(name);
    if (!bytes) {
      read.set(name, (bytes = log.readSegment(name)));
      bytes.catch(() => read.delete(name)); // (a failed read is not kept: a later one tries again)
    }
    return bytes;
  };
  return new Proxy(log, {
    get(target, key) {
      if (key === 'readSegment') return readSegment;
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

