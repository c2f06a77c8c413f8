/**
 * Resumable uploads on a store in a bucket (decision 0042): staged in the bucket, so each
 * request of an upload may reach a different server. Three servers in this process, each with
 * its own cache directory, on one versitygw.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store, listAll, openObjectLocation } from '@kura/store';
import { randomBytes } from '../../../packages/core/test/helpers/data.js';
import { startS3Server, type S3Server } from '../../../packages/store/test/helpers/s3-servers.js';
import { startFaultProxy } from '../../../packages/store/test/helpers/fault-proxy.js';
import { PIECE_BYTES } from '../src/uploads/object-staging.js';
import { call, closeAll, errorCode, startServer, type TestServer } from './helpers/server.js';

const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

let s3: S3Server;
const root = mkdtempSync(join(tmpdir(), 'kura-uploads-s3-'));
let prefixes = 0;

beforeAll(async () => {
  s3 = await startS3Server('versitygw');
  // The servers reach the bucket the way `kura serve` does: from the environment.
  process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
  process.env.AWS_ENDPOINT_URL_S3 = s3.endpoint;
}, 60_000);

afterAll(async () => {
  await closeAll();
  await s3?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** `n` servers on a fresh store in the bucket, each with a cache directory of its own. */
async function servers(n: number, config: { uploadTtlMs?: number } = {}): Promise<{ location: string; servers: TestServer[] }> {
  const location = `s3://${s3.bucket}/uploads-${++prefixes}`;
  const out: TestServer[] = [];
  for (let i = 0; i < n; i++) {
    const cacheDir = mkdtempSync(join(root, 'cache-'));
    const store = i === 0 ? await Store.init(location, { cacheDir }) : await Store.open(location, { cacheDir });
    const s = await startServer({ store: location, ...config }, { store });
    const close = s.close;
    s.close = async () => {
      await close();
      await store.close();
    };
    out.push(s);
  }
  return { location, servers: out };
}

async function stagedKeys(location: string): Promise<string[]> {
  const objects = await openObjectLocation(location);
  const keys: string[] = [];
  for await (const o of listAll(objects, 'uploads/')) keys.push(o.key);
  await objects.close();
  return keys;
}

describe('resumable uploads on a store in a bucket', () => {
  it('each request of an upload may reach another server: appends, offsets, rollbacks and the finish agree', { timeout: 60_000 }, async () => {
    const { location, servers: [a, b, c] } = await servers(3);
    const data = randomBytes(11, 3_000_000 + PIECE_BYTES + 500_000);
    const start = await call(a!.url, 'POST', '/v1/uploads');
    expect(start.status).toBe(202);
    const loc = start.headers.location as string;
    const id = loc.split('/').at(-1)!;
    expect((await call(b!.url, 'PATCH', loc, { body: data.subarray(0, 3_000_000), headers: { 'content-range': 'bytes 0-2999999/*' } })).status).toBe(202);
    // More than a piece in one request: staged as two pieces.
    const big = await call(c!.url, 'PATCH', loc, { body: data.subarray(3_000_000, 3_000_000 + PIECE_BYTES + 100_000) });
    expect(big.status).toBe(202);
    const at = 3_000_000 + PIECE_BYTES + 100_000;
    expect(big.headers['x-kura-upload-offset']).toBe(String(at));
    expect((await call(a!.url, 'HEAD', loc)).headers['x-kura-upload-offset']).toBe(String(at));
    expect((await stagedKeys(location)).filter((k) => k.startsWith(`uploads/${id}/p`)).length).toBe(3);
    // A stale offset on another server: 416 with the real one.
    const stale = await call(b!.url, 'PATCH', loc, { body: 'x', headers: { 'content-range': 'bytes 3000000-3000000/*' } });
    expect(stale.status).toBe(416);
    expect(stale.json.error.offset).toBe(at);
    // A body shorter than its range: rolled back, on every server.
    const short = await call(c!.url, 'PATCH', loc, { body: data.subarray(at, at + 10), headers: { 'content-range': `bytes ${at}-${at + 99}/*` } });
    expect(short.status).toBe(400);
    expect((await call(a!.url, 'GET', loc)).json.offset).toBe(at);
    // A wrong digest stores nothing and leaves the upload as it was, its finishing body too.
    expect(errorCode(await call(a!.url, 'PUT', `${loc}?digest=${sha(data.subarray(1))}`, { body: data.subarray(at, at + 1000) }))).toBe('DIGEST_MISMATCH');
    expect((await call(b!.url, 'GET', loc)).json.offset).toBe(at);
    const done = await call(b!.url, 'PUT', `${loc}?digest=${sha(data)}&path=big/upload.bin`, { body: data.subarray(at) });
    expect(done.status).toBe(201);
    expect(done.json.digest).toBe(sha(data));
    const got = await call(c!.url, 'GET', '/v1/paths/big/upload.bin', { headers: { 'x-kura-fresh': '1' } });
    expect(got.status).toBe(200);
    expect(sha(got.body)).toBe(sha(data));
    for (const s of [a, b, c]) expect(errorCode(await call(s!.url, 'GET', loc))).toBe('NOT_FOUND');
    expect(await stagedKeys(location)).toEqual([]);
    // Cancelled on one server: gone for the others.
    const other = (await call(c!.url, 'POST', '/v1/uploads')).headers.location as string;
    await call(c!.url, 'PATCH', other, { body: 'abc' });
    expect((await call(a!.url, 'DELETE', other)).status).toBe(204);
    expect(errorCode(await call(b!.url, 'PATCH', other, { body: 'x' }))).toBe('NOT_FOUND');
  });

  it('two servers appending at one offset: the second to finish its body gets UPLOAD_BUSY, and the first one\'s bytes stay', { timeout: 30_000 }, async () => {
    const { servers: [a, b] } = await servers(2);
    const loc = (await call(a!.url, 'POST', '/v1/uploads')).headers.location as string;
    const slow = new PassThrough();
    const first = request(`${a!.url}${loc}`, { method: 'PATCH', body: slow });
    slow.write(Buffer.alloc(1000, 1));
    await new Promise((r) => setTimeout(r, 200));
    expect((await call(b!.url, 'PATCH', loc, { body: 'quick' })).status).toBe(202);
    slow.end(Buffer.alloc(1000, 2));
    const res = await first;
    const body = JSON.parse(await res.body.text());
    expect(res.statusCode).toBe(409);
    expect(body.error.code).toBe('UPLOAD_BUSY');
    expect((await call(a!.url, 'GET', loc)).json.offset).toBe(5);
  });

  it('a client that goes away mid-body keeps what arrived, for a request on another server to resume from', { timeout: 30_000 }, async () => {
    const { servers: [a, b] } = await servers(2);
    const loc = (await call(a!.url, 'POST', '/v1/uploads')).headers.location as string;
    const sock = connect(Number(new URL(a!.url).port), '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    sock.write(`PATCH ${loc} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nhello`);
    await new Promise((r) => setTimeout(r, 200));
    sock.destroy();
    let offset = 0;
    for (let i = 0; i < 50 && offset !== 5; i++) {
      await new Promise((r) => setTimeout(r, 100));
      offset = (await call(b!.url, 'GET', loc)).json.offset;
    }
    expect(offset).toBe(5);
    expect((await call(b!.url, 'PATCH', loc, { body: ' world', headers: { 'content-range': '5-10' } })).status).toBe(202);
    const done = await call(a!.url, 'PUT', `${loc}?digest=${sha(new TextEncoder().encode('hello world'))}`);
    expect(done.status).toBe(201);
  });

  it('uploads untouched for the TTL expire and are swept from the bucket', { timeout: 30_000 }, async () => {
    // (LastModified has whole seconds: a TTL under one could expire an upload as it starts.)
    const { location, servers: [a] } = await servers(1, { uploadTtlMs: 1500 });
    const loc = (await call(a!.url, 'POST', '/v1/uploads')).headers.location as string;
    await call(a!.url, 'PATCH', loc, { body: 'abc' });
    expect((await call(a!.url, 'GET', loc)).json.offset).toBe(3);
    await new Promise((r) => setTimeout(r, 2600));
    expect(errorCode(await call(a!.url, 'GET', loc))).toBe('NOT_FOUND');
    let keys = await stagedKeys(location);
    for (let i = 0; i < 30 && keys.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      keys = await stagedKeys(location);
    }
    expect(keys).toEqual([]);
  });
});

describe('an object store that refuses the running server', () => {
  it('is 503 STORAGE_UNAVAILABLE saying an operator must act, not 500 "internal error" (credentials rotated: a trial); puts go through again once it accepts them', { timeout: 60_000 }, async () => {
    let refusing = false;
    const proxy = await startFaultProxy(s3.endpoint, (r) => (refusing && r.method === 'PUT' ? { status: 403, code: 'SignatureDoesNotMatch' } : undefined));
    const endpoint = process.env.AWS_ENDPOINT_URL_S3;
    process.env.AWS_ENDPOINT_URL_S3 = proxy.endpoint;
    try {
      const location = `s3://${s3.bucket}/refused-${++prefixes}`;
      const store = await Store.init(location, { cacheDir: mkdtempSync(join(root, 'cache-')) });
      const s = await startServer({ store: location }, { store });
      try {
        refusing = true;
        const refused = await call(s.url, 'POST', '/v1/documents?path=r.txt', { body: 'refused' });
        expect(refused.status).toBe(503);
        expect(refused.json.error).toMatchObject({ code: 'STORAGE_UNAVAILABLE', message: expect.stringMatching(/an operator must act/) });
        expect(refused.json.error.message).not.toContain(s3.bucket); // (the log has it, not every client)
        refusing = false;
        expect((await call(s.url, 'POST', '/v1/documents?path=r.txt', { body: 'accepted' })).status).toBe(201);
      } finally {
        await s.close();
        await store.close();
      }
    } finally {
      process.env.AWS_ENDPOINT_URL_S3 = endpoint;
      await proxy.stop();
    }
  });
});
