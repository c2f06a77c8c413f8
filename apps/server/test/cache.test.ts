import { afterAll, describe, expect, it } from 'vitest';
import { randomBytes } from '../../../packages/core/test/helpers/data.js';
import { BytesCache } from '../src/http/cache.js';
import { call, closeAll, errorCode, startServer } from './helpers/server.js';

afterAll(closeAll);

describe('the cache of small documents', () => {
  it('evicts least recently used entries to stay within its budget; skips large ones', () => {
    const c = new BytesCache(3000, 1500);
    const b = (n: number) => Buffer.alloc(n);
    c.set('a', b(1000));
    c.set('b', b(1000));
    c.set('c', b(1000));
    expect(c.get('a')).toBeDefined(); // a is now the most recent
    c.set('d', b(1000)); // evicts b
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a') && c.get('c') && c.get('d')).toBeTruthy();
    expect(c.size).toEqual({ entries: 3, bytes: 3000 });
    c.set('big', b(1501));
    expect(c.get('big')).toBeUndefined();
    c.delete('a');
    expect(c.size.bytes).toBe(2000);
    const off = new BytesCache(0, 1500);
    off.set('x', b(10));
    expect(off.get('x')).toBeUndefined();
  });

  it('never serves a deleted document, nor bytes that were not checked', async () => {
    const s = await startServer();
    const data = randomBytes(1, 5000);
    const d = (await call(s.url, 'POST', '/v1/documents?path=x.bin', { body: data })).json.digest;
    expect((await call(s.url, 'GET', `/v1/documents/${d}`)).body.equals(Buffer.from(data))).toBe(true);
    expect(s.app.bytesCache.size.entries).toBe(1);
    expect((await call(s.url, 'DELETE', `/v1/documents/${d}`)).status).toBe(204);
    expect(s.app.bytesCache.size.entries).toBe(0);
    expect(errorCode(await call(s.url, 'GET', `/v1/documents/${d}`))).toBe('NOT_FOUND');
    expect(errorCode(await call(s.url, 'GET', '/v1/paths/x.bin'))).toBe('NOT_FOUND');
    // Deleted by another route (the store directly): the lookup before the cache still says 404.
    const d2 = (await call(s.url, 'POST', '/v1/documents', { body: data.subarray(1) })).json.digest;
    await call(s.url, 'GET', `/v1/documents/${d2}`);
    await s.app.store.delete(d2);
    expect(errorCode(await call(s.url, 'GET', `/v1/documents/${d2}`))).toBe('NOT_FOUND');
  });
});
