/**
 * The `meta` suite: @kura/store's metadata layer (SQLite rows, no chunk bytes) over 4,000
 * documents (10,000 with --full) — key/value updates one by one and batched, tag changes, lookups, and listing with
 * filters and cursor pagination — with cacache's index (the JavaScript content-addressable store
 * people use; an index of JSON lines in hashed bucket files) measured in the same run wherever it
 * has the same operation. Durability 'normal' for Kura (WAL, survives kill -9); cacache's index
 * appends without fsync.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import cacache from 'cacache';
import { Store } from '@kura/store';
import { KiB } from '../lib/data.mjs';
import { closedLoop, interleavedLoops } from '../lib/loop.mjs';
import { documents } from '../lib/documents.mjs';
import { find, fmt, target } from '../lib/report.mjs';

const log = (msg) => process.stderr.write(`[meta] ${msg}\n`);
let DOCS = 10_000; // --full; quick: 4,000 (set by run)
const TAGS = 10; // document i carries tag `t${i % TAGS}`
const DIRS = 100; // and path `dir-${i % DIRS}/doc-${i}`
const BATCH = 500;
/**
 * Updates run before a single-update figure is timed, by Kura and SQLite alike. V8 optimizes
 * Kura's update path only after a few thousand calls: with closedLoop's 50, the quick run's
 * 3,000 timed updates measured mostly code not yet optimized (7.9k / 11.0k ops/s against 12.4k /
 * 22.9k warmed, alternated on 2026-11-27) — a server runs warm.
 */
const WARM_UPDATES = 3_000;

/** Both stores filled with the same DOCS documents, each with a path, a tag and one key. */
async function fill(root) {
  const store = await Store.init(join(root, 'kura'));
  const cache = join(root, 'cacache');
  const docs = documents(DOCS, KiB, 21);
  const digests = new Array(DOCS);
  const integrity = new Array(DOCS);
  await closedLoop({ family: 'setup', group: 'fill', impl: 'both' }, {
    op: async (i) => {
      if (i < 0) return;
      const meta = { path: `dir-${i % DIRS}/doc-${i}`, tags: [`t${i % TAGS}`], meta: { n: String(i) } };
      digests[i] = (await store.put(docs[i], meta)).digest;
      integrity[i] = await cacache.put(cache, `k${i}`, docs[i], { metadata: { path: meta.path, tags: meta.tags, n: String(i) } });
    },
    count: DOCS,
    concurrency: 32,
    warmup: 0,
  });
  return { store, cache, digests, integrity };
}

/** Ops per Kura figure and per cacache figure (cacache's are ~10x slower each). */
const counts = (full) => (full ? { kura: 50_000, cacache: 20_000, pages: 3_000, all: 40, ls: 10 } : { kura: 3_000, cacache: 400, pages: 150, all: 4, ls: 1 });

/**
 * A Kura write figure, then (untimed) the full-text index brought up to date: every update
 * queues its document for re-indexing, which runs once writes pause. Without the catch-up the
 * backlog would run inside the next figure. Its time is reported with the figure (`index ms`).
 */
async function kuraWrites(store, meta, loop) {
  const row = await closedLoop(meta, loop);
  return { ...row, indexMs: await catchUp(store) };
}

/** The index catch-up after a write figure (untimed): its ms. */
async function catchUp(store) {
  const t = performance.now();
  await store.search('drain'); // a search waits for the index to see every committed change
  return performance.now() - t;
}

/**
 * What SQLite alone does on this machine, in the same run: one key/value row upserted per
 * transaction, and BATCH rows per transaction, into a table shaped like Kura's `meta`, with the
 * store's settings (WAL, synchronous NORMAL), through better-sqlite3 with no store around it.
 * Each Kura update also stamps the document and queues it for re-indexing (three rows, not
 * one): this is the ceiling any per-update transaction can reach here, not a like-for-like peer.
 * Its figures are measured in turns with Kura's (interleavedLoops), so that both see the
 * machine at the same speed.
 */
function sqliteFloor(root) {
  const db = new Database(join(root, 'floor.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE meta (doc_id INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (doc_id, key)) STRICT, WITHOUT ROWID');
  const upsert = db.prepare('INSERT INTO meta (doc_id, key, value) VALUES (?, ?, ?) ON CONFLICT (doc_id, key) DO UPDATE SET value = excluded.value');
  db.transaction(() => {
    for (let i = 0; i < DOCS; i++) upsert.run(i, 'n', String(i));
  }).immediate();
  const pick = (i) => Math.abs(i * 7919) % DOCS; // as the Kura figures
  const one = db.transaction((i) => upsert.run(pick(i), 'k', String(i)));
  const many = db.transaction((r) => {
    for (let i = 0; i < BATCH; i++) upsert.run(pick(r * BATCH + i), 'b', String(r * BATCH + i));
  });
  return { single: (i) => one.immediate(i), batch: (r) => many.immediate(r), close: () => db.close() };
}

/** Blocks per interleaved figure: enough turns that a slow moment falls on both sides alike. */
const ROUNDS = 6;

async function updateFigures({ store, cache, digests, integrity, root }, full) {
  const rows = [];
  const { kura: n, cacache: nc } = counts(full);
  const pick = (i) => Math.abs(i * 7919) % DOCS; // spread over the whole table, not one hot row
  const floor = sqliteFloor(root);
  try {
    const [single, floorSingle] = await interleavedLoops([
      { meta: { family: 'meta-update', group: 'single key/value update', impl: 'kura', size: 0 },
        loop: { op: (i) => store.setMeta(digests[pick(i)], { k: String(i) }), count: n, warmup: WARM_UPDATES } },
      { meta: { family: 'meta-update', group: 'single key/value update', impl: 'SQLite alone', size: 0 },
        loop: { op: floor.single, count: n, warmup: WARM_UPDATES } },
    ], ROUNDS);
    rows.push({ ...single, indexMs: await catchUp(store) }, floorSingle);
    // cacache replaces a key's whole entry: setting one key is read, merge, insert (with the
    // size, so `get.info` still has it) — what a user must do for what setMeta does.
    rows.push(await closedLoop(
      { family: 'meta-update', group: 'single key/value update', impl: 'cacache', size: 0 },
      {
        op: async (i) => {
          const key = `k${pick(i)}`;
          const info = await cacache.get.info(cache, key);
          await cacache.index.insert(cache, key, integrity[pick(i)], { size: info.size, metadata: { ...info.metadata, k: String(i) } });
        },
        count: nc,
      },
    ));
    const batches = full ? 200 : 60;
    const [batch, floorBatch] = await interleavedLoops([
      { meta: { family: 'meta-update', group: `${BATCH}-update batch`, impl: 'kura', size: 0 },
        loop: {
          op: (r) => store.updateMeta(Array.from({ length: BATCH }, (_, i) => ({ digest: digests[pick(r * BATCH + i)], meta: { b: String(r * BATCH + i) } }))),
          count: batches,
          warmup: 5,
        } },
      { meta: { family: 'meta-update', group: `${BATCH}-update batch`, impl: 'SQLite alone', size: 0 },
        loop: { op: floor.batch, count: batches, warmup: 5 } },
    ], ROUNDS);
    rows.push({ ...batch, updatesPerSec: batch.opsPerSec * BATCH, indexMs: await catchUp(store) }, { ...floorBatch, updatesPerSec: floorBatch.opsPerSec * BATCH });
  } finally {
    floor.close();
  }
  rows.push(await kuraWrites(store,
    { family: 'meta-update', group: 'tag add or remove', impl: 'kura', size: 0 },
    { op: (i) => (i & 1 ? store.removeTags(digests[pick(i >> 1)], ['hot']) : store.addTags(digests[pick(i >> 1)], ['hot'])), count: n, warmup: WARM_UPDATES },
  ));
  log('updates done');
  return rows;
}

async function lookupFigures({ store, cache, digests, integrity }, full) {
  const rows = [];
  const { kura: n, cacache: nc } = counts(full);
  const pick = (i) => Math.abs(i * 104_729) % DOCS;
  rows.push(await closedLoop({ family: 'meta-lookup', group: 'stat (size, path, tags, metadata)', impl: 'kura', size: 0 },
    { op: (i) => store.stat(digests[pick(i)]), count: n }));
  rows.push(await closedLoop({ family: 'meta-lookup', group: 'stat (size, path, tags, metadata)', impl: 'cacache', size: 0 },
    { op: (i) => cacache.get.info(cache, `k${pick(i)}`), count: nc }));
  rows.push(await closedLoop({ family: 'meta-lookup', group: 'has', impl: 'kura', size: 0 },
    { op: (i) => store.has(digests[pick(i)]), count: n }));
  rows.push(await closedLoop({ family: 'meta-lookup', group: 'has', impl: 'cacache', size: 0 },
    { op: (i) => cacache.get.hasContent(cache, integrity[pick(i)]), count: nc }));
  log('lookups done');
  return rows;
}

async function listFigures({ store, cache }, full) {
  const rows = [];
  const { pages, all: allRuns, ls } = counts(full);
  rows.push(await closedLoop({ family: 'meta-list', group: 'list, one page of 100', impl: 'kura', size: 0 },
    { op: () => store.list({ limit: 100 }), count: pages }));
  rows.push(await closedLoop({ family: 'meta-list', group: 'list by tag, one page of 100', impl: 'kura', size: 0 },
    { op: (i) => store.list({ tag: `t${Math.abs(i) % TAGS}`, limit: 100 }), count: pages }));
  rows.push(await closedLoop({ family: 'meta-list', group: 'list by path prefix (100 documents)', impl: 'kura', size: 0 },
    { op: (i) => store.list({ pathPrefix: `dir-${Math.abs(i) % DIRS}/`, limit: 100 }), count: pages }));
  // The whole index: Kura pages through it by cursor; cacache has only "read every bucket".
  const all = async () => {
    let seen = 0;
    let cursor;
    do {
      const page = await store.list({ limit: 1000, cursor });
      seen += page.items.length;
      cursor = page.nextCursor;
    } while (cursor);
    if (seen !== DOCS) throw new Error(`listed ${seen} of ${DOCS} documents`);
  };
  rows.push(await closedLoop({ family: 'meta-list', group: `list all ${DOCS.toLocaleString('en-US')}`, impl: 'kura', size: 0 },
    { op: all, count: allRuns, warmup: 2 }));
  rows.push(await closedLoop({ family: 'meta-list', group: `list all ${DOCS.toLocaleString('en-US')}`, impl: 'cacache', size: 0 },
    {
      op: async () => {
        const entries = await cacache.ls(cache);
        if (Object.keys(entries).length !== DOCS) throw new Error('cacache listed a different number of entries');
      },
      count: ls,
      warmup: 1,
    }));
  log('lists done');
  return rows;
}

export async function run({ full = false } = {}) {
  DOCS = full ? 10_000 : 4_000;
  const root = mkdtempSync(join(tmpdir(), 'kura-bench-meta-'));
  let filled;
  try {
    const t = performance.now();
    filled = await fill(root);
    // A search waits for the full-text index to see every committed change: the fill's
    // backlog is indexed before anything is timed.
    await filled.store.search('drain');
    log(`${DOCS} documents in both stores, index up to date (${((performance.now() - t) / 1000).toFixed(0)} s)`);
    return [
      ...(await updateFigures({ ...filled, root }, full)),
      ...(await lookupFigures(filled, full)),
      ...(await listFigures(filled, full)),
    ];
  } finally {
    await filled?.store.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const perSecond = { header: 'updates/s', value: (r) => r.updatesPerSec && fmt.ops(r.updatesPerSec) };
const indexCatchUp = { header: 'index catch-up', value: (r) => r.indexMs !== undefined && fmt.time(r.indexMs) };
export const families = {
  'meta-update': {
    title: `metadata updates over 4,000 documents (10,000 with --full; batch: one updateMeta call; kura/peer = ops ratio; index catch-up: untimed re-indexing of the updated documents afterwards)`,
    extra: [perSecond, indexCatchUp],
  },
  'meta-lookup': { title: 'lookups by digest (cacache: by key, or by integrity for has)' },
  'meta-list': { title: `listing over 4,000 documents (10,000 with --full; ${TAGS} tags, ${DIRS} directories)` },
};

export function targets(rows) {
  const single = find(rows, { family: 'meta-update', group: 'single key/value update', impl: 'kura' });
  const batch = find(rows, { family: 'meta-update', group: `${BATCH}-update batch`, impl: 'kura' });
  const floor = find(rows, { family: 'meta-update', group: 'single key/value update', impl: 'SQLite alone' });
  const floorBatch = find(rows, { family: 'meta-update', group: `${BATCH}-update batch`, impl: 'SQLite alone' });
  // The ceiling on this machine, measured in the same run: SQLite upserting one row per update.
  const ceiling = (r, perSec, unit) => (r ? `SQLite alone: ${fmt.ops(perSec(r))} ${unit} (one row per update)` : '');
  return [
    target('single metadata update >= 50,000 ops/s', single?.opsPerSec, 50_000, { unit: 'ops/s', detail: ceiling(floor, (r) => r.opsPerSec, 'ops/s') }),
    target('batched metadata updates >= 500,000 updates/s', batch?.updatesPerSec, 500_000, {
      unit: 'updates/s',
      detail: ceiling(floorBatch, (r) => r.updatesPerSec, 'updates/s'),
    }),
  ];
}
