/**
 * zstd levels 1, 3 and 9, compress and decompress, on zeros, text-like, binary records and
 * random data (the best case, the common cases, and the worst case): Kura's wasm
 * against @bokuweb/zstd-wasm (the zstd an npm user finds) and zstd-napi (native C zstd in an
 * addon: the ceiling, as node:crypto is for SHA-256), and at level 3 also node:zlib's
 * gzip (level 6, its default) and brotli (quality 4), which a user would otherwise pick.
 * Every peer must round-trip its own frame before it is timed; ratio = raw / compressed.
 */
import zlib from 'node:zlib';
import { compress, decompress } from '@kura/core';
import { binaryLike, randomBytes, sizeLabel, textLike, zeros } from '../../lib/data.mjs';
import { measure, unavailable } from '../../lib/measure.mjs';
import { loadPeer } from './peers.mjs';

export const LEVELS = [1, 3, 9];
/** Level whose groups also carry gzip and brotli, and that the targets read. */
export const TARGET_LEVEL = 3;

const BROTLI = (size) => ({
  params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: size },
});

/** Codecs as { impl, levels, compress(d, level), decompress(frame, rawLength) }. */
async function codecs() {
  const kura = { impl: 'kura', levels: LEVELS, compress, decompress };
  const peers = await Promise.all([
    loadPeer('zstd-wasm', async () => {
      const z = await import('@bokuweb/zstd-wasm');
      await z.init();
      return { levels: LEVELS, compress: (d, l) => z.compress(d, l), decompress: (f) => z.decompress(f) };
    }),
    // Native zstd (the C library in a Node addon, built from its bundled sources at install;
    // an optional dependency, so a machine where it does not build reports it unavailable).
    loadPeer('zstd-napi', async () => {
      const z = (await import('zstd-napi')).default;
      return {
        levels: LEVELS,
        compress: (d, l) => z.compress(d, { compressionLevel: l }),
        decompress: (f) => z.decompress(f),
      };
    }),
    loadPeer('gzip-6', () => ({
      levels: [TARGET_LEVEL],
      compress: (d) => zlib.gzipSync(d, { level: 6 }),
      decompress: (f) => zlib.gunzipSync(f),
    })),
    loadPeer('brotli-4', () => ({
      levels: [TARGET_LEVEL],
      compress: (d) => zlib.brotliCompressSync(d, BROTLI(d.length)),
      decompress: (f) => zlib.brotliDecompressSync(f),
    })),
  ]);
  return [kura, ...peers.map((p) => (p.error ? p : { impl: p.impl, ...p.fn }))];
}

/** Same bytes back? Checked once per codec, level and input before timing. */
function roundTrips(codec, data, level) {
  const frame = codec.compress(data, level);
  const back = codec.decompress(frame, data.length);
  if (back.length !== data.length || !Buffer.from(back).equals(Buffer.from(data))) {
    throw new Error(`${codec.impl} level ${level} does not round-trip ${data.length} bytes`);
  }
  return frame;
}

/**
 * `quick`: 352 figures (3 levels x 4 patterns x 4 sizes x codecs x 2 ops) at 35% of the time
 * budget each, which keeps `pnpm bench` near its 3 minutes; --full gives each the whole budget.
 */
export async function runZstd(sizes, { quick = true } = {}) {
  const all = await codecs();
  const inputs = [
    ['zeros', zeros],
    ['text', (n) => textLike(n, 7)],
    ['binary', (n) => binaryLike(n, 11)],
    ['random', (n) => randomBytes(n, n + 2)],
  ];
  const results = [];
  for (const level of LEVELS) {
    for (const [kind, make] of inputs) {
      for (const size of sizes) {
        const data = make(size);
        for (const codec of all) {
          if (codec.levels && !codec.levels.includes(level)) continue;
          for (const op of ['compress', 'decompress']) {
            const meta = { family: 'zstd', group: `L${level} ${kind} ${op}`, impl: codec.impl, size, peer: codec.impl !== 'kura' };
            if (codec.error) {
              if (level === TARGET_LEVEL) results.push(unavailable(meta, codec.error));
              continue;
            }
            let frame;
            try {
              frame = roundTrips(codec, data, level);
            } catch (error) {
              if (!meta.peer) throw error;
              results.push(unavailable(meta, error.message));
              continue;
            }
            const fn = op === 'compress' ? () => codec.compress(data, level) : () => codec.decompress(frame, data.length);
            results.push(await measure(`zstd ${meta.group} ${codec.impl} ${sizeLabel(size)}`, fn, size,
              { ...meta, budgetScale: quick ? 0.2 : 1, extra: { ratio: data.length / frame.length } }));
          }
        }
      }
    }
  }
  return results;
}
