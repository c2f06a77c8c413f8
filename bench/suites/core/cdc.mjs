/**
 * FastCDC 2020 at avg 16 KiB on random data: Kura's wasm `chunkLengths` against the plain-JS
 * port in peers/fastcdc-js.mjs and rabin-wasm (the chunker npm users reach for, via IPFS).
 *
 * Nothing is reported before the self-check passes: the JS port must give Kura's lengths on
 * random data and on the known-answer image, and both must match the known answers. A
 * faster chunker that cuts elsewhere would be comparing different work.
 */
import { readFileSync } from 'node:fs';
import { chunkLengths } from '@kura/core';
import * as fastcdcJs from '../../peers/fastcdc-js.mjs';
import { randomBytes, sizeLabel, zeros } from '../../lib/data.mjs';
import { measure, unavailable } from '../../lib/measure.mjs';
import { loadPeer } from './peers.mjs';

const VECTORS = '/work/shared/test-vectors';
const AVG = 16 * 1024;

const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);

/** Throws (the run fails) unless Kura, the JS port and the known answers all agree. */
export function selfCheck() {
  const image = readFileSync(`${VECTORS}/SekienAkashita.jpg`);
  const known = JSON.parse(readFileSync(`${VECTORS}/fastcdc2020.json`, 'utf8'));
  const failures = [];
  for (const c of known.cases) {
    const want = c.chunks.map((ch) => ch.length);
    const js = fastcdcJs.chunkLengths(image, fastcdcJs.params({ avg: c.avg, min: c.min, max: c.max, seed: c.seed }));
    if (!same(js, want)) failures.push(`JS port != known answer (seed ${c.seed})`);
    // Kura insists on max = 4 * avg; the vectors' max (65534) is never reached by a chunk
    // (all are shorter), so the cut points are the same.
    if (c.avg === AVG && want.every((l) => l < c.max)) {
      const kura = chunkLengths(image, { avg: c.avg, seed: c.seed });
      if (!same(kura, want)) failures.push(`Kura != known answer (seed ${c.seed})`);
    }
  }
  for (const [what, data] of [['SekienAkashita.jpg', image], ['random 1 MiB', randomBytes(1 << 20, 5)]]) {
    const kura = chunkLengths(data, { avg: AVG });
    const js = fastcdcJs.chunkLengths(data, fastcdcJs.params({ avg: AVG }));
    if (!same(kura, js)) failures.push(`JS port != Kura on ${what} (${js.length} vs ${kura.length} chunks)`);
  }
  if (failures.length) throw new Error(`FastCDC self-check failed, refusing to report: ${failures.join('; ')}`);
  return `FastCDC self-check: JS port == Kura == known answers (${known.cases.length} vectors, image, random 1 MiB)`;
}

async function peers() {
  const p = fastcdcJs.params({ avg: AVG });
  return Promise.all([
    loadPeer('fastcdc-js', () => (d) => fastcdcJs.chunkLengths(d, p)),
    // Rabin fingerprinting, not FastCDC (different cut points): a speed reference only.
    // 2^14 = avg 16 KiB, min/max as Kura's, 64-byte window, IPFS's default polynomial.
    loadPeer('rabin-wasm', async () => {
      const m = await import('rabin-wasm');
      const r = await (m.create ?? m.default.create)(14, AVG / 4, AVG * 4, 64, 17437180132763653);
      return (d) => r.fingerprint(d);
    }),
  ]);
}

/** JS/npm chunkers the ">= 3x the best" target is measured against. */
export const JS_CHUNKERS = ['fastcdc-js', 'rabin-wasm'];

/** Random data always; --full adds zeros (no cut point is ever found: every chunk is max). */
export async function runCdc(sizes, { full = false } = {}) {
  const others = await peers();
  const inputs = [['random', (n) => randomBytes(n, n + 1)], ...(full ? [['zeros', zeros]] : [])];
  const ops = [{ impl: 'kura', fn: (d) => chunkLengths(d, { avg: AVG }) }, ...others];
  const cases = inputs.flatMap(([kind, make]) => sizes.map((size) => [kind, make, size]));
  const results = [];
  for (const [kind, make, size] of cases) {
    const data = make(size);
    const meta = { family: 'fastcdc', group: `${kind} avg 16K`, size };
    for (const p of ops) {
      if (p.error) {
        results.push(unavailable({ ...meta, impl: p.impl }, p.error));
        continue;
      }
      const chunks = p.fn(data).length;
      const r = await measure(`fastcdc ${kind} ${p.impl} ${sizeLabel(size)}`, () => p.fn(data), size,
        { ...meta, impl: p.impl, peer: p.impl !== 'kura', extra: { chunks } });
      if (!r.unavailable) r.chunksPerSec = chunks * r.opsPerSec;
      results.push(r);
    }
  }
  return results;
}
