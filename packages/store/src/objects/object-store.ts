/**
 * The object-storage contract (decision 0039): what a store on S3-compatible storage needs from
 * where its objects live, and nothing more. Implementations: memory (objects/memory-objects.ts),
 * a local directory (node/dir-objects.ts), S3 through @aws-sdk/client-s3 (node/s3-objects.ts);
 * the faulty and eventually consistent wrappers (objects/faulty-objects.ts,
 * objects/eventual-objects.ts) break it on purpose for tests. test/objects/conformance.ts holds
 * every implementation to the rules below.
 *
 * Contract:
 * - Keys are 1-1024 bytes of `[A-Za-z0-9._-]` segments joined by `/`; no segment is empty or
 *   starts with `.`. A key is never also the folder of another key (`a` and `a/b`): a local
 *   directory cannot hold both, and Kura's layout never needs it. Other keys are refused with
 *   INVALID_INPUT (field `key`) before anything is sent.
 * - Reads after writes are consistent: once `put`, `create`, `replace` or `completeUpload`
 *   resolves, `get`, `head` and `list` (from any client) see the new object, and after `delete`
 *   resolves they do not (S3 since 2020, versitygw and MinIO give this; the eventually
 *   consistent wrapper does not, to test callers that must not rely on it for listings).
 * - `get` answers the whole object, or with a range the bytes of it that exist in the range
 *   (fewer when the object ends first, none when it ends before the range starts); an absent key
 *   throws NOT_FOUND.
 * - `create` writes the object only if the key is free (S3 `If-None-Match: *`) and answers true
 *   when the key holds exactly these bytes afterwards: written by this call, or by an earlier
 *   attempt of it whose answer was lost (the SDK's own retry then meets a 412 for a write that
 *   succeeded: SCALEOUT.md). False: the key holds other bytes. Callers make objects whose bytes
 *   name their writer (a commit carries its writer's nonce) or their content (a pack), so equal
 *   bytes always mean the same write. An object is never visible torn under its key.
 * - `replace` writes only if the object's etag is still `etag` (S3 `If-Match`) and answers the
 *   new etag, or undefined when the object changed or is gone.
 * - `list` answers up to `limit` objects (at most 1000) whose keys start with `prefix` and sort
 *   after `startAfter`, in ascending byte order, and whether more follow.
 * - Multipart: parts numbered 1-10000; every part but the last is at least 5 MiB (S3's rule);
 *   `completeUpload` with `ifAbsent` behaves as `create` does for the parts' concatenation.
 * - Failures: NOT_FOUND as above; INVALID_INPUT for a refused key or range; STORAGE_UNREACHABLE
 *   when the storage did not answer or kept answering 5xx after retries (the write may or may not
 *   have happened: conditional writes make a retry safe); STORAGE_UNAVAILABLE when it refuses
 *   the credentials or lacks the bucket. Messages never contain credentials.
 */
import { InvalidInputError } from '../errors.js';

/** An object as a listing or `head` describes it. */
export interface ObjectInfo {
  key: string;
  size: number;
  /** Changes whenever the object is written (S3's ETag; quotes and all, as the server sends it). */
  etag: string;
  /** When it was last written, in ms since the epoch by the storage's clock (S3's Last-Modified; seconds at least). */
  modified: number;
}

export interface ByteRange {
  offset: number;
  length: number;
}

export interface ListOptions {
  /** Only keys after this one (S3's StartAfter). */
  startAfter?: string;
  /** At most this many (1-1000; 1000 when not given). */
  limit?: number;
}

export interface ListPage {
  objects: ObjectInfo[];
  /** More keys follow: list again after the last one. */
  more: boolean;
}

export interface UploadedPart {
  partNumber: number;
  etag: string;
}

/**
 * A writer's `bytes` are the caller's again once its promise settles (pack buffers are reused,
 * bytes/object-packs.ts): an implementation that keeps them longer keeps a copy.
 */
export interface ObjectStore {
  /** Where the objects live, for messages and `kura stats` (never credentials): `s3://bucket/prefix`, a path, `memory:`. */
  readonly location: string;
  get(key: string, range?: ByteRange): Promise<Uint8Array>;
  /** The object's description, or undefined when the key is free. */
  head(key: string): Promise<ObjectInfo | undefined>;
  /** Writes the object whatever the key held; answers its etag. */
  put(key: string, bytes: Uint8Array): Promise<string>;
  create(key: string, bytes: Uint8Array): Promise<boolean>;
  replace(key: string, bytes: Uint8Array, etag: string): Promise<string | undefined>;
  /** Removes the object; a free key is not an error. */
  delete(key: string): Promise<void>;
  list(prefix: string, options?: ListOptions): Promise<ListPage>;
  startUpload(key: string): Promise<string>;
  uploadPart(key: string, uploadId: string, partNumber: number, bytes: Uint8Array): Promise<string>;
  /** Answers as `put` (the etag) or, with `ifAbsent`, as `create` does (the etag, or undefined when the key holds other bytes). */
  completeUpload(key: string, uploadId: string, parts: readonly UploadedPart[], options?: { ifAbsent?: boolean }): Promise<string | undefined>;
  abortUpload(key: string, uploadId: string): Promise<void>;
  /**
   * How far the storage's clock is ahead of this process's (ms), by its newest answer;
   * undefined before one, or where both share one clock (a local directory).
   */
  clockOffsetMs?(): number | undefined;
  /** Lets go of connections and timers. */
  close(): Promise<void>;
}

/** S3's part rules (and the largest single object this contract asks a store to take in one put). */
export const MIN_PART_SIZE = 5 * 1024 * 1024;
export const MAX_PARTS = 10_000;
export const MAX_LIST = 1000;

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/** Refuses a key the contract does not allow (INVALID_INPUT, field `key`). */
export function checkKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > 1024 || !key.split('/').every((s) => SEGMENT.test(s))) {
    throw new InvalidInputError(`an object key is 1-1024 characters of [A-Za-z0-9._-] segments joined by "/", none empty or starting with "."; not ${JSON.stringify(key)}`, 'key');
  }
}

/** A listing's prefix: a key's beginning (it may end in "/" or part-way through a segment), or "". */
export function checkPrefix(prefix: string): void {
  if (prefix === '') return;
  checkKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
}

export function checkRange(range: ByteRange | undefined): void {
  if (range === undefined) return;
  if (!Number.isSafeInteger(range.offset) || range.offset < 0 || !Number.isSafeInteger(range.length) || range.length < 1) {
    throw new InvalidInputError(`a byte range is a non-negative offset and a positive length, not ${JSON.stringify(range)}`, 'range');
  }
}

export function checkLimit(limit: number | undefined): number {
  if (limit === undefined) return MAX_LIST;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST) throw new InvalidInputError(`a listing's limit is 1-${MAX_LIST}, not ${limit}`, 'limit');
  return limit;
}

export function checkPart(partNumber: number): void {
  if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PARTS) {
    throw new InvalidInputError(`a part number is 1-${MAX_PARTS}, not ${partNumber}`, 'partNumber');
  }
}

/** Every object under `prefix` after `startAfter`, page by page. */
export async function* listAll(store: ObjectStore, prefix: string, startAfter?: string): AsyncGenerator<ObjectInfo> {
  let after = startAfter;
  for (;;) {
    const page = await store.list(prefix, after === undefined ? {} : { startAfter: after });
    yield* page.objects;
    if (!page.more || page.objects.length === 0) return;
    after = page.objects[page.objects.length - 1]!.key;
  }
}

/** Whether an error is the contract's NOT_FOUND (by code: it may come from another thread's copy of the class). */
export function isNotFound(e: unknown): boolean {
  return (e as { code?: unknown })?.code === 'NOT_FOUND';
}

/** Whether two byte arrays hold the same bytes. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
