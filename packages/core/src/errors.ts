/**
 * Kura's typed errors. Every error a caller can act on is a `KuraError` with a stable `code`
 * (listed in docs/ERRORS.md); messages are for people and may change, codes never do.
 */

/**
 * Every code a KuraError can carry, each a row of docs/ERRORS.md (test/error-codes.test.ts holds
 * them together). Closed on purpose: the server's statuses and the CLI's exit codes are records
 * over it, so a new code does not compile until both say what it means.
 */
export const KURA_ERROR_CODES = [
  // core
  'INVALID_INPUT',
  'CORRUPT_DATA',
  'INVALID_STATE',
  'INTERNAL',
  // store
  'NOT_FOUND',
  'STORE_LOCKED',
  'STORAGE_UNAVAILABLE',
  'STORAGE_UNREACHABLE',
  'FORMAT_MISMATCH',
  'READ_ONLY',
  'STORE_CLOSED',
  'DIGEST_MISMATCH',
  'MISSING_CHUNKS',
  'AMBIGUOUS',
  'STORAGE_FULL',
  'IO_ERROR',
  'MODEL_UNAVAILABLE',
  'WRONG_PASSWORD',
  // the browser demo's sync (apps/web)
  'SYNC_FAILED',
] as const;

export type KuraErrorCode = (typeof KURA_ERROR_CODES)[number];

const KNOWN_CODES: ReadonlySet<string> = new Set(KURA_ERROR_CODES);

/** Whether `s` is one of Kura's codes: check codes that arrive as strings (worker messages) before trusting them. */
export function isKuraErrorCode(s: unknown): s is KuraErrorCode {
  return typeof s === 'string' && KNOWN_CODES.has(s);
}

/** Marks every KuraError, whichever copy of this module made it (see isKuraError). */
const KURA_ERROR: unique symbol = Symbol.for('kura.error') as never;

export class KuraError extends Error {
  readonly code: KuraErrorCode;

  constructor(code: KuraErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }

  /** Always true: what isKuraError looks for. */
  get [KURA_ERROR](): true {
    return true;
  }
}

/**
 * Whether `e` is a KuraError, also when another copy of @kura/core made it: the bundled
 * `kura` command loads the HTTP server's own copy for `kura serve`, and `instanceof` sees
 * only its own class. Its code must be one this copy knows, so that `e.code` is honest.
 */
export function isKuraError(e: unknown): e is KuraError {
  return e instanceof Error && (e as unknown as Record<symbol, unknown>)[KURA_ERROR] === true && isKuraErrorCode((e as KuraError).code);
}

/** An argument was rejected before any work was done; `field` names it. */
export class InvalidInputError extends KuraError {
  readonly field: string | undefined;

  constructor(message: string, field?: string, options?: ErrorOptions) {
    super('INVALID_INPUT', message, options);
    this.field = field;
  }
}

/** Why stored bytes were found damaged. */
export type CorruptionReason =
  | 'corrupt-frame' // a zstd frame that is malformed, truncated or followed by garbage
  | 'too-large' // a frame that declares or produces more than the recorded raw length
  | 'too-short' // a frame that declares or produces less than the recorded raw length
  | (string & {}); // later layers add their own (e.g. a chunk whose key does not match)

/** Where damage was found, when the layer that found it knows. */
export interface CorruptionDetails {
  /** The chunk key (64 hex) whose bytes are damaged. */
  key?: string;
  /** The document digest (`sha256:<hex>`) that could not be read intact. */
  digest?: string;
}

/** Damaged data was detected; nothing damaged is ever returned as if it were good. */
export class CorruptDataError extends KuraError {
  readonly reason: CorruptionReason;
  readonly key: string | undefined;
  readonly digest: string | undefined;

  constructor(message: string, reason: CorruptionReason, details: CorruptionDetails = {}, options?: ErrorOptions) {
    super('CORRUPT_DATA', message, options);
    this.reason = reason;
    this.key = details.key;
    this.digest = details.digest;
  }
}

/** A hasher, chunker or ingester was used after it finished or was disposed. */
export class InvalidStateError extends KuraError {
  constructor(message: string) {
    super('INVALID_STATE', message);
  }
}

/** The wasm core reported something the wrapper should have prevented: a bug in Kura. */
export class InternalError extends KuraError {
  constructor(message: string) {
    super('INTERNAL', message);
  }
}
