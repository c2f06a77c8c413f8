/** Digests and chunk keys as they appear in URLs and headers. */
import { HttpError } from '../errors.js';

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const LOOSE = /^(?:sha256:)?([0-9a-fA-F]{64})$/;
const KEY = /^[0-9a-f]{64}$/;

/** A document digest in a URL: exactly `sha256:<64 lowercase hex>`. */
export function digestParam(value: string): `sha256:${string}` {
  if (!DIGEST.test(value)) throw new HttpError('INVALID_INPUT', `${JSON.stringify(value.slice(0, 100))} is not a digest (sha256:<64 lowercase hex>)`, { field: 'digest' });
  return value as `sha256:${string}`;
}

/** An expected digest from a header or query: `sha256:<hex>` or bare hex, either case. */
export function expectedDigest(value: string | undefined, field: string): `sha256:${string}` | undefined {
  if (value === undefined) return undefined;
  const m = LOOSE.exec(value.trim());
  if (!m) throw new HttpError('INVALID_INPUT', `${field} must be sha256:<64 hex> or 64 hex digits`, { field });
  return `sha256:${m[1]!.toLowerCase()}`;
}

export function keyParam(value: string): string {
  if (!KEY.test(value)) throw new HttpError('INVALID_INPUT', `${JSON.stringify(value.slice(0, 100))} is not a chunk key (64 lowercase hex)`, { field: 'key' });
  return value;
}

/** The entity tag of a document: its digest, quoted. */
export const etagOf = (digest: string) => `"${digest}"`;
