/**
 * The `core` suite: @kura/core's byte kernels against their npm peers, all in one process
 * and one run, so every ratio compares figures taken on the same machine under the same load.
 * Families: sha256, blake3, hash-stream, fastcdc, zstd, ingest (one module each under ./core/).
 */
import { KiB, MiB } from '../lib/data.mjs';
import { find, fmt, target } from '../lib/report.mjs';
import { JS_CHUNKERS, runCdc, selfCheck } from './core/cdc.mjs';
import { NPM_BLAKE3, runHashes, runStreaming } from './core/hash.mjs';
import { SHA_ALONE, runIngest } from './core/ingest.mjs';
import { TARGET_LEVEL, runZstd } from './core/zstd.mjs';

const SIZES = {
  quick: { hash: [KiB, 4 * KiB, 32 * KiB, 64 * KiB, MiB, 10 * MiB], stream: [10 * MiB], zstd: [KiB, 10 * KiB, 100 * KiB, MiB] },
  full: {
    hash: [KiB, 4 * KiB, 16 * KiB, 32 * KiB, 64 * KiB, 256 * KiB, MiB, 10 * MiB],
    stream: [MiB, 10 * MiB],
    zstd: [KiB, 4 * KiB, 10 * KiB, 64 * KiB, 100 * KiB, 256 * KiB, MiB, 10 * MiB],
  },
};
const CDC_SIZES = [MiB, 10 * MiB];
const INGEST_SIZE = 10 * MiB;

const log = (msg) => process.stderr.write(`[core] ${msg}\n`);

export async function run({ full = false } = {}) {
  const sizes = full ? SIZES.full : SIZES.quick;
  const t0 = performance.now();
  const step = async (name, fn) => {
    log(`${name}…`);
    const rows = await fn();
    log(`${name} done (${((performance.now() - t0) / 1000).toFixed(0)} s elapsed)`);
    return rows;
  };
  log(selfCheck()); // before anything is measured: a wrong chunker fails the run here
  return [
    ...(await step('sha256 + blake3', () => runHashes(sizes.hash))),
    ...(await step('streaming hashes', () => runStreaming(sizes.stream))),
    ...(await step('fastcdc', () => runCdc(CDC_SIZES, { full }))),
    ...(await step('zstd', () => runZstd(sizes.zstd, { quick: !full }))),
    ...(await step('ingest', () => runIngest(INGEST_SIZE))),
  ];
}

const chunkCols = [
  { header: 'chunks/s', value: (r) => r.chunksPerSec && fmt.ops(r.chunksPerSec) },
  { header: 'chunks', value: (r) => r.chunks },
];

/** How run.mjs prints each family (see lib/report.mjs familyTable). */
export const families = {
  sha256: { title: 'SHA-256 (random data; node:crypto is native SHA-NI, not wasm)' },
  blake3: { title: 'BLAKE3 (random data)' },
  'hash-stream': { title: 'streaming: the same bytes fed in 64 KiB pieces to each incremental hasher (kura one-shot: one call, for the cost of streaming)' },
  fastcdc: { title: 'FastCDC 2020, avg 16 KiB (rabin-wasm: Rabin, other cut points, speed only)', extra: chunkCols },
  zstd: {
    title: `zstd (gzip-6 / brotli-4 at L${TARGET_LEVEL} only; ratio = raw / compressed)`,
    extra: [{ header: 'comp. ratio', value: (r) => r.ratio && r.ratio.toFixed(2) }],
  },
  ingest: {
    title: 'fused ingest, 10 MiB, avg 16 KiB (x sha256 = this row MB/s / wasm SHA-256 alone)',
    ratioHeader: 'x sha256',
    ratio: (r, all) => {
      if (r.impl === SHA_ALONE) return undefined;
      const base = find(all, { group: r.group, impl: SHA_ALONE });
      return base ? r.mbPerSec / base.mbPerSec : undefined;
    },
    extra: [{ header: 'chunks', value: (r) => r.chunks }],
  },
};

/** The best (highest MB/s) measured row among `impls`; undefined when none was measured. */
function best(rows, where, impls) {
  return impls.map((impl) => find(rows, { ...where, impl })).filter(Boolean).sort((a, b) => b.mbPerSec - a.mbPerSec)[0];
}

/** Kura's MB/s over a peer's, with the "from" column text. */
function versus(label, goal, kura, peer) {
  const detail = kura && peer ? `kura ${fmt.mbps(kura.mbPerSec)} / ${peer.impl} ${fmt.mbps(peer.mbPerSec)} MB/s` : '';
  const value = kura && peer ? kura.mbPerSec / peer.mbPerSec : undefined;
  return target(label, value, goal, { detail, missing: kura ? 'peer not measured' : 'kura not measured' });
}

export function targets(rows) {
  const out = [];
  for (const [size, label] of [[64 * KiB, '64 KiB'], [10 * MiB, '10 MiB']]) {
    const w = { family: 'sha256', size };
    out.push(versus(`SHA-256 wasm >= 1.5x hash-wasm @ ${label}`, 1.5,
      find(rows, { ...w, impl: 'kura' }), best(rows, w, ['hash-wasm', 'hash-wasm sha256()'])));
  }
  for (const [size, label] of [[64 * KiB, '64 KiB'], [10 * MiB, '10 MiB']]) {
    const w = { family: 'blake3', size };
    out.push(versus(`BLAKE3 >= 1.1x best npm BLAKE3 @ ${label}`, 1.1, find(rows, { ...w, impl: 'kura' }), best(rows, w, NPM_BLAKE3)));
  }
  const cdc = { family: 'fastcdc', group: 'random avg 16K', size: 10 * MiB };
  const kuraCdc = find(rows, { ...cdc, impl: 'kura' });
  out.push(target('FastCDC >= 1000 MB/s, random, avg 16 KiB @ 10 MiB', kuraCdc?.mbPerSec, 1000,
    { unit: 'MB/s', detail: kuraCdc ? `${fmt.ops(kuraCdc.chunksPerSec)} chunks/s` : '' }));
  out.push(versus('FastCDC >= 3x best JS/npm chunker @ 10 MiB', 3, kuraCdc, best(rows, cdc, JS_CHUNKERS)));
  for (const op of ['compress', 'decompress']) {
    for (const [size, label] of [[100 * KiB, '100 KiB'], [MiB, '1 MiB']]) {
      const w = { family: 'zstd', group: `L${TARGET_LEVEL} text ${op}`, size };
      out.push(versus(`zstd L3 text ${op} >= 1.2x zstd-wasm @ ${label}`, 1.2,
        find(rows, { ...w, impl: 'kura' }), find(rows, { ...w, impl: 'zstd-wasm' })));
    }
  }
  const ing = { family: 'ingest', group: 'random avg 16K' };
  const fused = find(rows, { ...ing, impl: 'raw+wasm-sha' });
  const alone = find(rows, { ...ing, impl: SHA_ALONE });
  out.push(target('fused ingest (raw, wasm SHA-256) >= 0.6x wasm SHA-256 alone @ 10 MiB',
    fused && alone ? fused.mbPerSec / alone.mbPerSec : undefined, 0.6,
    { detail: fused && alone ? `ingest ${fmt.mbps(fused.mbPerSec)} / sha256 ${fmt.mbps(alone.mbPerSec)} MB/s, random` : '' }));
  const native = find(rows, { ...ing, impl: 'raw+node-sha' });
  out.push(target('fused ingest (raw, node:crypto digest) >= 300 MB/s @ 10 MiB', native?.mbPerSec, 300,
    { unit: 'MB/s', detail: 'random' }));
  return out;
}
