/**
 * UTF-8 validation without decoding. A fatal TextDecoder answers the same question, but by
 * throwing on every binary sample — ~8 µs an exception, four of them per sniffed upload of
 * random bytes (media-types.ts tries cuts), which was a third of a 1 KB HTTP POST's time.
 */

/**
 * Whether `bytes` is well-formed UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF: what a fatal TextDecoder accepts). With `cut`, the bytes may end inside a
 * character — a sample's end — as long as what is there could begin one.
 */
export function isUtf8(bytes: Uint8Array, cut = false): boolean {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0; // overlong
      else if (b === 0xed) hi = 0x9f; // surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90; // overlong
      else if (b === 0xf4) hi = 0x8f; // past U+10FFFF
    } else return false;
    for (let k = 1; k <= need; k++) {
      if (i + k >= n) return cut; // ends inside the character
      const c = bytes[i + k]!;
      if (k === 1 ? c < lo || c > hi : c < 0x80 || c > 0xbf) return false;
    }
    i += need + 1;
  }
  return true;
}

/**
 * Whether `bytes` hold at least one well-formed multi-byte UTF-8 character: text that is not
 * UTF-8 and holds none is in a single-byte encoding (Latin-1, Windows-1252: `café` is 63 61
 * 66 E9), where text with some is UTF-8 with damage.
 */
export function hasUtf8Character(bytes: Uint8Array): boolean {
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const b = bytes[i]!;
    if (b < 0xc2 || b > 0xf4) continue;
    const need = b <= 0xdf ? 1 : b <= 0xef ? 2 : 3;
    if (i + need >= n) return false;
    let ok = true;
    for (let k = 1; k <= need && ok; k++) ok = (bytes[i + k]! & 0xc0) === 0x80;
    if (ok && isUtf8(bytes.subarray(i, i + need + 1))) return true;
  }
  return false;
}

/**
 * Whether every byte of `bytes` is below 0x80 (ASCII: UTF-8 that decodes to the same code
 * units; the search index takes ASCII text as its bytes). This module's scan by default; a
 * platform with a faster one installs it (Node's `buffer.isAscii`, ~4x: 3 ms for 32 MiB).
 */
export function isAscii(bytes: Uint8Array): boolean {
  return asciiImpl(bytes);
}

/** Installs a platform's ASCII check (node/backends.ts). */
export function useIsAscii(fn: (bytes: Uint8Array) => boolean): void {
  asciiImpl = fn;
}

/**
 * The scan every platform has: four bytes a step through a word view where alignment allows,
 * ~2.5 GB/s here, a third of what decoding to a string costs.
 */
export function asciiScan(bytes: Uint8Array): boolean {
  const n = bytes.length;
  let i = 0;
  const lead = Math.min(n, (4 - (bytes.byteOffset & 3)) & 3);
  for (; i < lead; i++) if (bytes[i]! & 0x80) return false;
  const words = (n - i) >>> 2; // (0 when `bytes` ended before a word boundary)
  const view = words > 0 ? new Uint32Array(bytes.buffer, bytes.byteOffset + i, words) : [];
  let seen = 0;
  for (let k = 0; k < words; k++) {
    seen |= view[k]!;
    // (Checked every 4 KiB, not every word: the OR is what keeps the loop fast.)
    if ((k & 1023) === 1023 && seen & 0x80808080) return false;
  }
  if (seen & 0x80808080) return false;
  for (i += words * 4; i < n; i++) if (bytes[i]! & 0x80) return false;
  return true;
}

let asciiImpl = asciiScan;

/**
 * Whether all of `bytes` is well-formed UTF-8 (a whole text: none cut at its end). The scan
 * above by default; Node installs its own (`buffer.isUtf8`, native), which grep asks of every
 * document that is not ASCII.
 */
export function isWholeUtf8(bytes: Uint8Array): boolean {
  return utf8Impl(bytes);
}

/** Installs a platform's UTF-8 check (node/backends.ts). */
export function useIsUtf8(fn: (bytes: Uint8Array) => boolean): void {
  utf8Impl = fn;
}

let utf8Impl = (bytes: Uint8Array): boolean => isUtf8(bytes);
