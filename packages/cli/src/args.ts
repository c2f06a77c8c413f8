/** Parsing option values typed by the user; anything malformed is a usage error (exit 2). */
import { usage } from './exit.js';
import { storePath } from './store-path.js';

/** Commander argParser for repeatable options: `--tag a --tag b` -> ['a', 'b']. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function wholeNumber(value: string, flag: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw usage(`${flag} must be a whole number, got "${value}"`);
  }
  return Number(value);
}

/** A cosine similarity, from -1 to 1. */
export function cosine(value: string, flag: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < -1 || n > 1) throw usage(`${flag} must be a number from -1 to 1, got "${value}"`);
  return n;
}

/** `k=v` pairs; `k=` means "no value" (null) where the caller allows it. */
export function keyValues(pairs: string[], flag: string, allowDelete: boolean): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usage(`${flag} takes key=value, got "${pair}"`);
    const value = pair.slice(eq + 1);
    if (value === '' && !allowDelete) throw usage(`${flag} ${pair}: the value is empty`);
    out[pair.slice(0, eq)] = value === '' ? null : value;
  }
  return out;
}

export const DURABILITIES = ['full', 'normal'] as const;
export type DurabilityArg = (typeof DURABILITIES)[number];

export function durability(value: string | undefined): DurabilityArg | undefined {
  if (value === undefined) return undefined;
  if (!(DURABILITIES as readonly string[]).includes(value)) {
    throw usage(`--durability must be full or normal, got "${value}"`);
  }
  return value as DurabilityArg;
}

/** An ISO 8601 date or date-time (`2024-05-01`, `2024-05-01T12:00:00Z`). */
export function isoDate(value: string | undefined, flag: string): Date | undefined {
  if (value === undefined) return undefined;
  const t = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(t)) throw usage(`${flag} must be an ISO 8601 date or date-time (e.g. 2024-05-01T12:00:00Z), got "${value}"`);
  return new Date(t);
}

const DIGEST = /^(?:sha256:)?([0-9a-fA-F]{64})$/;

/** A document digest: `sha256:<64 hex>` (the prefix and the case of the hex are optional). */
export function digest(value: string): `sha256:${string}` {
  const m = DIGEST.exec(value);
  if (!m) throw usage(`not a document digest: "${value.slice(0, 80)}" (expected sha256: and 64 hex digits)`);
  return `sha256:${m[1]!.toLowerCase()}`;
}

/**
 * A digest when the argument looks like one; otherwise a path reference (PATH, PATH@N,
 * PATH@time) normalized as `kura add` stores paths (store-path.ts), so the argument that added
 * a file also names it.
 */
export function docRef(value: string): { digest: `sha256:${string}` } | { path: string } {
  // Anything with the sha256: prefix is meant as a digest (and malformed is a usage error).
  if (DIGEST.test(value) || /^sha256:/i.test(value)) return { digest: digest(value) };
  const path = storePath(value);
  if (!path) throw usage(`"${value}" names no path`);
  return { path };
}
