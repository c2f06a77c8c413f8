/**
 * Object storage when things go wrong: the faulty and eventually consistent wrappers, the probe
 * that refuses a server without conditional creates, and real servers behind a proxy that drops
 * answers, resets connections and answers 503 SlowDown — the conditional write whose answer was
 * lost must still be recognised as ours (SCALEOUT.md's trap), and credentials never show.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventualObjectStore } from '../../src/objects/eventual-objects.js';
import { FaultyObjectStore } from '../../src/objects/faulty-objects.js';
import { MemoryObjectStore } from '../../src/objects/memory-objects.js';
import { requireConditionalCreate, PROBE_PREFIX } from '../../src/objects/probe.js';
import { MIN_PART_SIZE } from '../../src/objects/object-store.js';
import { S3ObjectStore, multipartEtag } from '../../src/node/s3-objects.js';
import { parseS3Location } from '../../src/node/s3-location.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { freePort, startS3Server, type S3Server, type S3ServerKind } from '../helpers/s3-servers.js';
import { failure } from '../helpers/failure.js';

const text = (s: string) => new TextEncoder().encode(s);
const str = (b: Uint8Array) => new TextDecoder().decode(b);

describe('the faulty wrapper', () => {
  it('a fault before the call changes nothing; one after it changes the store and loses the answer', async () => {
    const inner = new MemoryObjectStore();
    const s = new FaultyObjectStore(inner, [
      { op: 'put', when: 'before' },
      { op: 'create', key: /^log\//, when: 'after' },
    ]);
    expect((await failure(s.put('a', text('x')))).code).toBe('STORAGE_UNREACHABLE');
    expect(await inner.head('a')).toBeUndefined();
    expect((await failure(s.create('log/1', text('mine')))).code).toBe('STORAGE_UNREACHABLE');
    expect(str(await inner.get('log/1'))).toBe('mine');
    // The writer retries, as a commit does: its own earlier write is recognised.
    expect(await s.create('log/1', text('mine'))).toBe(true);
    // Another writer's create of the same name is refused.
    expect(await s.create('log/1', text('theirs'))).toBe(false);
    expect(s.fired).toEqual([
      { op: 'put', key: 'a', when: 'before' },
      { op: 'create', key: 'log/1', when: 'after' },
    ]);
    expect(s.pending).toBe(0);
  });

  it('a chance function breaks calls at random (a random workload)', async () => {
    let i = 0;
    const s = new FaultyObjectStore(new MemoryObjectStore(), [], () => (++i % 3 === 0 ? 'before' : undefined));
    const outcomes = await Promise.all(Array.from({ length: 9 }, (_, k) => s.put(`k${k}`, text('v')).then(() => 'ok', (e: { code: string }) => e.code)));
    expect(outcomes.filter((o) => o === 'STORAGE_UNREACHABLE')).toHaveLength(3);
  });
});

describe('the eventually consistent wrapper', () => {
  it('hides new objects from listings and shows deleted ones until the lag has passed; reads stay consistent', async () => {
    let now = 1_000;
    const s = new EventualObjectStore(new MemoryObjectStore(() => now), 500, () => now);
    await s.put('log/1', text('a'));
    await s.create('log/2', text('b'));
    expect((await s.list('log/')).objects.map((o) => o.key)).toEqual([]);
    expect(str(await s.get('log/2'))).toBe('b');
    now += 500;
    expect((await s.list('log/')).objects.map((o) => o.key)).toEqual(['log/1', 'log/2']);
    await s.delete('log/1');
    expect(await s.head('log/1')).toBeUndefined();
    expect((await s.list('log/')).objects.map((o) => o.key)).toEqual(['log/1', 'log/2']);
    now += 499;
    expect((await s.list('log/')).objects.map((o) => o.key)).toEqual(['log/1', 'log/2']);
    now += 1;
    expect((await s.list('log/')).objects.map((o) => o.key)).toEqual(['log/2']);
    // A listing that misses a commit does not let a second writer take its name.
    await s.create('log/3', text('first'));
    expect((await s.list('log/')).objects.map((o) => o.key)).toEqual(['log/2']);
    expect(await s.create('log/3', text('second'))).toBe(false);
  });
});

describe('the conditional-create probe', () => {
  it('passes a store that enforces conditional creates and leaves nothing behind', async () => {
    const s = new MemoryObjectStore();
    await requireConditionalCreate(s);
    expect((await s.list(PROBE_PREFIX)).objects).toEqual([]);
  });

  it('refuses a store that ignores them (its faulty twin), with STORAGE_UNAVAILABLE and why', async () => {
    class IgnoresCondition extends MemoryObjectStore {
      override async create(key: string, bytes: Uint8Array): Promise<boolean> {
        await this.put(key, bytes);
        return true;
      }
    }
    const s = new IgnoresCondition();
    const e = await failure(requireConditionalCreate(s));
    expect(e.code).toBe('STORAGE_UNAVAILABLE');
    expect(e.message).toMatch(/does not enforce conditional creates.*second create of one key succeeded/);
    expect((await s.list(PROBE_PREFIX)).objects).toEqual([]);
  });
});

describe('S3 locations', () => {
  it('parses s3://bucket[/prefix] and refuses anything else', () => {
    expect(parseS3Location('s3://kura')).toEqual({ bucket: 'kura', prefix: '' });
    expect(parseS3Location('s3://kura/')).toEqual({ bucket: 'kura', prefix: '' });
    expect(parseS3Location('s3://kura-artifacts/team/ci')).toEqual({ bucket: 'kura-artifacts', prefix: 'team/ci/' });
    for (const bad of ['kura', 's3://', 's3://UPPER', 's3://a', 'file:///tmp', 's3://kura/../x', 's3://kura/a b']) {
      expect(() => parseS3Location(bad), bad).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    }
  });
});

for (const kind of ['versitygw', 'minio'] as S3ServerKind[]) {
  describe(`${kind} behind a faulty proxy`, () => {
    let server: S3Server;
    let proxy: FaultProxy;
    let s: S3ObjectStore;
    beforeAll(async () => {
      server = await startS3Server(kind);
      proxy = await startFaultProxy(server.endpoint);
      s = new S3ObjectStore(`s3://${server.bucket}/faults`, { endpoint: proxy.endpoint, credentials: server.credentials });
    });
    afterAll(async () => {
      await s?.close();
      await proxy?.stop();
      await server?.stop();
    });
    const puts = () => proxy.counts.get('PUT') ?? 0;

    it('enforces conditional creates (the probe passes)', async () => {
      await requireConditionalCreate(s);
    });

    it('a conditional create whose answer is lost is recognised as ours when the SDK retries into a 412', async () => {
      proxy.add({ match: (r) => r.method === 'PUT' && r.url.includes('/log/00001') && r.headers['if-none-match'] === '*', action: 'drop-response' });
      const before = puts();
      expect(await s.create('log/00001', text('commit 1 by writer A'))).toBe(true);
      expect(puts() - before).toBeGreaterThanOrEqual(2); // the lost one, then the retry's 412
      expect(str(await s.get('log/00001'))).toBe('commit 1 by writer A');
      // Had another writer won in between, the answer is false.
      proxy.add({ match: (r) => r.method === 'PUT' && r.url.includes('/log/00002'), action: 'drop-response' });
      await s.create('log/00002', text('commit 2 by writer B')).catch(() => undefined);
      expect(await s.create('log/00002', text('commit 2 by writer A'))).toBe(false);
    });

    it("creates go out signed without the SDK's middleware, one request each; an answer other than 200 or 412 sends them again through the SDK", async () => {
      const agents: string[] = [];
      const watch = (r: { method: string; url: string; headers: Record<string, unknown> }) => {
        if (r.method === 'PUT' && r.url.includes('/signed/')) agents.push(String(r.headers['user-agent'] ?? ''));
        return false;
      };
      proxy.add({ match: watch, action: 'reset', times: 1_000 });
      const fresh = new S3ObjectStore(`s3://${server.bucket}/faults`, { endpoint: proxy.endpoint, credentials: server.credentials });
      const before = puts();
      for (let i = 0; i < 5; i++) expect(await fresh.create(`signed/${i}`, text(`commit ${i}`))).toBe(true);
      expect(puts() - before).toBe(5);
      expect(agents).toHaveLength(5);
      expect(agents.filter((a) => a.includes('aws-sdk-js'))).toEqual([]); // (the SDK names itself in every request)
      // The server checked each signature: the objects are there, and the condition held.
      expect(str(await fresh.get('signed/3'))).toBe('commit 3');
      expect(await fresh.create('signed/3', text('another writer'))).toBe(false);
      expect(await fresh.create('signed/3', text('commit 3'))).toBe(true);
      // Its answers' Date sets the clock offset like the SDK's (GC's skew guard).
      expect(Math.abs(fresh.clockOffsetMs()!)).toBeLessThan(5_000);
      // 409 (another conditional write in flight): this path is unsure, the SDK retries it.
      agents.length = 0;
      proxy.add({ match: (r) => r.method === 'PUT' && r.url.includes('/signed/conflict'), action: { status: 409, code: 'ConditionalRequestConflict' } });
      expect(await fresh.create('signed/conflict', text('mine'))).toBe(true);
      expect(agents.map((a) => a.includes('aws-sdk-js'))).toEqual([false, true]);
      expect(str(await fresh.get('signed/conflict'))).toBe('mine');
      await fresh.close();
      // A server that refuses these requests as such (here: credentials it does not know) gets
      // only the SDK's after the first.
      agents.length = 0;
      const wrong = new S3ObjectStore(`s3://${server.bucket}/faults`, { endpoint: proxy.endpoint, credentials: { accessKeyId: 'kuraWRONGaccess', secretAccessKey: 'kuraWRONGsecret-0123456789' }, maxAttempts: 1 });
      expect((await failure(wrong.create('signed/refused-1', text('x')))).code).toBe('STORAGE_UNAVAILABLE');
      expect((await failure(wrong.create('signed/refused-2', text('x')))).code).toBe('STORAGE_UNAVAILABLE');
      await wrong.close();
      expect(agents.map((a) => a.includes('aws-sdk-js'))).toEqual([false, true, true]);
    });

    it("computes a multipart object's etag as the server does (MD5 of the parts' MD5s, dash, count)", async () => {
      const key = 'packs/aa/etag.pack';
      const id = await s.startUpload(key);
      const parts = [
        { partNumber: 1, etag: await s.uploadPart(key, id, 1, new Uint8Array(MIN_PART_SIZE).fill(1)) },
        { partNumber: 2, etag: await s.uploadPart(key, id, 2, text('last part')) },
      ];
      const etag = await s.completeUpload(key, id, parts);
      expect(etag!.replace(/"/g, '')).toBe(multipartEtag(parts).replace(/"/g, ''));
      expect((await s.head(key))!.etag.replace(/"/g, '')).toBe(multipartEtag(parts).replace(/"/g, ''));
    });

    it('a conditional multipart complete whose answer is lost is recognised as ours by its etag', async () => {
      const key = 'packs/aa/lost-complete.pack';
      const id = await s.startUpload(key);
      const a = new Uint8Array(MIN_PART_SIZE).fill(7);
      const p1 = await s.uploadPart(key, id, 1, a);
      const p2 = await s.uploadPart(key, id, 2, text('tail'));
      proxy.add({ match: (r) => r.method === 'POST' && r.url.includes('lost-complete') && r.url.includes('uploadId'), action: 'drop-response' });
      const etag = await s.completeUpload(key, id, [{ partNumber: 1, etag: p1 }, { partNumber: 2, etag: p2 }], { ifAbsent: true });
      expect(etag).toBeTruthy();
      expect((await s.head(key))?.size).toBe(MIN_PART_SIZE + 4);
    });

    it('reset connections and 503 SlowDown are retried; a store that keeps failing is STORAGE_UNREACHABLE without credentials', async () => {
      proxy.add({ match: (r) => r.method === 'PUT' && r.url.includes('/flaky'), action: 'reset' });
      proxy.add({ match: (r) => r.method === 'PUT' && r.url.includes('/flaky'), action: { status: 503, code: 'SlowDown' }, times: 2 });
      const before = puts();
      expect(await s.create('flaky', text('made it'))).toBe(true);
      expect(puts() - before).toBe(4);
      proxy.add({ match: (r) => r.url.includes('/down'), action: { status: 503, code: 'SlowDown' }, times: 100 });
      // Two attempts, not five: the SDK's backoff after SlowDown adds up to seconds.
      const impatient = new S3ObjectStore(`s3://${server.bucket}/faults`, { endpoint: proxy.endpoint, credentials: server.credentials, maxAttempts: 2 });
      const e = await failure(impatient.get('down'));
      await impatient.close();
      expect(e.code).toBe('STORAGE_UNREACHABLE');
      expect(e.message).not.toContain(server.credentials.secretAccessKey);
      expect(e.message).not.toContain(server.credentials.accessKeyId);
    });

    it('serves again after the S3 server restarts', async () => {
      await s.put('before-restart', text('kept'));
      await server.restart();
      expect(str(await s.get('before-restart'))).toBe('kept');
      expect(await s.create('after-restart', text('new'))).toBe(true);
    });

    it('wrong credentials and a missing bucket are STORAGE_UNAVAILABLE, and the message shows no credential', async () => {
      const wrong = { accessKeyId: 'kuraWRONGaccess', secretAccessKey: 'kuraWRONGsecret-0123456789' };
      const bad = new S3ObjectStore(`s3://${server.bucket}/x`, { endpoint: server.endpoint, credentials: wrong });
      const e = await failure(bad.put('k', text('v')));
      await bad.close();
      expect(e.code).toBe('STORAGE_UNAVAILABLE');
      expect(e.message).not.toContain(wrong.secretAccessKey);
      expect(e.message).not.toContain(wrong.accessKeyId);
      const nobucket = new S3ObjectStore('s3://no-such-bucket-here/x', { endpoint: server.endpoint, credentials: server.credentials });
      const e2 = await failure(nobucket.put('k', text('v')));
      await nobucket.close();
      expect(e2.code).toBe('STORAGE_UNAVAILABLE');
      expect(e2.message).not.toContain(server.credentials.secretAccessKey);
    });
  });
}

describe('an S3 endpoint nobody listens on', () => {
  it('is STORAGE_UNREACHABLE after the retries', async () => {
    const port = await freePort();
    const s = new S3ObjectStore('s3://kura/x', { endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 'k'.repeat(8), secretAccessKey: 's'.repeat(16) }, maxAttempts: 2 });
    const e = await failure(s.get('k'));
    await s.close();
    expect(e.code).toBe('STORAGE_UNREACHABLE');
    expect(e.message).not.toContain('s'.repeat(16));
  });
});
