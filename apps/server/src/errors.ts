/**
 * The error catalog (docs/HTTP.md, docs/ERRORS.md): every code the API returns and its status.
 * Store errors keep their codes; the HTTP layer adds its own. Bodies are always
 * `{ "error": { "code", "message", "requestId", ...details } }`, never a stack trace.
 */
export const STATUS_OF: Record<string, number> = {
  INVALID_INPUT: 400,
  INVALID_QUERY: 400,
  DIGEST_MISMATCH: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  MISSING_CHUNKS: 409,
  UPLOAD_BUSY: 409,
  READ_ONLY: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RANGE_NOT_SATISFIABLE: 416,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  CORRUPT_DATA: 500,
  IO_ERROR: 500,
  STORAGE_FULL: 507,
  STORE_CLOSED: 503,
  STORE_LOCKED: 503,
  UNAVAILABLE: 503,
};

/** A refusal of the HTTP layer with a catalog code; `details` are merged into the error body. */
export class HttpError extends Error {
  readonly status: number;
  constructor(
    readonly code: keyof typeof STATUS_OF & string,
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
  for (const k of ['field', 'expected', 'found', 'missing', 'reason', 'key', 'digest']) {
    if (e[k] !== undefined && e[k] !== null) out[k] = e[k];
  }
  return out;
}
