/**
 * Where resumable uploads wait for their last byte (routes/uploads.ts). A store in a directory
 * stages them on this server's disk (file-staging.ts); a store on object storage stages them in
 * its bucket (object-staging.ts, decision 0042), so a client's requests may land on any server.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { PutInput } from '@kura/store';
import { HttpError } from '../errors.js';

/**
 * An upload's id, bound to the token that started it: 12 random bytes, then 4 of the SHA-256
 * of them and the token's name. Another token's requests for it are NOT_FOUND, as for an id
 * that never was: upload ids go into logs (URLs), and any write token that saw one could read
 * another's private bytes by finishing its upload at a path of its own (a trial).
 */
export function newUploadId(owner: string | undefined): string {
  const random = randomBytes(12).toString('hex');
  return `${random}${ownerTag(random, owner)}`;
}

/** Whether `id` is an upload `owner` started (no token: every upload is the one client's). */
export function ownsUpload(id: string, owner: string | undefined): boolean {
  return UPLOAD_ID.test(id) && id.slice(24) === ownerTag(id.slice(0, 24), owner);
}

const ownerTag = (random: string, owner: string | undefined) => createHash('sha256').update(`${random}\0${owner ?? ''}`).digest('hex').slice(0, 8);

/** Upload ids: 32 hex digits (newUploadId). */
export const UPLOAD_ID = /^[0-9a-f]{32}$/;

export function uploadNotFound(): HttpError {
  return new HttpError('NOT_FOUND', 'no such upload (finished, cancelled or expired)');
}

export function uploadBusy(): HttpError {
  return new HttpError('UPLOAD_BUSY', 'another request is writing to this upload; retry when it is done');
}

export function lengthMismatch(expected: number, got: number): HttpError {
  return new HttpError('INVALID_INPUT', `Content-Range announced ${expected} bytes; the body had ${got}`, { field: 'content-range' });
}

/** One upload, held by one request (UploadStaging.exclusive). */
export interface StagedUpload {
  /** Bytes staged when the request took the upload. */
  readonly offset: number;
  /**
   * Appends a body at the end; answers the new offset. What arrived stays when the client goes
   * away mid-body (resuming continues from there); a body that breaks a rule (too large,
   * shorter than its Content-Range said) is rolled back.
   */
  append(body: AsyncIterable<Uint8Array>, expectLength: number | undefined): Promise<number>;
  /** The staged bytes, for the store's put. */
  bytes(): PutInput;
  /** The first `n` bytes (or fewer), for detecting the media type. */
  head(n: number): Promise<Uint8Array>;
  /** Back to `offset`: what this request appended goes. */
  rollback(): Promise<void>;
}

export interface UploadStaging {
  /** Starts upload `id` (newUploadId). */
  create(id: string): Promise<void>;
  /** Bytes received so far, and when the upload expires; NOT_FOUND for unknown or expired ids. */
  offset(id: string): Promise<{ offset: number; expiresAt: Date }>;
  /**
   * Runs `work` with the upload to itself: one request at a time per upload on this server
   * (another is UPLOAD_BUSY); across servers, appends at one offset are created only once.
   */
  exclusive<T>(id: string, work: (upload: StagedUpload) => Promise<T>): Promise<T>;
  remove(id: string): Promise<void>;
  /** Deletes uploads untouched for the TTL (never one a request here is writing); answers how many. */
  sweep(now?: number): Promise<number>;
  close(): Promise<void>;
}

/** Runs `sweep` every quarter of the TTL (a minute at most); the timer never keeps the process alive. */
export function sweepEvery(ttlMs: number, sweep: () => Promise<unknown>): NodeJS.Timeout {
  const timer = setInterval(() => void sweep().catch(() => undefined), Math.min(ttlMs / 4, 60_000));
  timer.unref();
  return timer;
}

/** The uploads requests of this server are writing to (one at a time each). */
export class BusyUploads {
  readonly #busy = new Set<string>();

  has(id: string): boolean {
    return this.#busy.has(id);
  }

  async hold<T>(id: string, work: () => Promise<T>): Promise<T> {
    if (this.#busy.has(id)) throw uploadBusy();
    this.#busy.add(id);
    try {
      return await work();
    } finally {
      this.#busy.delete(id);
    }
  }
}

/**
 * `Content-Range` of a PATCH: `bytes <first>-<last>/<total|*>` (RFC 9110) or `<first>-<last>`
 * (OCI distribution). Returns the first byte and the body length it announces.
 */
export function parseContentRange(header: string | undefined): { start: number; length: number } | undefined {
  if (header === undefined) return undefined;
  const m = /^\s*(?:bytes\s+)?(\d+)-(\d+)(?:\/(\d+|\*))?\s*$/i.exec(header);
  if (!m) throw new HttpError('INVALID_INPUT', 'Content-Range must be "bytes <first>-<last>/<total|*>" or "<first>-<last>"', { field: 'content-range' });
  const start = Number(m[1]);
  const last = Number(m[2]);
  const total = m[3] === undefined || m[3] === '*' ? undefined : Number(m[3]);
  const bad = (why: string) => new HttpError('INVALID_INPUT', `Content-Range: ${why}`, { field: 'content-range' });
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(last) || (total !== undefined && !Number.isSafeInteger(total))) throw bad('a position past 2^53');
  if (last < start) throw bad('last byte before first');
  // RFC 9110 §14.4: a complete length at or below the last position is invalid.
  if (total !== undefined && last >= total) throw bad(`last byte ${last} is past the total of ${total} bytes`);
  return { start, length: last - start + 1 };
}
