/**
 * Puts and snapshots while background embedding runs (issue 22: "puts and snapshots within noise
 * of the build without this work"): two stores with the same backlog of prose documents, one
 * with the model in use (its embedding job working through the backlog), one without — the
 * build's behaviour before semantic search — measured alternately, twice each, in one run:
 * 1 KiB puts at 32 in flight, and a snapshot of a new tree of 6,000 files of 4 KiB. The job yields to writes (decision 0036): the log says
 * how much it embedded meanwhile.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Store } from '@kura/store';
import { randomBytes, textLike } from '../../lib/data.mjs';
import { closedLoop } from '../../lib/loop.mjs';

const BACKLOG = 400; // prose documents of ~2 KiB: ~800 chunks, longer than the measurements take
const ROUNDS = 4;
const FILES = 6000; // about a second's snapshot: shorter ones are all noise here

async function backlogged(dir, model) {
  const store = await Store.init(dir);
  const text = textLike(BACKLOG * 2048, 11, 2048);
  for (let i = 0; i < BACKLOG; i++) await store.put(text.subarray(i * 2048, (i + 1) * 2048), { path: `notes/${i}.txt`, mediaType: 'text/plain' });
  if (model) store.useEmbedder(model);
  return store;
}

/** Waits until the embedding job is at work (documents done, more pending). */
async function embedding(store) {
  for (;;) {
    const e = (await store.indexStatus()).embedding;
    if (!e || (e.documents > 0 && e.pending > 0)) return e;
    if (e.pending === 0) throw new Error('the backlog ran out before the measurement: make BACKLOG larger');
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function besideEmbedding(root, model, full, log) {
  // A tree per round, new to both stores when its round snapshots it.
  const trees = Array.from({ length: ROUNDS }, (_, round) => {
    const tree = join(root, `beside-tree-${round}`);
    for (let i = 0; i < FILES; i++) {
      mkdirSync(join(tree, `d${i % 50}`), { recursive: true });
      writeFileSync(join(tree, `d${i % 50}`, `f${i}.bin`), randomBytes(4096, 1_000_000 * (round + 1) + i));
    }
    return tree;
  });
  const stores = { without: await backlogged(join(root, 'beside-without'), undefined), with: await backlogged(join(root, 'beside-with'), model) };
  const rows = [];
  let seq = 0;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Each goes first in one round and second in the other: what one run leaves behind (a
      // checkpoint, a GC pass) falls on both alike.
      for (const which of round % 2 === 0 ? ['without', 'with'] : ['with', 'without']) {
        const store = stores[which];
        const impl = which === 'with' ? 'embedding in the background' : 'no embedder';
        const e = which === 'with' ? await embedding(store) : undefined;
        const count = full ? 60_000 : 20_000; // about a second at ~20k puts/s: shorter runs are all noise here
        const base = seq;
        seq += count + 50;
        rows.push({
          ...(await closedLoop({ family: 'beside', group: '1 KiB puts, 32 in flight', impl, size: 1024, round }, { op: (i) => store.put(randomBytes(1024, 5_000_000 + base + i + 50), { path: `p/${base + i + 50}.bin` }), count, concurrency: 32, bytesPerOp: 1024 })),
          embeddedBefore: e?.documents,
        });
        const started = performance.now();
        await store.snapshot(trees[round]);
        const ms = performance.now() - started;
        rows.push({ family: 'beside', group: `snapshot of ${FILES} new files of 4 KiB (round ${round + 1})`, impl, name: `snapshot ${impl}`, size: 0, opsPerSec: 1000 / ms, mean: ms, p50: ms, round });
        log(`beside embedding, round ${round + 1}, ${impl}: ${rows.at(-2).opsPerSec.toFixed(0)} puts/s, snapshot ${ms.toFixed(0)} ms${e ? ` (embedded ${e.documents}, ${e.pending} pending)` : ''}`);
      }
    }
    const after = (await stores.with.indexStatus()).embedding;
    log(`beside embedding: after the rounds ${after.documents} embedded, ${after.pending} pending`);
  } finally {
    await stores.without.close();
    await stores.with.close();
  }
  return rows;
}

export const besideFamily = {
  title: 'puts and snapshots beside background embedding: the same store with the model embedding a backlog, and without an embedder, alternated in one run',
  ratio: () => undefined,
  extra: [{ header: 'embedded before', value: (r) => r.embeddedBefore ?? '' }],
};
