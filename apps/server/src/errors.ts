/**
 * The error catalog (docs/HTTP.md, docs/ERRORS.md): every code the API returns and its status.
 * Store errors keep their codes; the HTTP layer adds its own. Bodies are always
 * `{ "error": { "code", "message", "requestId", ...details } }`, never a stack trace.
 */
import type { KuraErrorCode } from '@kura/core';

/**
 * The status of each library code. Exhaustive, so a code added to @kura/core does not compile
 * until it has a line here. null: not in the catalog, since no client can meet it (a store that
 * fails to open, a bug, the browser's own): answered as 500 INTERNAL, its text only in the log.
 */
export const LIBRARY_STATUS: Readonly<Record<KuraErrorCode, number | null>> = {
  INVALID_INPUT: 400,
  MODEL_UNAVAILABLE: 503,
  DIGEST_MISMATCH: 400,
  NOT_FOUND: 404,
  MISSING_CHUNKS: 409,
  AMBIGUOUS: 409,
  READ_ONLY: 409,
  INTERNAL: 500,
  CORRUPT_DATA: 500,
  IO_ERROR: 500,
  STORAGE_FULL: 507,
  STORE_CLOSED: 503,
  STORE_LOCKED: 503,
  STORAGE_UNREACHABLE: 503,
  // An object store that refuses the running server (credentials rotated or revoked, the bucket
  // or a policy removed): a client's request failed as 500 "internal error" (a trial). Its
  // message is the server's log's, not the client's (it names the bucket): see plugins/errors.ts.
  STORAGE_UNAVAILABLE: 503,
  INVALID_STATE: null,
  FORMAT_MISMATCH: null,
  WRONG_PASSWORD: null,
  SYNC_FAILED: null,
};

/** Codes only the HTTP layer answers with. */
export const HTTP_ONLY_STATUS = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  METHOD_NOT_ALLOWED: 405,
  // (Answered by plugins/errors.ts clientError, before fastify has a request.)
  REQUEST_TIMEOUT: 408,
  UPLOAD_BUSY: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  // (Answered by app.ts for an `Expect` other than 100-continue, before fastify has a request.)
  EXPECTATION_FAILED: 417,
  RANGE_NOT_SATISFIABLE: 416,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  UNAVAILABLE: 503,
} satisfies Record<string, number>;

export type HttpOnlyCode = keyof typeof HTTP_ONLY_STATUS;
export type ServerErrorCode = KuraErrorCode | HttpOnlyCode;

/** The whole catalog: the HTTP-only codes and the library codes that have a status. */
export const STATUS_OF: Record<string, number> = {
  ...HTTP_ONLY_STATUS,
  ...Object.fromEntries(Object.entries(LIBRARY_STATUS).filter((e): e is [string, number] => e[1] !== null)),
};

/** A refusal of the HTTP layer with a catalog code; `details` are merged into the error body. */
export class HttpError extends Error {
  readonly status: number;
  constructor(
    readonly code: ServerErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = STATUS_OF[code] ?? 500;
  }
}

export interface ErrorBody {
  error: { code: string; message: string; requestId: string; [detail: string]: unknown };
}

/** Fields of a store error that help a client act on it (never internals). */
export function detailsOf(err: unknown): Record<string, unknown> {
  const e = err as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of ['field', 'expected', 'found', 'missing', 'reason', 'key', 'digest', 'paths']) {
    if (e[k] !== undefined && e[k] !== null) out[k] = e[k];
  }
  return out;
}

/**
 * An error as a client without the read scope may see it. AMBIGUOUS names the paths showing a
 * digest — an answer to read: a write-only token that named a digest in a metadata change
 * learned which paths hold those bytes (a trial). It is told to name a path, and nothing more.
 */
export function forScopes(err: unknown, scopes: ReadonlySet<string> | undefined): unknown {
  if (!scopes || scopes.has('read')) return err;
  const e = err as { code?: unknown; paths?: unknown } | null;
  if (e?.code !== 'AMBIGUOUS' || e.paths === undefined) return err;
  return new HttpError('AMBIGUOUS', 'that digest is the content of several paths: name the path instead of the digest');
}
