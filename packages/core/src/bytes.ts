/** Small helpers for the byte arguments every API function takes. */
import { InvalidInputError } from './errors.js';

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i]!];
  return s;
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
