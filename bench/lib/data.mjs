/**
 * Seeded, reproducible inputs. Every run hashes, chunks and compresses the same bytes, so a
 * change in a figure is a change in the code or the machine, never in the data.
 * Math.random is not used: it cannot be seeded.
 */

/** splitmix32: a tiny, well-mixed 32-bit generator; used to seed and to draw words. */
export function splitmix32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) | 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/**
 * `size` random bytes from xoshiro128** seeded by splitmix32: incompressible, and every
 * window is as likely as any other, which is what FastCDC's expected chunk size assumes.
 */
export function randomBytes(size, seed = 1) {
  const next = splitmix32(seed);
  let a = next(), b = next(), c = next(), d = next();
  const words = new Uint32Array(Math.ceil(size / 4));
  for (let i = 0; i < words.length; i++) {
    words[i] = Math.imul(rotl(Math.imul(b, 5), 7), 9); // result = rotl(b * 5, 7) * 9
    const t = b << 9;
    c ^= a; d ^= b; b ^= c; a ^= d; c ^= t; d = rotl(d, 11);
  }
  return new Uint8Array(words.buffer, 0, size);
}

const rotl = (x, k) => (x << k) | (x >>> (32 - k));

/** `size` zero bytes: the best case of every compressor and the worst of a chunker's mask. */
export function zeros(size) {
  return new Uint8Array(size);
}

// Words of a made-up program: keywords and punctuation as in source code, plus identifiers
// drawn once from the generator. Picks are skewed (a few words are very common), as in code.
const KEYWORDS = [
  'const', 'let', 'return', 'if', 'else', 'for', 'function', 'export', 'import', 'from',
  'await', 'async', 'new', 'this', 'null', 'true', 'false', 'throw', 'of', 'in', 'class',
  '=', '===', '+', '-', '(', ')', '{', '}', ';', ',', '.', '=>', '[', ']', '0', '1',
];
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

function vocabulary(next, count) {
  const words = [...KEYWORDS];
  while (words.length < count) {
    const len = 3 + (next() % 10);
    let w = '';
    for (let i = 0; i < len; i++) w += LETTERS[next() % 26];
    // camelCase joins, as identifiers in code do
    if (next() % 3 === 0) w += LETTERS[next() % 26].toUpperCase() + w.slice(0, 3);
    words.push(w);
  }
  return words;
}

/**
 * `size` bytes of text that looks like source code: lines of indented words from a
 * vocabulary. Tuned so zstd level 3 compresses it about 3-4x, like real source trees
 * (core.mjs prints the measured ratio next to every figure).
 */
export function textLike(size, seed = 7, vocabSize = 1024) {
  const next = splitmix32(seed);
  // ASCII words as bytes, written straight into the output: the same bytes the string-joining
  // version made (same draws, same order), ~10x faster (the suites generate hundreds of MiB).
  const words = vocabulary(next, vocabSize).map((w) => Uint8Array.from(w, (c) => c.charCodeAt(0)));
  const out = new Uint8Array(size + 4096); // a line never exceeds 4 KiB: it may run past size
  let length = 0;
  while (length < size) {
    for (let k = next() % 4; k > 0; k--) {
      out[length++] = 32;
      out[length++] = 32;
    }
    const n = 3 + (next() % 9);
    for (let i = 0; i < n; i++) {
      // min of two draws skews toward the front of the list (the keywords)
      const r = Math.min(next() % words.length, next() % words.length);
      if (i) out[length++] = 32;
      const w = words[r];
      for (let j = 0; j < w.length; j++) out[length++] = w[j]; // set() costs more for a few bytes
    }
    out[length++] = 10;
  }
  return out.subarray(0, size);
}

/**
 * `size` bytes that look like a binary file of records rather than text or noise: 16-byte
 * little-endian rows of an id that counts up, a timestamp that grows by small random steps, a
 * status drawn from a few values, flags, and a measurement as a float32. Compressible (zstd
 * finds the repeated structure) but far less than text: what table files, logs in binary
 * formats and object files are like.
 */
export function binaryLike(size, seed = 11) {
  const next = splitmix32(seed);
  const rows = Math.ceil(size / 16);
  const view = new DataView(new ArrayBuffer(rows * 16));
  let time = 1_700_000_000;
  let value = 20;
  for (let i = 0; i < rows; i++) {
    const r = next();
    time += r % 97;
    value += ((r >>> 8) % 201 - 100) / 400;
    const at = i * 16;
    view.setUint32(at, 100_000 + i, true);
    view.setUint32(at + 4, time, true);
    view.setUint16(at + 8, [200, 200, 200, 204, 301, 404, 500][(r >>> 16) % 7], true);
    view.setUint16(at + 10, (r >>> 24) & 0x13, true);
    view.setFloat32(at + 12, value, true);
  }
  return new Uint8Array(view.buffer, 0, size);
}

/** "1 KiB", "64 KiB", "10 MiB": sizes as the tables print them. */
export function sizeLabel(bytes) {
  if (bytes >= 1 << 20 && bytes % (1 << 20) === 0) return `${bytes >> 20} MiB`;
  if (bytes >= 1 << 10 && bytes % (1 << 10) === 0) return `${bytes >> 10} KiB`;
  return `${bytes} B`;
}

export const KiB = 1024;
export const MiB = 1024 * 1024;
