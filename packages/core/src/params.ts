/**
 * Chunking parameters. Kura's rules (docs/FORMAT.md, as REAPI's FastCDC 2020 requires): avg a
 * power of two in [256 B, 4 MiB], min = avg / 4, max = 4 * avg; seed a 64-bit integer XOR-ed
 * into the gear table. They are checked here, with the rule in the message, before wasm runs.
 */
import { describe } from './bytes.js';
import { InvalidInputError } from './errors.js';

export interface ChunkParams {
  /** Target average chunk size in bytes; a power of two. Default 16 KiB. */
  avg?: number;
  /** Must equal avg / 4 when given. */
  min?: number;
  /** Must equal 4 * avg when given. */
  max?: number;
  /** 0 ≤ seed < 2^64, as a number (safe integer) or bigint. Default 0. */
  seed?: number | bigint;
}

export interface ResolvedChunkParams {
  readonly min: number;
  readonly avg: number;
  readonly max: number;
  readonly seed: bigint;
}

export const AVG_MIN = 256;
export const AVG_MAX = 4 * 1024 * 1024;
export const DEFAULT_AVG = 16 * 1024;

export const DEFAULT_CHUNK_PARAMS: ResolvedChunkParams = Object.freeze({
  min: DEFAULT_AVG / 4,
  avg: DEFAULT_AVG,
  max: DEFAULT_AVG * 4,
  seed: 0n,
});

function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;
}

function size(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new InvalidInputError(`chunking.${field} must be a positive integer, got ${describe(value)}`, `chunking.${field}`);
  }
  return value;
}

/**
 * Parameters this module resolved (frozen): given again — a store gives its own to every put —
 * they are taken as they are, not checked a second time.
 */
const RESOLVED = new WeakSet<object>([DEFAULT_CHUNK_PARAMS]);

export function resolveChunkParams(params: ChunkParams = {}): ResolvedChunkParams {
  if (RESOLVED.has(params)) return params as ResolvedChunkParams;
  if (params === null || typeof params !== 'object') {
    throw new InvalidInputError(`chunking parameters must be an object, got ${describe(params)}`, 'chunking');
  }
  const avg = params.avg === undefined ? DEFAULT_AVG : size(params.avg, 'avg');
  if (!isPowerOfTwo(avg)) {
    throw new InvalidInputError(`chunking.avg must be a power of two, got ${avg}`, 'chunking.avg');
  }
  if (avg < AVG_MIN || avg > AVG_MAX) {
    throw new InvalidInputError(`chunking.avg must be between ${AVG_MIN} and ${AVG_MAX}, got ${avg}`, 'chunking.avg');
  }
  const min = params.min === undefined ? avg / 4 : size(params.min, 'min');
  if (min !== avg / 4) {
    throw new InvalidInputError(`chunking.min must equal avg / 4 = ${avg / 4}, got ${min}`, 'chunking.min');
  }
  const max = params.max === undefined ? avg * 4 : size(params.max, 'max');
  if (max !== avg * 4) {
    throw new InvalidInputError(`chunking.max must equal 4 * avg = ${avg * 4}, got ${max}`, 'chunking.max');
  }
  const resolved: ResolvedChunkParams = Object.freeze({ min, avg, max, seed: resolveSeed(params.seed) });
  RESOLVED.add(resolved);
  return resolved;
}

function resolveSeed(seed: unknown): bigint {
  if (seed === undefined) return 0n;
  if (typeof seed === 'number' && Number.isSafeInteger(seed) && seed >= 0) return BigInt(seed);
  if (typeof seed === 'bigint' && seed >= 0n && seed < 1n << 64n) return seed;
  throw new InvalidInputError(
    `chunking.seed must be an integer in [0, 2^64) (a safe integer number or a bigint), got ${describe(seed)}`,
    'chunking.seed',
  );
}

/** The seed as the two u32 halves the wasm exports take. */
export function seedWords(p: ResolvedChunkParams): [lo: number, hi: number] {
  return [Number(p.seed & 0xffff_ffffn), Number(p.seed >> 32n)];
}
