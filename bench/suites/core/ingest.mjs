/**
 * The fused ingest kernel (boundaries + BLAKE3 key per chunk + optional zstd + document
 * SHA-256 in one pass) on 10 MiB at avg 16 KiB, through the public Ingester as a put would
 * call it (chunk records and payload copies included):
 *   raw+wasm-sha   no compression, document SHA-256 in wasm (the portable/browser path)
 *   raw+node-sha   no compression, document SHA-256 by node:crypto (the Node default)
 *   zstd3+node-sha zstd level 3 payloads, node:crypto document hash
 * next to Kura's wasm SHA-256 alone on the same bytes, measured right before them so the
 * ratio "fused / SHA-256 alone" compares figures taken under the same machine load.
 */
import { Ingester, chunkLengths, sha256 } from '@kura/core';
import { randomBytes, sizeLabel, textLike } from '../../lib/data.mjs';
import { measure } from '../../lib/measure.mjs';

const AVG = 16 * 1024;
export const SHA_ALONE = 'sha256 wasm alone';

const VARIANTS = [
  ['raw+wasm-sha', { compression: false, documentHasher: 'wasm' }],
  ['raw+node-sha', { compression: false }],
  ['zstd3+node-sha', { compression: 3 }],
];

function ingestAll(data, options) {
  const ing = new Ingester({ chunking: { avg: AVG }, ...options });
  let chunks = ing.update(data).length;
  chunks += ing.finish().length;
  return { result: ing.result, chunks };
}

export async function runIngest(size) {
  const results = [];
  for (const [kind, data] of [['random', randomBytes(size, 11)], ['text', textLike(size, 11)]]) {
    const meta = { family: 'ingest', group: `${kind} avg 16K`, size };
    const digest = sha256(data);
    const expectedChunks = chunkLengths(data, { avg: AVG }).length;
    results.push(await measure(`ingest ${SHA_ALONE} ${kind}`, () => sha256(data), size, { ...meta, impl: SHA_ALONE }));
    for (const [impl, options] of VARIANTS) {
      // Same digest and chunk count as the separate calls, or the figure means nothing.
      const { result, chunks } = ingestAll(data, options);
      if (result.digest !== digest || chunks !== expectedChunks) {
        throw new Error(`ingest ${impl} on ${kind}: digest/chunks ${result.digest}/${chunks}, expected ${digest}/${expectedChunks}`);
      }
      results.push(await measure(`ingest ${impl} ${kind} ${sizeLabel(size)}`, () => ingestAll(data, options), size,
        { ...meta, impl, extra: { chunks } }));
    }
  }
  return results;
}
