/**
 * The store's size on disk against restic's repository of the same trees, in the same run
 * (issue 22: "an index that does not double the store"): the five `typescript` releases the
 * dedup suite uses, added the way `kura add` adds them (a path per file, media types from
 * names), indexed, their prose embedded when the model is installed; then every file of the
 * store directory counted — packs, log, checkpoints, database (search index and vectors).
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Store, detectMediaType } from '@kura/store';
import { RELEASES, filesOf, release, resticBackup } from '../dedup.mjs';

const MiB = 1024 * 1024;

/** Bytes of each part of the store directory at `dir`. */
function parts(dir) {
  const out = { database: 0, packs: 0, log: 0, other: 0 };
  for (const f of filesOf(dir)) {
    const top = f.slice(dir.length + 1).split('/')[0];
    out[top.startsWith('kura.db') ? 'database' : top === 'packs' ? 'packs' : top === 'log' ? 'log' : 'other'] += statSync(f).size;
  }
  return out;
}

export async function footprint(root, model, log) {
  let dirs;
  try {
    dirs = RELEASES.map(release);
  } catch (e) {
    return [{ family: 'footprint', group: 'typescript releases', impl: 'kura', size: 0, unavailable: `could not fetch the corpus with npm pack: ${e.message.split('\n')[0]}` }];
  }
  const dir = join(root, 'footprint');
  mkdirSync(dir);
  const storeDir = join(dir, 'kura');
  const store = await Store.init(storeDir);
  let input = 0;
  let embedded;
  try {
    if (model) store.useEmbedder(model);
    for (const [i, d] of dirs.entries()) {
      const puts = filesOf(d).map((path) => {
        const rel = path.slice(d.length + 1);
        const mediaType = detectMediaType(rel);
        return { path, meta: { path: `${RELEASES[i]}/${rel}`, ...(mediaType ? { mediaType } : {}) } };
      });
      for await (const o of store.putFiles(puts)) {
        if (o.error) throw o.error;
        input += o.result.size;
      }
    }
    embedded = (await store.indexStatus({ wait: true })).embedding;
  } finally {
    await store.close();
  }
  const kura = parts(storeDir);
  const stored = kura.database + kura.packs + kura.log + kura.other;
  log(`footprint: kura ${(stored / MiB).toFixed(1)} MiB (database ${(kura.database / MiB).toFixed(1)}, packs ${(kura.packs / MiB).toFixed(1)}, log ${(kura.log / MiB).toFixed(1)}); embedded ${embedded ? `${embedded.documents} documents in ${embedded.chunks} chunks` : 'nothing (no model)'}`);
  const group = `typescript ${RELEASES[0]}..${RELEASES.at(-1)} (${RELEASES.length} releases, ${(input / MiB).toFixed(0)} MiB)`;
  const rows = [{ family: 'footprint', group, impl: 'kura store directory', name: `${group} kura`, size: input, bytes: input, stored, ...kura, chunks: embedded?.chunks ?? 0 }];
  const restic = resticBackup(dir, dirs);
  if (restic.unavailable) rows.push({ family: 'footprint', group, impl: 'restic repository', size: input, unavailable: restic.unavailable });
  else {
    log(`footprint: restic ${(restic.stored / MiB).toFixed(1)} MiB`);
    rows.push({ family: 'footprint', group, impl: 'restic repository', name: `${group} restic`, size: input, bytes: input, stored: restic.stored, version: restic.version });
  }
  return rows;
}

export const footprintFamily = {
  title: 'bytes on disk for the same trees: the whole Kura store directory (packs, log, database with its search index and vectors) against a restic repository, same run',
  ratio: () => undefined,
  extra: [
    { header: 'stored', value: (r) => r.stored && `${(r.stored / MiB).toFixed(1)} MiB` },
    { header: 'database', value: (r) => (r.database === undefined ? '' : `${(r.database / MiB).toFixed(1)} MiB`) },
    { header: 'packs', value: (r) => (r.packs === undefined ? '' : `${(r.packs / MiB).toFixed(1)} MiB`) },
    { header: 'chunks embedded', value: (r) => r.chunks },
  ],
};
