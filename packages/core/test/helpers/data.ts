/** Seeded test data and the shared known-answer files. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));

/** wasm-core/tests/vectors: the same JSON vectors `cargo test` runs. */
export const coreVector = (name: string): any => JSON.parse(readFileSync(here(`../../../../wasm-core/tests/vectors/${name}`), 'utf8'));
/** ../shared/test-vectors beside the repository. */
export const sharedPath = (name: string): string => here(`../../../../../shared/test-vectors/${name}`);
export const sharedVector = (name: string): any => JSON.parse(readFileSync(sharedPath(name), 'utf8'));

/** splitmix32: small, seeded, good enough for test data. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export function randomBytes(seed: number, len: number): Uint8Array {
  const next = rng(seed);
  const out = new Uint8Array(len);
  for (let i = 0; i < len; i += 4) {
    const v = next();
    out[i] = v;
    if (i + 1 < len) out[i + 1] = v >>> 8;
    if (i + 2 < len) out[i + 2] = v >>> 16;
    if (i + 3 < len) out[i + 3] = v >>> 24;
  }
  return out;
}

const WORDS = 'kura store chunk digest the of and content address pack fn let const return { } ( ) ; import export\n'.split(' ');

const ENCODED = WORDS.map((w) => new TextEncoder().encode(`${w} `));

export function textBytes(seed: number, len: number): Uint8Array {
  const next = rng(seed);
  const out = new Uint8Array(len + 16);
  let at = 0;
  while (at < len) {
    const w = ENCODED[next() % ENCODED.length]!;
    out.set(w, at);
    at += w.length;
  }
  return out.subarray(0, len);
}

/** Splits `data` at the given cut positions (sorted, deduplicated, clamped). */
export function splitAt(data: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => Math.min(Math.max(c, 0), data.length)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const p of [...points, data.length]) {
    if (p > prev) out.push(data.subarray(prev, p));
    prev = p;
  }
  return out;
}

export function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Byte equality with a useful message. vitest's deep `toEqual` walks typed arrays element by
 * element, which takes seconds on megabytes; this compares natively.
 */
export function expectSameBytes(actual: Uint8Array, expected: Uint8Array, label = 'bytes'): void {
  const a = Buffer.from(actual.buffer, actual.byteOffset, actual.length);
  const b = Buffer.from(expected.buffer, expected.byteOffset, expected.length);
  if (a.equals(b)) return;
  let i = 0;
  while (i < Math.min(a.length, b.length) && a[i] === b[i]) i++;
  throw new Error(`${label}: lengths ${a.length} vs ${b.length}, first difference at byte ${i}`);
}
