/**
 * FastCDC 2020 in plain JavaScript: the comparison point for Kura's wasm chunker, written the
 * way a serious JS port would be (no BigInt in the hot loop).
 *
 * A port of wasm-core/src/cdc.rs (itself byte-for-byte the reference `fastcdc` crate v5,
 * v2020, normalization level 2, optional seed): "rolling two bytes each time" with the
 * shifted gear table, a strict mask before `avg` and a loose one after. The 64-bit gear hash
 * is kept as two int32 halves (hi, lo): `hash << 2` moves lo's top two bits into hi, and
 * `hash + g` carries out of lo when the unsigned sum wraps. Only bits below 50 ever reach a
 * mask, but the full 64 bits are kept so the state is exactly the reference's.
 *
 * The benchmark's self-check (suites/core.mjs) compares this port with Kura and with the
 * known answers in /work/shared/test-vectors before any figure of it is reported.
 */
import { GEAR_WORDS } from './fastcdc-gear.mjs';

/** Cut-point masks by log2(size), hex as in cdc.rs (from the reference implementation). */
const MASKS = [
  '0', '0', '0', '0', '0',
  '0000000001804110', '0000000001803110', '0000000018035100', '0000001800035300',
  '0000019000353000', '0000590003530000', '0000d90003530000', '0000d90103530000',
  '0000d90303530000', '0000d90313530000', '0000d90f03530000', '0000d90303537000',
  '0000d90703537000', '0000d90707537000', '0000d91707537000', '0000d91747537000',
  '0000d91767537000', '0000d93767537000', '0000d93777537000', '0000d93777577000',
  '0000db3777577000',
].map((h) => {
  const s = h.padStart(16, '0');
  return [parseInt(s.slice(0, 8), 16) | 0, parseInt(s.slice(8), 16) | 0];
});

const NORMALIZATION = 2;

/** [hi, lo] << 1, as int32 halves. */
const shl1 = ([hi, lo]) => [(hi << 1) | (lo >>> 31), lo << 1];

/**
 * Chunker state for one parameter set: seeded gear tables (plain and shifted) and masks.
 * `min`/`max` default to avg/4 and 4*avg (Kura's rule); the known-answer vectors use 65534.
 */
export function params({ avg = 16384, min = avg / 4, max = avg * 4, seed = 0 } = {}) {
  const bits = Math.log2(avg);
  if (!Number.isInteger(bits)) throw new RangeError(`avg must be a power of two, got ${avg}`);
  const s = BigInt(seed); // setup only: split the 64-bit seed into halves
  const seedHi = Number((s >> 32n) & 0xffffffffn) | 0;
  const seedLo = Number(s & 0xffffffffn) | 0;
  const gHi = new Int32Array(256), gLo = new Int32Array(256);
  const lsHi = new Int32Array(256), lsLo = new Int32Array(256);
  for (let i = 0; i < 256; i++) {
    const g = [GEAR_WORDS[2 * i] ^ seedHi, GEAR_WORDS[2 * i + 1] ^ seedLo];
    [gHi[i], gLo[i]] = g;
    [lsHi[i], lsLo[i]] = shl1(g);
  }
  const maskS = MASKS[bits + NORMALIZATION], maskL = MASKS[bits - NORMALIZATION];
  return { min, avg, max, gHi, gLo, lsHi, lsLo, maskS, maskL, maskSls: shl1(maskS), maskLls: shl1(maskL) };
}

/**
 * Length of the chunk starting at data[start] (the input ends at `end`): find_boundary of
 * cdc.rs with eof = true. Two loops, as in the reference, so the mask is a loop constant.
 */
function cut(p, data, start, end) {
  const len = end - start;
  if (len <= p.min) return len;
  const remaining = len < p.max ? len : p.max;
  const { gHi, gLo, lsHi, lsLo } = p;
  let limit = (p.avg < remaining ? p.avg : remaining) >>> 1;
  let index = p.min >>> 1;
  let hi = 0, lo = 0;
  // Pass 0: strict masks up to avg; pass 1: loose masks up to max.
  for (let pass = 0; pass < 2; pass++) {
    const [m1Hi, m1Lo] = pass === 0 ? p.maskSls : p.maskLls;
    const [m2Hi, m2Lo] = pass === 0 ? p.maskS : p.maskL;
    for (; index < limit; index++) {
      const a = start + 2 * index;
      // hash = (hash << 2) + GEAR_LS[data[a]]
      let b = data[a];
      hi = (hi << 2) | (lo >>> 30);
      let g = lsLo[b];
      let sum = ((lo << 2) + g) | 0;
      hi = (hi + lsHi[b] + ((sum >>> 0) < (g >>> 0) ? 1 : 0)) | 0;
      lo = sum;
      if (((hi & m1Hi) | (lo & m1Lo)) === 0) return 2 * index;
      // hash = hash + GEAR[data[a + 1]]
      b = data[a + 1];
      g = gLo[b];
      sum = (lo + g) | 0;
      hi = (hi + gHi[b] + ((sum >>> 0) < (g >>> 0) ? 1 : 0)) | 0;
      lo = sum;
      if (((hi & m2Hi) | (lo & m2Lo)) === 0) return 2 * index + 1;
    }
    limit = remaining >>> 1;
  }
  return remaining;
}

/** All chunk lengths of `data` taken as a whole document, like Kura's `chunkLengths`. */
export function chunkLengths(data, p = params()) {
  const out = [];
  for (let start = 0; start < data.length; ) {
    const len = cut(p, data, start, data.length);
    out.push(len);
    start += len;
  }
  return Uint32Array.from(out);
}
