import { textLike } from './data.mjs';

/**
 * `n` distinct documents of `size` bytes: windows of one text-like buffer (compressible, like
 * real documents), each stamped with its index so no two are equal.
 */
export function documents(n, size, seed) {
  const base = textLike(size * 4, seed);
  return Array.from({ length: n }, (_, i) => {
    const d = base.slice((i * 131) % (size * 3), ((i * 131) % (size * 3)) + size);
    new DataView(d.buffer).setUint32(0, i); // every document distinct
    return d;
  });
}
