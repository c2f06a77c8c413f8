/** The store's typed errors (codes in docs/ERRORS.md); core's errors are re-exported. */
import { KuraError } from '@kura/core';

export { KuraError, InvalidInputError, CorruptDataError, InvalidStateError, InternalError } from '@kura/core';

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
  constructor(readonly missing: string[]) {
    super('MISSING_CHUNKS', `${missing.length} chunk${missing.length === 1 ? '' : 's'} of the manifest ${missing.length === 1 ? 'is' : 'are'} not in the store`);
  }
}

/** The platform lacks the storage the store needs (e.g. a browser without OPFS). */
export class StorageUnavailableError extends KuraError {
  constructor(message: string) {
    super('STORAGE_UNAVAILABLE', message);
  }
}
