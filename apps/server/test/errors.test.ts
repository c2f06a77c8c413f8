/** The error catalog's mapping of storage failures (the fault-injection tests provoke them for real in the store). */
import { describe, expect, it } from 'vitest';
import { IoError, StorageFullError } from '@kura/store';
import { mapError } from '../src/plugins/errors.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('storage failures over HTTP', () => {
  it('a full disk is 507 STORAGE_FULL, an I/O error 500 IO_ERROR, from SQLite and from the OS alike', () => {
    for (const e of [withCode('SQLITE_FULL', 'database or disk is full'), withCode('ENOSPC'), withCode('EDQUOT'), new StorageFullError('full')]) {
      expect(mapError(e)).toMatchObject({ status: 507, code: 'STORAGE_FULL' });
    }
    for (const e of [withCode('SQLITE_IOERR_WRITE', 'disk I/O error'), withCode('SQLITE_IOERR_FSYNC'), withCode('EIO'), new IoError('eio')]) {
      expect(mapError(e)).toMatchObject({ status: 500, code: 'IO_ERROR' });
    }
  });

  it('other errors without a catalog code stay INTERNAL with no detail', () => {
    for (const e of [withCode('SQLITE_CONSTRAINT_UNIQUE', 'UNIQUE constraint failed: secret_table'), withCode('EACCES'), new Error('boom')]) {
      expect(mapError(e)).toMatchObject({ status: 500, code: 'INTERNAL', message: 'internal error' });
    }
  });
});
