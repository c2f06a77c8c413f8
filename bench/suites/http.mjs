/**
 * The `http` suite: the Kura server in its own process (as deployed: `kura-server`, no auth,
 * warn-level logs, default rate limit) and closed-loop undici clients on loopback, mirroring the
 * YAMS multi-client tables: 1, 4, 16 and 64 clients ingesting 1 KB and 100 KB documents,
 * a mixed read/write load, GETs of 1 KB and 1 MB documents, and the server's peak RSS.
 * Every figure counts failures (non-2xx or a transport error); a figure's latencies include
 * time queued behind other clients. Bounded in count per figure, so the suite ends in minutes.
 * The server runs without the embedding model (KURA_SEMANTIC=off) and searches are keyword: these
 * are the HTTP layer's figures; `pnpm bench search` measures ingest beside background embedding,
 * and semantic search. (With the model, the thousands of uploads here leave a backlog of minutes
 * that would embed during the read figures, and every hybrid search would wait on it.)
 *
 * The peer, in the same run: MinIO (what a user might run instead for blobs over HTTP) serving
 * PUT and GET of the same 1 KB and 100 KB bodies at the same concurrency, through the same
 * undici client — its bucket opened to anonymous requests, as Kura's server runs without auth,
 * so neither side signs or checks signatures. MinIO fsyncs its objects and Kura (durability
 * normal) does not: the PUT ratio is a user's choice of defaults, not the same work.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { randomBytes, textLike } from '../lib/data.mjs';
import { closedLoop } from '../lib/loop.mjs';
import { find, target } from '../lib/report.mjs';
import { startS3Server } from '../lib/s3-server.mjs';

// KURA_BENCH_SERVER: another build's apps/server/dist/main.js (alternating old and new builds).
const MAIN = process.env.KURA_BENCH_SERVER || fileURLToPath(new URL('../../apps/server/dist/main.js', import.meta.url));
const log = (msg) => process.stderr.write(`[http] ${msg}\n`);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function rssOf(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

async function startServer(dir) {
  const port = await freePort();
  // KURA_BENCH_SERVER_FLAGS: node flags for the server alone (e.g. --cpu-prof, for profiling).
  const flags = (process.env.KURA_BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...flags, MAIN], {
    env: { ...process.env, KURA_STORE: dir, KURA_PORT: String(port), KURA_NO_AUTH: '1', KURA_LOG_LEVEL: 'warn', KURA_SEMANTIC: 'off' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { child, url };
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error('the server did not start');
}

/** A request sender through the pool `poolOf()` gives: failures counted in `failures.n`, never thrown. */
function sender(poolOf, failures) {
  return async (opts, expect) => {
    try {
      const r = await poolOf().request(opts);
      await r.body.dump({ limit: 1 << 30 });
      if (r.statusCode !== expect) failures.n++;
    } catch {
      failures.n++;
    }
  };
}

export async function run({ full = false } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'kura-bench-http-'));
  const { child, url } = await startServer(join(root, 'store'));
  let peakRss = 0;
  const sampler = setInterval(() => {
    try {
      peakRss = Math.max(peakRss, rssOf(child.pid));
    } catch {
      /* exited */
    }
  }, 100);
  // One keep-alive connection per client, as separate client processes would have.
  const pools = new Map();
  const poolFor = (clients) => {
    if (!pools.has(clients)) pools.set(clients, new Pool(url, { connections: clients, pipelining: 1 }));
    return pools.get(clients);
  };
  let pool = poolFor(16);
  const rows = [];
  const scale = full ? 4 : 0.3; // quick: 30% of the ops, to keep `pnpm bench` within 3 minutes
  let seq = 0;
  // Distinct documents: a shared body per size (made once: the client's CPU is the server's
  // CPU on this machine), copied and stamped with a counter. Binary bodies are random bytes
  // (not indexed); text bodies are words with the counter in ASCII (indexed for search).
  const bases = new Map();
  const body = (size, kind = 'binary') => {
    const key = `${kind}:${size}`;
    if (!bases.has(key)) bases.set(key, Buffer.from(kind === 'text' ? textLike(size, 5) : randomBytes(size, 1000 + size)));
    const b = Buffer.from(bases.get(key));
    b.write(`doc${String(seq++).padStart(9, '0')}${process.pid} `, 0, 'latin1');
    return b;
  };

  /** One request; failures are counted, never thrown, so a figure always completes. */
  const failures = { n: 0 };
  const send = sender(() => pool, failures);
  // KURA_BENCH_ONLY="POST 1 KB x16|GET 1 KB" measures only the figures it names (profiling).
  const only = process.env.KURA_BENCH_ONLY ? new RegExp(process.env.KURA_BENCH_ONLY) : undefined;
  const figure = async (meta, op, ops, concurrency, bytesPerOp, warmup = Math.min(Math.ceil(ops / 5), 1000)) => {
    const count = Math.round(ops); // counts are scaled
    if (only && !only.test(`${meta.group} x${concurrency}`)) return undefined;
    failures.n = 0;
    pool = poolFor(concurrency);
    const row = await closedLoop({ family: meta.family, group: meta.group, impl: 'kura', size: bytesPerOp }, { op, count, concurrency, bytesPerOp, warmup });
    row.failures = failures.n;
    row.clients = concurrency;
    rows.push(row);
    log(`${meta.group} x${concurrency}: ${row.opsPerSec.toFixed(0)}/s p99 ${row.p99.toFixed(2)} ms, ${row.failures} failures`);
    return row;
  };

  try {
    // Ingest: 1 KB and 100 KB at 1, 4, 16, 64 clients.
    for (const [size, counts] of [
      [1000, { 1: 1000, 4: 3000, 16: 6000, 64: 6000 }],
      [100_000, { 1: 300, 4: 600, 16: 1000, 64: 1000 }],
    ]) {
      for (const clients of [1, 4, 16, 64]) {
        const put = () => send({ path: '/v1/documents', method: 'POST', body: body(size), headers: { 'content-type': 'application/octet-stream' } }, 201);
        await figure({ family: 'ingest', group: `POST ${size >= 100_000 ? '100 KB' : '1 KB'}` }, put, counts[clients] * scale, clients, size);
      }
    }
    // Text documents are also indexed for full-text search (in the background, same process).
    const putText = () => send({ path: '/v1/documents', method: 'POST', body: body(1000, 'text'), headers: { 'content-type': 'text/plain' } }, 201);
    await figure({ family: 'ingest', group: 'POST 1 KB text' }, putText, 6000 * scale, 16, 1000);

    // Reads: documents to fetch, then GETs at 16 clients.
    const small = [];
    for (let i = 0; i < 200; i++) {
      const r = await pool.request({ path: '/v1/documents', method: 'POST', body: body(1000) });
      small.push((await r.body.json()).digest);
    }
    const large = [];
    for (let i = 0; i < 8; i++) {
      const r = await pool.request({ path: '/v1/documents', method: 'POST', body: body(1 << 20) });
      large.push((await r.body.json()).digest);
    }
    // Cold: each of 1,500 other documents (5,000 with --full) read once, so none comes from the
    // server's cache of recently read small documents (the figure above is the hot case: 200).
    const cold = [];
    for (let i = 0; i < (full ? 5000 : 1500); i++) {
      const r = await pool.request({ path: '/v1/documents', method: 'POST', body: body(1000) });
      cold.push((await r.body.json()).digest);
    }
    // A search first: it brings the full-text index up to date (FORMAT.md §10), which the
    // server would otherwise do in the background during the figure (after a write pause).
    await (await pool.request({ path: '/v1/search?q=warmup&mode=keyword', method: 'GET' })).body.dump();
    await figure({ family: 'read', group: 'GET 1 KB uncached' }, (i) => send({ path: `/v1/documents/${cold[i]}`, method: 'GET' }, 200), cold.length, 16, 1000, 0);
    await figure({ family: 'read', group: 'GET 1 KB' }, (i) => send({ path: `/v1/documents/${small[Math.abs(i) % small.length]}`, method: 'GET' }, 200), 40_000 * scale, 16, 1000);
    await figure({ family: 'read', group: 'GET 1 MB' }, (i) => send({ path: `/v1/documents/${large[Math.abs(i) % large.length]}`, method: 'GET' }, 200), 400 * scale, 16, 1 << 20);

    // Mixed: per op, 50% GET 1 KB, 20% POST 1 KB, 20% search, 10% metadata change (16 clients).
    const mixed = (i) => {
      const k = Math.abs(i) % 10;
      const d = small[Math.abs(i) % small.length];
      if (k < 5) return send({ path: `/v1/documents/${d}`, method: 'GET' }, 200);
      if (k < 7) return send({ path: '/v1/documents', method: 'POST', body: body(1000) }, 201);
      if (k < 9) return send({ path: `/v1/search?q=${['const', 'return', 'function', 'import'][k % 4]}&limit=10&mode=keyword`, method: 'GET' }, 200);
      return send({ path: `/v1/documents/${d}/meta`, method: 'PATCH', body: JSON.stringify({ meta: { n: String(i) } }), headers: { 'content-type': 'application/json' } }, 200);
    };
    await figure({ family: 'mixed', group: 'mixed r/w' }, mixed, 6000 * scale, 16, 0);
    await figure({ family: 'mixed', group: 'mixed r/w' }, mixed, 6000 * scale, 64, 0);
  } finally {
    clearInterval(sampler);
    await Promise.all([...pools.values()].map((p) => p.close()));
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(root, { recursive: true, force: true });
  }
  rows.push({ family: 'memory', group: 'server peak RSS', impl: 'kura', size: peakRss, peakRss, opsPerSec: 0, mbPerSec: 0 });
  log(`server peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB`);
  rows.push(...(await minioFigures(scale, only)));
  return rows;
}

/**
 * MinIO's PUT and GET of 1 KB and 100 KB objects at 16 clients, anonymous (a bucket policy lets
 * anyone get and put), through undici as Kura's figures are: the same counts, bodies and loop.
 */
async function minioFigures(scale, only) {
  const rows = [];
  let server;
  try {
    server = await startS3Server('minio');
  } catch (e) {
    return [{ family: 'peer', group: 'MinIO', impl: 'minio', size: 0, unavailable: String(e.message ?? e) }];
  }
  const { S3Client, PutBucketPolicyCommand } = await import('@aws-sdk/client-s3');
  const admin = new S3Client({ endpoint: server.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: server.credentials });
  const resource = `arn:aws:s3:::${server.bucket}/*`;
  await admin.send(new PutBucketPolicyCommand({ Bucket: server.bucket, Policy: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { AWS: ['*'] }, Action: ['s3:GetObject', 's3:PutObject'], Resource: [resource] }] }) }));
  admin.destroy();
  const pool = new Pool(server.endpoint, { connections: 16, pipelining: 1 });
  const failures = { n: 0 };
  const send = sender(() => pool, failures);
  let seq = 0;
  const base = new Map();
  const body = (size) => {
    if (!base.has(size)) base.set(size, Buffer.from(randomBytes(size, 1000 + size)));
    const b = Buffer.from(base.get(size));
    b.write(`doc${String(seq++).padStart(9, '0')}${process.pid} `, 0, 'latin1');
    return b;
  };
  const figure = async (group, op, ops, bytesPerOp) => {
    if (only && !only.test(`${group} x16`)) return;
    failures.n = 0;
    const count = Math.round(ops);
    const row = await closedLoop({ family: 'peer', group, impl: 'minio', size: bytesPerOp }, { op, count, concurrency: 16, bytesPerOp, warmup: Math.min(Math.ceil(count / 5), 1000) });
    row.failures = failures.n;
    row.clients = 16;
    rows.push(row);
    log(`minio ${group} x16: ${row.opsPerSec.toFixed(0)}/s p99 ${row.p99.toFixed(2)} ms, ${row.failures} failures`);
  };
  try {
    const key = (i) => `/${server.bucket}/o${i}`;
    await figure('POST 1 KB', (i) => send({ path: key(`w1k-${seq}`), method: 'PUT', body: body(1000) }, 200), 6000 * scale, 1000);
    await figure('POST 100 KB', (i) => send({ path: key(`w100k-${seq}`), method: 'PUT', body: body(100_000) }, 200), 1000 * scale, 100_000);
    for (let i = 0; i < 200; i++) await send({ path: key(`r${i}`), method: 'PUT', body: body(1000) }, 200);
    await figure('GET 1 KB', (i) => send({ path: key(`r${Math.abs(i) % 200}`), method: 'GET' }, 200), 40_000 * scale, 1000);
  } finally {
    await pool.close();
    await server.stop();
  }
  return rows;
}

const clientsColumn = [
  { header: 'clients', value: (r) => r.clients },
  { header: 'p95', value: (r) => (r.p95 === undefined ? '' : `${r.p95.toFixed(2)} ms`) },
  { header: 'failures', value: (r) => r.failures },
];

export const families = {
  ingest: { title: 'ingest over HTTP: POST /v1/documents, closed loop per client, server in its own process', extra: clientsColumn, ratio: () => undefined },
  read: { title: 'GET /v1/documents/{digest}, 16 clients', extra: clientsColumn, ratio: () => undefined },
  mixed: { title: 'mixed: 50% GET 1 KB, 20% POST 1 KB, 20% search, 10% PATCH meta', extra: clientsColumn, ratio: () => undefined },
  memory: { title: 'server memory', extra: [{ header: 'peak RSS', value: (r) => `${(r.peakRss / 2 ** 20).toFixed(0)} MiB` }], ratio: () => undefined },
  peer: {
    title: 'the peer in the same run: MinIO, anonymous PUT (as "POST") and GET of the same bodies, 16 clients, same client; kura/peer: Kura\'s figure of that row over MinIO\'s',
    extra: clientsColumn,
    ratioHeader: 'kura/minio',
    ratio: (r, all) => {
      const kura = all.find((k) => k.impl === 'kura' && k.group === r.group && k.clients === 16);
      return kura && r.opsPerSec ? kura.opsPerSec / r.opsPerSec : undefined;
    },
  },
};

export function targets(rows) {
  const post16 = find(rows, { group: 'POST 1 KB', clients: 16 });
  const get1k = find(rows, { group: 'GET 1 KB' });
  const failures = rows.reduce((n, r) => n + (r.failures ?? 0), 0);
  return [
    target('1 KB POST >= 5,000 docs/s at 16 clients', post16 && post16.opsPerSec / 5000, 1, { detail: post16 && `${post16.opsPerSec.toFixed(0)} docs/s` }),
    target('1 KB POST p99 < 25 ms at 16 clients', post16 && 25 / post16.p99, 1, { detail: post16 && `p99 ${post16.p99.toFixed(2)} ms` }),
    target('GET 1 KB >= 15,000 req/s', get1k && get1k.opsPerSec / 15000, 1, { detail: get1k && `${get1k.opsPerSec.toFixed(0)} req/s` }),
    target('0 failures in every figure', failures === 0 ? 1 : 0, 1, { detail: `${failures} failures` }),
  ];
}
