/** Small helpers for the byte arguments every API function takes. */
import { InvalidInputError } from './errors.js';

const HEX_CHARS = new TextEncoder().encode('0123456789abcdef');
const decoder = new TextDecoder();
let scratch = new Uint8Array(128);

/**
 * Lowercase hex. Built as ASCII bytes and decoded once, so the result is a flat string: a
 * `+=` loop leaves V8 a rope of one node per byte (~500 bytes per 32-byte key), and stores
 * keep a key per chunk.
 */
export function toHex(bytes: Uint8Array): string {
  const n = bytes.length * 2;
  if (scratch.length < n) scratch = new Uint8Array(n);
  for (let i = 0, j = 0; i < bytes.length; i++, j += 2) {
    const b = bytes[i]!;
    scratch[j] = HEX_CHARS[b >> 4]!;
    scratch[j + 1] = HEX_CHARS[b & 15]!;
  }
  return decoder.decode(scratch.subarray(0, n));
}

/** Accepts any Uint8Array (Node Buffers included); rejects everything else by name. */
export function assertBytes(value: unknown, field: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new InvalidInputError(`${field} must be a Uint8Array, got ${describe(value)}`, field);
  }
}

export function assertInteger(value: unknown, field: string, min: number, max: number): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidInputError(`${field} must be an integer in [${min}, ${max}], got ${describe(value)}`, field);
  }
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return value.constructor?.name ?? 'object';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return `${typeof value} ${String(value)}`;
}
