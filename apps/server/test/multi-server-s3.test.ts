/**
 * Several servers on one bucket (issue 21): three `kura-server` processes on loopback, each
 * reaching one versitygw through its own fault-injecting proxy (lost answers to commits, reset
 * connections, 503 SlowDown; and versitygw restarts half way), take a bounded random workload over HTTP — puts of the same and
 * different bytes to the same and different paths, tags, metadata, deletes, version reads,
 * snapshots made and deleted, and GC on any server (a margin of half a second: chunks and pack objects really go while
 * the other servers read and write; decision 0041). Afterwards every server refreshes; their
 * catalogs are identical row for row (one of them made anew: its cache directory was deleted
 * while it was stopped); every acknowledged put of a path nobody deleted reads back from every
 * server with its bytes; verify is clean on each; the log has no gaps.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../../packages/store/src/node/s3-objects.js';
import { listAll } from '../../../packages/store/src/objects/object-store.js';
import { canonicalDump } from '../../../packages/store/test/helpers/dump.js';
import { startFaultProxy, type FaultProxy } from '../../../packages/store/test/helpers/fault-proxy.js';
import { startS3Server, type S3Server } from '../../../packages/store/test/helpers/s3-servers.js';
import { rng } from '../../../packages/store/test/helpers/random.js';
import { spawnServer, stopAll, type ServerProcess } from './helpers/process.js';

const OPS = Number(process.env.KURA_MULTI_OPS ?? 240);
const SERVERS = 3;
const GC_MARGIN_MS = 500;

describe('three servers on one bucket, each through a faulty proxy', () => {
  let s3: S3Server;
  const proxies: FaultProxy[] = [];
  const servers: ServerProcess[] = [];
  const root = mkdtempSync(join(tmpdir(), 'kura-multi-'));
  const location = () => `s3://${s3.bucket}/multi`;
  const settings = (i: number) => ({
    KURA_STORE: location(),
    KURA_NO_AUTH: '1',
    KURA_CACHE: join(root, `cache-${i}`),
    AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
    AWS_ENDPOINT_URL_S3: proxies[i]!.endpoint,
    KURA_GC_MARGIN_MS: String(GC_MARGIN_MS),
  });
  const cacheDb = (i: number) => join(root, `cache-${i}`, 'stores', createHash('sha256').update(location()).digest('hex').slice(0, 16), 'kura.db');

  beforeAll(async () => {
    s3 = await startS3Server('versitygw');
    for (let i = 0; i < SERVERS; i++) {
      const random = rng(1000 + i);
      proxies.push(
        await startFaultProxy(s3.endpoint, (r) => {
          const x = random();
          if (r.method === 'PUT' && r.headers['if-none-match'] === '*' && r.url.includes('/log/') && x < 0.06) return 'drop-response';
          if (r.method === 'GET' && x < 0.03) return 'reset';
          if (x > 0.98) return { status: 503, code: 'SlowDown' };
          return undefined;
        }),
      );
    }
    // The first creates the store; the others open it.
    for (let i = 0; i < SERVERS; i++) servers.push(await spawnServer(settings(i)));
  }, 120_000);

  afterAll(async () => {
    await stopAll();
    await Promise.all(proxies.map((p) => p.stop()));
    await s3?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('agree on everything after a random workload with faults', { timeout: 300_000 }, async () => {
    const random = rng(42);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const shared = Array.from({ length: 6 }, (_, i) => `shared body ${i}\n`.repeat(20 + i));
    const acked = new Map<string, string>(); // digest -> body, of puts to keep/ paths
    const counts = { put: 0, putFailed: 0, patch: 0, deleted: 0, read: 0, gc: 0, gcRefused: 0, snapshot: 0, snapshotDeleted: 0 };
    const snapshotIds: string[] = [];
    const freed = { chunksRemoved: 0, packsDeleted: 0, packsCompacted: 0 };
    const gc = async (s: ServerProcess) => {
      const res = await fetch(`${s.url}/v1/gc`, { method: 'POST' });
      const body = await res.text();
      // 503: another server holds the lease (STORE_LOCKED), or the storage kept failing.
      expect([200, 503], body).toContain(res.status);
      if (res.status !== 200) return void counts.gcRefused++;
      counts.gc++;
      const r = JSON.parse(body) as typeof freed;
      for (const k of Object.keys(freed) as (keyof typeof freed)[]) freed[k] += r[k];
    };
    /** Per kept path: puts acknowledged, and puts that failed (which may or may not have landed). */
    const perPath = new Map<string, { acked: number; failed: number }>();
    const fresh = { 'x-kura-fresh': '1' };
    const op = async (n: number) => {
      // Half way, the S3 server restarts under the requests in flight (they fail with 503 or go through).
      if (n === Math.floor(OPS / 2)) await s3.restart();
      const s = servers[n % SERVERS]!;
      const x = random();
      if (x < 0.55) {
        const keep = random() < 0.7;
        const path = keep ? `keep/${Math.floor(random() * 12)}.txt` : `tmp/${Math.floor(random() * 6)}.txt`;
        const body = random() < 0.5 ? pick(shared) : `unique ${n} ${random()}\n`.repeat(1 + Math.floor(random() * 200));
        const res = await fetch(`${s.url}/v1/documents?path=${encodeURIComponent(path)}`, { method: 'POST', body });
        const tally = keep ? perPath.get(path) ?? perPath.set(path, { acked: 0, failed: 0 }).get(path)! : undefined;
        if (res.status === 201 || res.status === 200) {
          const { digest } = (await res.json()) as { digest: string };
          if (keep) acked.set(digest, body);
          if (tally) tally.acked++;
          counts.put++;
        } else {
          // 409: it shared a chunk another server's GC deleted meanwhile (MISSING_CHUNKS; nothing stored).
          expect([503, 500, 409], await res.text()).toContain(res.status);
          if (tally) tally.failed++;
          counts.putFailed++;
        }
      } else if (x < 0.75) {
        const path = `keep/${Math.floor(random() * 12)}.txt`;
        const res = await fetch(`${s.url}/v1/entry?path=${encodeURIComponent(path)}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json', ...fresh },
          body: JSON.stringify({ addTags: [`t${Math.floor(random() * 4)}`], meta: { round: String(n) } }),
        });
        expect([200, 404, 503], await res.text()).toContain(res.status);
        counts.patch++;
      } else if (x < 0.84) {
        const res = await fetch(`${s.url}/v1/entry?path=${encodeURIComponent(`tmp/${Math.floor(random() * 6)}.txt`)}`, { method: 'DELETE', headers: fresh });
        expect([204, 404, 503], await res.text()).toContain(res.status);
        counts.deleted++;
      } else if (x < 0.87) {
        await gc(s);
      } else if (x < 0.9 && acked.size > 0) {
        // A snapshot of up to three kept documents (their bytes are in the store for good).
        const picked = [...acked].slice(0, 1 + Math.floor(random() * 3)).map(([digest, body], i) => ({ type: 'file', name: `f${i}`, mode: 0o644, size: Buffer.byteLength(body), digest }));
        const res = await fetch(`${s.url}/v1/snapshots`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...fresh },
          body: JSON.stringify({ label: `round ${n}`, root: { type: 'dir', name: '', mode: 0o755, entries: picked } }),
        });
        const text = await res.text();
        expect([201, 503], text).toContain(res.status);
        if (res.status === 201) snapshotIds.push((JSON.parse(text) as { id: string }).id);
        counts.snapshot++;
      } else if (x < 0.92 && snapshotIds.length > 0) {
        const id = snapshotIds.splice(Math.floor(random() * snapshotIds.length), 1)[0]!;
        const res = await fetch(`${s.url}/v1/snapshots/${id}`, { method: 'DELETE', headers: fresh });
        expect([204, 503], await res.text()).toContain(res.status);
        counts.snapshotDeleted++;
      } else {
        const path = `keep/${Math.floor(random() * 12)}.txt`;
        const res = await fetch(`${s.url}/v1/versions?path=${encodeURIComponent(path)}`, { headers: fresh });
        expect([200, 404, 503], await res.text()).toContain(res.status);
        counts.read++;
      }
    };
    // Eight requests in flight, spread over the three servers.
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < OPS) await op(next++);
    }));
    expect(counts.put).toBeGreaterThan(OPS / 4);
    // A pack that only garbage fills, for certain: a document put alone (its commit uploads its
    // own pack object), then deleted. (The workload's small packs mix kept and deleted documents; since
    // GC counts the index a pack's live records need, few of those are half garbage.)
    // (Over CARRY_MAX, 256 KiB, stored: a smaller pack rides inside its commit object.)
    const lone = Uint8Array.from({ length: 400_000 }, () => Math.floor(random() * 256));
    for (let tries = 0; ; tries++) {
      const res = await fetch(`${servers[0]!.url}/v1/documents?path=tmp/lone.txt`, { method: 'POST', body: lone });
      await res.text();
      if (res.status === 201) break;
      expect(tries, `put of tmp/lone.txt: ${res.status}`).toBeLessThan(20);
    }
    for (let tries = 0; ; tries++) {
      const res = await fetch(`${servers[1]!.url}/v1/entry?path=tmp/lone.txt`, { method: 'DELETE', headers: fresh });
      await res.text();
      if (res.status === 204 || (res.status === 404 && tries > 0)) break; // (404: a try whose answer was lost did it)
      expect(tries, `delete of tmp/lone.txt: ${res.status}`).toBeLessThan(20);
    }
    // GC to the end on one server: what the workload left unreferenced is marked, then deleted a
    // margin later, and the packs it emptied go a margin after their drop.
    for (let round = 0; round < 3; round++) {
      await gc(servers[round % SERVERS]!);
      await new Promise((r) => setTimeout(r, GC_MARGIN_MS + 100));
    }
    expect(counts.gc).toBeGreaterThan(0);
    expect(freed.chunksRemoved).toBeGreaterThan(0);
    expect(freed.packsDeleted + freed.packsCompacted).toBeGreaterThan(0);
    const faults = proxies.reduce((n, p) => n + [...p.counts].filter(([k]) => k.startsWith('fault:')).reduce((m, [, v]) => m + v, 0), 0);
    expect(faults).toBeGreaterThan(5);

    // Each acknowledged put of a kept path made at most one version: a put twice in the log
    // (a commit whose answer was lost, sent again) cannot add a version, so the log is read
    // below for commits published twice.
    for (const [path, { acked: a, failed: f }] of perPath) {
      const res = await fetch(`${servers[0]!.url}/v1/versions?path=${encodeURIComponent(path)}`, { headers: fresh });
      // 404: no put of that path was done (each failed before its commit).
      const versions = res.status === 404 ? [] : ((await res.json()) as { versions: unknown[] }).versions;
      expect(versions.length, path).toBeLessThanOrEqual(a + f);
    }
    // A server whose cache directory is deleted while it is stopped starts again from the bucket.
    await servers[2]!.stop();
    rmSync(join(root, 'cache-2'), { recursive: true, force: true });
    servers[2] = await spawnServer(settings(2));
    // Every server refreshes: one head for all.
    const heads = await Promise.all(servers.map(async (s) => ((await (await fetch(`${s.url}/v1/refresh`, { method: 'POST' })).json()) as { seq: number }).seq));
    expect(new Set(heads).size).toBe(1);
    console.log(`multi-server: ${JSON.stringify(counts)}, GC ${JSON.stringify(freed)}, ${faults} faults injected, log head ${heads[0]}`);
    // Every acknowledged put of a kept path reads back from every server.
    for (const s of servers) {
      for (const [digest, body] of acked) {
        const res = await fetch(`${s.url}/v1/documents/${digest}`);
        expect(res.status).toBe(200);
        expect(await res.text()).toBe(body);
      }
      const verify = (await (await fetch(`${s.url}/v1/verify?readData=1`, { method: 'POST' })).json()) as { ok: boolean; dataRead: boolean };
      expect(verify).toMatchObject({ ok: true, dataRead: true });
    }
    // The log: seqs 1..head, no gaps.
    const bucket = new S3ObjectStore(location(), { endpoint: s3.endpoint, credentials: s3.credentials });
    const seqs: number[] = [];
    const bodies = new Set<string>();
    let carried = 0;
    for await (const o of listAll(bucket, 'log/')) {
      seqs.push(Number(o.key.slice('log/'.length)));
      // One frame per object (FORMAT.md §15.2, read here by hand): magic, body length, seq,
      // prev, the JSON body; after it, only a pack the commit carries (§15.4, decision 0044).
      // No commit's writer, time and operations appear twice.
      const frame = await bucket.get(o.key);
      expect(Buffer.from(frame.subarray(0, 4)).toString()).toBe('KLG1');
      const n = new DataView(frame.buffer, frame.byteOffset).getUint32(4, true);
      const body = Buffer.from(frame.subarray(48, 48 + n)).toString();
      if (frame.length > 48 + n + 32) {
        expect(Buffer.from(frame.subarray(48 + n + 32, 48 + n + 40)).toString()).toBe('KURAPACK');
        expect(body).toContain('"inline":true');
        carried++;
      } else expect(frame.length).toBe(48 + n + 32);
      expect(bodies.has(body), `commit ${o.key} published twice`).toBe(false);
      bodies.add(body);
    }
    expect(carried).toBeGreaterThan(0); // (small puts' packs ride in their commits)
    await bucket.close();
    expect(seqs).toEqual(Array.from({ length: heads[0]! }, (_, i) => i + 1));
    // Identical catalogs, row for row (read after the servers stop).
    await stopAll();
    const dumps = servers.map((_, i) => canonicalDump(cacheDb(i)));
    expect(dumps[1]).toBe(dumps[0]);
    expect(dumps[2]).toBe(dumps[0]);
  });
});
