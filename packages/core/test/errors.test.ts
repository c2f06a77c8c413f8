/**
 * isKuraError recognises Kura's errors from any copy of this package: the bundled `kura`
 * command and the HTTP server it loads for `kura serve` each have their own.
 */
import { describe, expect, it } from 'vitest';
import { CorruptDataError, InvalidInputError, KuraError, isKuraError } from '../src/errors.js';

describe('isKuraError', () => {
  it('is true for every KuraError and its subclasses, false for other values', () => {
    expect(isKuraError(new KuraError('NOT_FOUND', 'x'))).toBe(true);
    expect(isKuraError(new InvalidInputError('bad', 'field'))).toBe(true);
    expect(isKuraError(new CorruptDataError('damaged', 'corrupt-frame'))).toBe(true);
    const errno = Object.assign(new Error('no such file'), { code: 'ENOENT' });
    const lookalike = Object.assign(new Error('x'), { code: 'NOT_FOUND', name: 'KuraError' });
    for (const v of [errno, lookalike, new Error('x'), null, undefined, 'KuraError', { code: 'NOT_FOUND' }]) expect(isKuraError(v)).toBe(false);
  });

  it('is true for a KuraError made by another copy of the module, which instanceof misses', async () => {
    // A second copy: the module evaluated again under another URL.
    const other = (await import('../src/errors.js?copy')) as typeof import('../src/errors.js');
    const foreign = new other.KuraError('STORE_LOCKED', 'locked');
    expect(foreign instanceof KuraError).toBe(false);
    expect(isKuraError(foreign)).toBe(true);
    expect(other.isKuraError(new KuraError('NOT_FOUND', 'x'))).toBe(true);
  });
});
