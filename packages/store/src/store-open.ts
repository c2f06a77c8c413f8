/**
 * Creating a store in empty backends and opening one (FORMAT.md §5, §15): the schema, the
 * configuration, the catalog brought up to the log's head, and the parts of a StoreContext.
 */
import { InvalidInputError, resolveChunkParams } from '@kura/core';
import { CommitLog } from './catalog/commit-log.js';
import { inlineIndex, type SearchIndex } from './search/index-writer.js';
import { checkConfigObject, createCatalog, prepareCatalog, readConfigObject } from './catalog/open.js';
import { FormatMismatchError } from './errors.js';
import { randomHex } from './hex.js';
import { InitOptions, OpenOptions, parse } from './options.js';
import { SCHEMA_VERSION, migrate, schemaVersion } from './catalog/schema.js';
import { prepareStatements } from './catalog/statements.js';
import type { ContextOptions } from './store-context.js';
import { FORMAT_NAME, PLAIN_FORMAT_VERSION, readConfig, type StoreBackends, type StoreConfig } from './store-types.js';
import { ENCRYPTED_FORMAT_VERSION } from './encryption/config.js';
import { ENCRYPTION_SCHEME } from './encryption/sealing.js';

/** Writes a new store's schema, configuration and first checkpoint; open it with `openParts`. */
export async function createStore(b: StoreBackends, options: InitOptions): Promise<{ durability: InitOptions['durability'] }> {
  const o = parse(InitOptions, options, 'init options');
  // An encrypted store's seed is random and secret (FORMAT.md §17.3): record lengths must not
  // fingerprint known files.
  if (b.sealing && options.chunking?.seed !== undefined && options.chunking.seed !== 'random') {
    throw new InvalidInputError("an encrypted store's chunking seed is drawn at random and kept secret: give none", 'chunking.seed');
  }
  const seed = o.chunking.seed === 'random' || b.sealing ? BigInt(`0x${randomHex(8)}`) : BigInt(o.chunking.seed);
  const chunking = resolveChunkParams({ avg: o.chunking.avg, seed });
  if (schemaVersion(b.db) !== 0) throw new InvalidInputError('a store already exists here', 'dir');
  migrate(b.db);
  const config = new Map([
    ['format', FORMAT_NAME],
    ['format_version', String(b.sealing ? ENCRYPTED_FORMAT_VERSION : PLAIN_FORMAT_VERSION)],
    ['store_id', b.sealing?.storeId ?? randomHex(16)],
    ['created_at', new Date().toISOString()],
    ['chunk_avg', String(chunking.avg)],
    ['chunk_seed', String(chunking.seed)],
    ['compression_level', o.compression === false ? 'none' : String(o.compression)],
    ['durability', o.durability],
    ...(b.sealing ? ([['encryption', ENCRYPTION_SCHEME]] as const) : []),
  ]);
  await createCatalog(b.db, prepareStatements(b.db), b.log, config);
  return { durability: o.durability };
}

/**
 * Opens the store in `b`: migrates its schema (a writer), brings the database up to the log's
 * head (made from the log when missing), checks the options against the configuration and
 * opens the log. Answers what a StoreContext is made of.
 */
export async function openParts(b: StoreBackends, options: OpenOptions): Promise<{ config: StoreConfig; opts: ContextOptions }> {
  const o = parse(OpenOptions, options, 'open options');
  if (!o.readonly) migrate(b.db);
  else if (schemaVersion(b.db) > SCHEMA_VERSION) migrate(b.db); // throws FORMAT_MISMATCH
  const st = prepareStatements(b.db);
  // Packs that commits carry are read from their log objects, where their rows say (decision 0044).
  b.packs.locateWith?.((name) => {
    const row = st.packByName.get(name);
    return row?.log_seq != null ? { seq: row.log_seq, offset: row.log_offset ?? 0 } : undefined;
  });
  // The database is the log's replay: made when missing, brought up to the log's head.
  if (!o.readonly) await prepareCatalog(b.db, st, b.log);
  else {
    // A reader checks the configuration too (a writer's prepareCatalog does).
    const object = await readConfigObject(b.log);
    if (object) checkConfigObject(object, new Map(st.configAll.all().map((r) => [r.key, r.value])));
  }
  const config = readConfig(b.db);
  if (o.chunking?.avg !== undefined && o.chunking.avg !== config.chunking.avg) {
    throw new FormatMismatchError(
      `this store chunks with avg ${config.chunking.avg}, not ${o.chunking.avg}; chunking is fixed when a store is created`,
      String(o.chunking.avg),
      String(config.chunking.avg),
    );
  }
  if (o.chunking?.seed !== undefined && o.chunking.seed !== 'random' && BigInt(o.chunking.seed) !== config.chunking.seed) {
    throw new FormatMismatchError('this store was created with another chunking seed', String(o.chunking.seed), String(config.chunking.seed));
  }
  const durability = o.durability ?? config.durability;
  b.setDurability?.(durability);
  const log = o.readonly ? CommitLog.reader(b.db, st, b.log) : await CommitLog.open(b.db, st, b.log, b.writer?.id, o.logRetentionMs);
  // (Reads went on beside it; a store whose backends may not be written is refused here, its
  // log closed: it polls once open.)
  try {
    await b.ready;
  } catch (e) {
    await log.close().catch(() => undefined);
    throw e;
  }
  let search: SearchIndex;
  try {
    search = b.searchIndex ? b.searchIndex(o.readonly) : inlineIndex(b.db, !o.readonly);
  } catch (e) {
    await log.close().catch(() => undefined);
    throw e;
  }
  return {
    config,
    opts: { readonly: o.readonly, durability, compression: o.compression ?? config.compression, packSize: o.packSize, gcMarginMs: o.gcMarginMs, logRetentionMs: o.logRetentionMs, log, st, search },
  };
}
