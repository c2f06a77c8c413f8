/** The store's typed errors (codes in docs/ERRORS.md); core's errors are re-exported. */
import { CorruptDataError, InvalidInputError, KuraError } from '@kura/core';

export { KuraError, InvalidInputError, CorruptDataError, InvalidStateError, InternalError } from '@kura/core';
// What ERRORS.md tells a caller to compare errors with, without a dependency on @kura/core of its own.
export { KURA_ERROR_CODES, isKuraError, isKuraErrorCode, type KuraErrorCode, type CorruptionReason } from '@kura/core';

/** A document, chunk, or store that does not exist. */
export class NotFoundError extends KuraError {
  constructor(message: string) {
    super('NOT_FOUND', message);
  }
}

/** Another writer (process, or Store in this process) holds the store. */
export class StoreLockedError extends KuraError {
  constructor(message: string) {
    super('STORE_LOCKED', message);
  }
}

/** The store was written by a newer Kura, or opened with parameters that differ from its own. */
export class FormatMismatchError extends KuraError {
  constructor(
    message: string,
    readonly expected?: string,
    readonly found?: string,
  ) {
    super('FORMAT_MISMATCH', message);
  }
}

/** The operation needs the writer; this store was opened read-only. */
export class ReadOnlyError extends KuraError {
  constructor(operation: string) {
    super('READ_ONLY', `${operation} needs a writable store; this one was opened read-only`);
  }
}

/** No embedding model can be used: missing files, wrong hashes, or a runtime that failed to load it. */
export class ModelUnavailableError extends KuraError {
  constructor(
    message: string,
    readonly model: string,
  ) {
    super('MODEL_UNAVAILABLE', message);
  }
}

/**
 * An encrypted store (FORMAT.md §17) and no key file of it opens with the password given;
 * `reason` \`missing\` when none was given. Nothing was written.
 */
export class WrongPasswordError extends KuraError {
  constructor(
    message: string,
    readonly reason: 'wrong' | 'missing',
  ) {
    super('WRONG_PASSWORD', message);
  }
}

/** The store was closed. */
export class StoreClosedError extends KuraError {
  constructor() {
    super('STORE_CLOSED', 'the store is closed');
  }
}

/** Bytes did not hash to the digest or chunk key the caller said they would. Nothing was stored. */
export class DigestMismatchError extends KuraError {
  constructor(
    message: string,
    readonly expected: string,
    readonly found: string,
  ) {
    super('DIGEST_MISMATCH', message);
  }
}

/** A document was committed from chunk keys, and the store lacks some of them. Nothing was stored. */
export class MissingChunksError extends KuraError {
  constructor(
    readonly missing: string[],
    message = `${missing.length} chunk${missing.length === 1 ? '' : 's'} of the manifest ${missing.length === 1 ? 'is' : 'are'} not in the store`,
  ) {
    super('MISSING_CHUNKS', message);
  }
}

/** The platform lacks the storage the store needs (e.g. a browser without OPFS). */
export class StorageUnavailableError extends KuraError {
  constructor(message: string) {
    super('STORAGE_UNAVAILABLE', message);
  }
}

/**
 * The object storage under the store did not answer, or kept failing (5xx, SlowDown, a reset
 * connection) after the client's retries: a write may or may not have happened, and trying again
 * is safe (objects are created conditionally). HTTP 503.
 */
export class StorageUnreachableError extends KuraError {
  constructor(message: string, options?: ErrorOptions) {
    super('STORAGE_UNREACHABLE', message, options);
  }
}

/**
 * A file that changed while it was read (its size or times moved between its open and the end
 * of the read), put by a caller that asked for such files to be refused (`putFiles`'
 * `refuseChanged`: a watch): its bytes may mix two states the file never had, so nothing of it
 * was committed. Put it again once it is still.
 */
export class SourceChangedError extends InvalidInputError {
  constructor(message = 'the file changed while it was read: not stored (what was read may mix its old and new bytes); put it again once it is still') {
    super(message, 'source');
  }
}

/** The disk under the store is full (ENOSPC, EDQUOT, SQLITE_FULL); the operation did not happen. */
export class StorageFullError extends KuraError {
  constructor(message: string, options?: ErrorOptions) {
    super('STORAGE_FULL', message, options);
  }
}

/** Reading, writing or syncing the store's files failed: the OS reported an I/O error. */
export class IoError extends KuraError {
  constructor(message: string, options?: ErrorOptions) {
    super('IO_ERROR', message, options);
  }
}

/**
 * A storage failure as a typed error: SQLite's I/O and disk-full results (`SQLITE_IOERR_*`,
 * `SQLITE_FULL`), the OS's `EIO`, `ENOSPC`, `EDQUOT`, and a database SQLite finds malformed
 * (`SQLITE_CORRUPT*`, `SQLITE_NOTADB`: CORRUPT_DATA, reason `database`), with the original as
 * `cause`. Any other error is returned as it is. `file` names what failed in the message (only
 * where no remote client sees it: the server answers with these messages).
 */
export function storageError(e: unknown, file?: string): unknown {
  if (!(e instanceof Error) || e instanceof KuraError) return e;
  // A reader (a document, a stream) used after its store closed its database: better-sqlite3's
  // own TypeError before (a library trial); any call made after close() is STORE_CLOSED already.
  if (e instanceof TypeError && e.message === 'The database connection is not open') return new StoreClosedError();
  // A browser origin past its quota (OPFS writes): a full disk to the caller, as in Node (it was
  // the DOMException itself, `code` 22: a browser trial).
  if (e.name === 'QuotaExceededError') return new StorageFullError(`${file ? `${file}: ` : ''}the browser's storage for this site is full (its quota): ${e.message}`, { cause: e });
  // (sqlite-wasm's own errors — opening a file that is not a database — carry the code in
  // their message only: `SQLITE_NOTADB: sqlite3 result code 26: …`.)
  const code = (e as { code?: unknown }).code ?? (e.name === 'SQLite3Error' ? /^(SQLITE_[A-Z_]+):/.exec(e.message)?.[1] : undefined);
  if (typeof code !== 'string') return e;
  const at = file ? `${file}: ` : '';
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') {
    return new StorageFullError(`${at}the disk under the store is full (${code}): ${e.message}`, { cause: e });
  }
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO') return new IoError(`${at}storage I/O error (${code}): ${e.message}`, { cause: e });
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
    return new CorruptDataError(`${at}the store's database is damaged (${code}): ${e.message}; a rebuild makes it again from the store's log (kura rebuild; in a browser, BrowserStore.rebuild)`, 'database', {}, { cause: e });
  }
  return e;
}

/**
 * A digest-addressed change names content that several entries show (decision 0025): which
 * entry was meant is the caller's to say. Nothing changed.
 */
export class AmbiguousError extends KuraError {
  /** When a digest named an entry: paths of the entries that show the document (the first few). */
  readonly paths?: string[];
  /** When a prefix named a snapshot: ids of the snapshots it names (the first few). */
  readonly snapshots?: string[];

  constructor(message: string, candidates: { paths: string[] } | { snapshots: string[] }) {
    super('AMBIGUOUS', message);
    if ('paths' in candidates) this.paths = candidates.paths;
    else this.snapshots = candidates.snapshots;
  }
}
