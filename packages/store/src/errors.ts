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
