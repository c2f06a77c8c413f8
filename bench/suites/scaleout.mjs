/**
 * The `scaleout` suite (issue 21): a store on S3-compatible storage beside the local store, in
 * one run, on real servers it starts itself (versitygw and MinIO, scripts/fetch-s3-servers.sh):
 * bulk ingest and its requests (a counting proxy in front of the server), 1 KB and 100 KB puts
 * at 32 in flight (timed against the server itself, their requests counted in a second run),
 * gets from a server with an empty cache, how soon one server sees another's commit, commits
 * per second with 1, 2 and 4 servers, a new server's cold start, and GC of a store that is 30%
 * garbage (two runs on S3: one marks, one a margin later deletes). The peers
 * are `restic backup` (Debian's restic) and `kopia snapshot create` (built by scripts/fetch-kopia.sh)
 * to the same server, through the same counting proxy.
 * Servers here are Store instances in this process, each with its own cache directory.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store, openObjectLocation } from '@kura/store';
import { KiB, MiB, textLike } from '../lib/data.mjs';
import { documents } from '../lib/documents.mjs';
import { closedLoop } from '../lib/loop.mjs';
import { find, fmt, target } from '../lib/report.mjs';
import { startS3Server } from '../lib/s3-server.mjs';
import { startCountingProxy } from '../lib/counting-proxy.mjs';
import { childCpuSeconds, inTurns, median } from '../lib/rounds.mjs';

const log = (msg) => process.stderr.write(`[scaleout] ${msg}\n`);
const IN_FLIGHT = 32;
const KINDS = ['versitygw', 'minio'];
/** Rounds of Kura to S3 and of restic to the same server, in turns (of 64 MiB quick, 512 MiB full). */
const BULK_ROUNDS = 3;

let prefixes = 0;
/** A store at a fresh prefix of the server's bucket (each server its own cache directory). */
function s3Store(root, srv, endpoint, init, prefix = `s${++prefixes}`, options = {}) {
  const location = `s3://${srv.bucket}/${prefix}`;
  const common = { cacheDir: mkdtempSync(join(root, 'cache-')), s3: { endpoint, credentials: srv.credentials }, ...options };
  return { location, prefix, open: () => (init ? Store.init(location, common) : Store.open(location, common)), reopen: () => Store.open(location, common) };
}

function row(family, group, impl, seconds, extra = {}) {
  const ms = seconds * 1000;
  return { family, group, impl, name: `${group} ${impl}`, opsPerSec: 1 / seconds, mean: ms, p50: ms, p95: ms, p99: ms, min: ms, max: ms, samples: 1, ...extra };
}

/** Files of unique text for the bulk figures. */
/** Exported for drivers that run the bulk figures alone (e.g. at 512 MiB, alternating builds). */
export function bulkInput(root, total) {
  const src = join(root, 'bulk-input');
  const fileSize = 4 * MiB;
  for (let i = 0; i < total / fileSize; i++) {
    const sub = join(src, `d${i % 8}`);
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `f${i}.txt`), textLike(fileSize, 2000 + i, 256 + (i % 7) * 64));
  }
  const files = readdirSync(src, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath ?? e.path, e.name)).sort();
  return { src, files };
}

export async function bulk(root, kind, srv, proxy, input, total, rounds = BULK_ROUNDS) {
  const rows = [];
  const group = `bulk ingest ${total / MiB} MiB (${kind})`;
  // Each store is made first, like restic's repository (`restic init` is not counted either):
  // the figures are an open, the ingest and the close.
  const ingest = async (open, files = input.files) => {
    const t = performance.now();
    const store = await open();
    for await (const o of store.putFiles(files.map((path) => ({ path })))) if (o.error) throw o.error;
    await store.close(); // (uploads what is left; the local store seals its pack)
    return (performance.now() - t) / 1000;
  };
  // An untimed ingest of four files first: the first run in a process took ~1.5x the next
  // (its code not yet optimized), and the local figure, timed once, came first.
  const warm = join(mkdtempSync(join(root, 'warm-')), 's');
  await ingest(() => Store.init(warm), input.files.slice(0, 4));
  const dir = join(mkdtempSync(join(root, 'local-')), 's');
  await (await Store.init(dir)).close();
  const local = await ingest(() => Store.open(dir));
  rows.push(row('scaleout-bulk', group, 'kura, local directory', local, { bytes: total, mbPerSec: total / 1e6 / local, size: total }));
  log(`${kind} bulk: local ${(total / 1e6 / local).toFixed(0)} MB/s`);
  let version = null;
  try {
    version = execFileSync('restic', ['version'], { encoding: 'utf8' }).trim();
  } catch {
    rows.push({ family: 'scaleout-bulk', group, impl: `restic, ${kind}`, unavailable: 'restic not installed' });
  }
  // Kura to S3 and restic to the same server in turns, `rounds` each, each row its median
  // round: one round of either moved by 10-30% between rounds minutes apart here, so a single
  // pair put the ratio on either side of its target. CPU a round as well (Kura: this process,
  // the counting proxy's worker included, which restic's requests pass through too; restic:
  // the child's, from bash's `times`): on two cores the time ratio follows the CPU ratio.
  const kura = { seconds: [], cpu: [], requests: undefined };
  const restic = { seconds: [], cpu: [], requests: undefined };
  const kuraRound = async (round) => {
    const target = s3Store(root, srv, proxy.endpoint, true);
    await (await target.open()).close();
    await proxy.take();
    const cpuBefore = process.cpuUsage();
    kura.seconds.push(await ingest(target.reopen));
    const cpu = process.cpuUsage(cpuBefore);
    kura.cpu.push((cpu.user + cpu.system) / 1e6);
    kura.requests ??= await proxy.take();
    log(`${kind} bulk round ${round + 1}: kura ${(total / 1e6 / kura.seconds.at(-1)).toFixed(0)} MB/s, ${kura.requests.total} requests`);
  };
  const resticRound = async (round) => {
    if (!version) return;
    const env = {
      ...process.env,
      RESTIC_PASSWORD: 'bench',
      RESTIC_REPOSITORY: `s3:${proxy.endpoint}/${srv.bucket}/restic-${kind}-${round}`,
      AWS_ACCESS_KEY_ID: srv.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: srv.credentials.secretAccessKey,
      RESTIC_CACHE_DIR: mkdtempSync(join(root, 'restic-cache-')),
    };
    // (asynchronously, as every peer runs: the bench thread waits while the proxy counts)
    const run = promisify(execFile);
    await run('restic', ['init', '-q', '-o', 's3.bucket-lookup=path'], { env });
    await proxy.take();
    const t = performance.now();
    const { stdout } = await run('bash', ['-c', 'restic "$@" >/dev/null || exit; times', 'restic', 'backup', '-q', '-o', 's3.bucket-lookup=path', '--compression', 'auto', input.src], { env, maxBuffer: 1 << 24 });
    restic.seconds.push((performance.now() - t) / 1000);
    restic.cpu.push(childCpuSeconds(stdout));
    restic.requests ??= await proxy.take();
    log(`${kind} bulk round ${round + 1}: restic ${(total / 1e6 / restic.seconds.at(-1)).toFixed(0)} MB/s, ${restic.requests.total} requests`);
  };
  await inTurns(rounds, kuraRound, resticRound);
  const medianRow = (impl, side, extra) => {
    const seconds = median(side.seconds);
    const cpu = side.cpu.every(Number.isFinite) ? median(side.cpu) : undefined;
    return row('scaleout-bulk', group, impl, seconds, { bytes: total, mbPerSec: total / 1e6 / seconds, size: total, requests: side.requests, rounds: side.seconds.map((s) => s * 1000), cpuSeconds: cpu, ...extra });
  };
  rows.push(medianRow(`kura, ${kind}`, kura));
  rows.push(await kopia(root, kind, srv, proxy, input, total));
  if (version) rows.push(medianRow(`restic, ${kind}`, restic, { version }));
  return rows;
}

/**
 * Puts at 32 in flight, timed straight against the server: the counting proxy (a worker
 * thread of this process) added ~0.3 ms and ~30 us of this process's CPU to each request, a
 * cost no deployment has and the local store beside it never pays. Their requests are counted
 * in a third, shorter run through the proxy. The local store and the S3 one are timed in turn,
 * twice each (fresh stores), and each keeps its better run: a single run of either moved
 * 1.5-2x between runs of one build here, the first of a process's runs slowest (its code not
 * yet compiled hot). 4,000 1 KB puts a run (2,000 before: the better of two still moved ±20%
 * between runs of one build; ~2 s more a server).
 */
async function puts(root, kind, srv, proxy) {
  const rows = [];
  for (const [size, count] of [[KiB, 8000], [100 * KiB, 250]]) {
    const per = size === KiB ? count / 2 : count;
    const n = Math.ceil(count / 4);
    const docs = documents(4 * (per + 60) + n + 60, size, size);
    const label = size === KiB ? '1 KB' : '100 KB';
    let next = 0;
    const loop = async (store, impl, n) => {
      const from = next;
      next += n + 60;
      const r = await closedLoop({ family: 'scaleout-put', group: `put ${label} x${IN_FLIGHT} (${kind})`, impl: `kura, ${impl}`, size }, {
        op: (i) => store.put(docs[from + (i < 0 ? n - i - 1 : i)]),
        count: n,
        concurrency: IN_FLIGHT,
        bytesPerOp: size,
      });
      await store.close();
      return r;
    };
    let last; // the S3 store timed last (its log objects size the ceiling below)
    const impls = [
      ['local directory', () => Store.init(join(mkdtempSync(join(root, 'local-')), 's'))],
      [kind, () => (last = s3Store(root, srv, srv.endpoint, true)).open()],
    ];
    const best = new Map();
    for (let round = 0; round < 2; round++) {
      for (const [impl, open] of impls) {
        const r = await loop(await open(), impl, per);
        if (!best.has(impl) || r.opsPerSec > best.get(impl).opsPerSec) best.set(impl, r);
      }
    }
    const s3 = best.get(kind);
    const counted = await s3Store(root, srv, proxy.endpoint, true).open();
    await proxy.take();
    await loop(counted, kind, n);
    const reqs = await proxy.take();
    s3.requests = reqs;
    s3.requestsPerDoc = reqs.total / (n + Math.min(50, n));
    for (const [impl] of impls) {
      rows.push(best.get(impl));
      log(`${kind} put ${label} ${impl}: ${best.get(impl).opsPerSec.toFixed(0)} ops/s (better of 2)`);
    }
    if (size === KiB) rows.push(await ceiling(srv, last.location, kind, s3.group));
  }
  return rows;
}

/**
 * The most a server's puts at 32 in flight can make, whatever the client does: a put is
 * answered once its commit's object is created, a server creates one commit object at a time
 * (each names the one before it: FORMAT.md §15), and a commit carries at most the puts in
 * flight — so puts/s <= 32 / a create's latency. Timed here as sequential conditional creates
 * of objects the size of the run's own commit objects (their median), through the same object
 * store, with nothing else running: a ceiling, since under load each create only takes longer.
 */
async function ceiling(srv, location, kind, group) {
  const objects = await openObjectLocation(location, { s3: { endpoint: srv.endpoint, credentials: srv.credentials } });
  const sizes = [];
  for (let after; ; ) {
    const page = await objects.list('log/', after === undefined ? {} : { startAfter: after });
    sizes.push(...page.objects.map((o) => o.size));
    if (!page.more || page.objects.length === 0) break;
    after = page.objects.at(-1).key;
  }
  sizes.sort((a, b) => a - b);
  const size = sizes[sizes.length >> 1] ?? 32 * KiB;
  const bytes = new Uint8Array(size).map((_, i) => (i * 2654435761) >>> 24);
  const count = 200;
  const times = [];
  for (let i = -20; i < count; i++) {
    const t = performance.now();
    if (!(await objects.create(`ceiling/${process.pid}-${i + 20}`, bytes))) throw new Error('a ceiling create found its key taken');
    if (i >= 0) times.push(performance.now() - t);
  }
  await objects.close();
  const seconds = times.reduce((a, b) => a + b, 0) / 1000;
  times.sort((a, b) => a - b);
  const r = row('scaleout-put', group, `ceiling: ${IN_FLIGHT} puts per create`, seconds / count, { opsPerSec: (IN_FLIGHT * count) / seconds, size: KiB, commitBytes: size, p50: times[count >> 1], p99: times[Math.floor(count * 0.99)] });
  log(`${kind} ceiling: creates of ${size} bytes, p50 ${r.p50.toFixed(2)} ms → ${r.opsPerSec.toFixed(0)} puts/s at most`);
  return r;
}

/** The kopia binary scripts/fetch-kopia.sh builds (the suite runs it first: instant when built). */
const KOPIA = join(process.env.KURA_CACHE ?? join(homedir(), '.cache', 'kura'), 'bin', 'kopia');

/** `kopia snapshot create` of the same tree to the same server (zstd, as Kura and restic compress): time and requests. */
async function kopia(root, kind, srv, proxy, input, total) {
  const group = `bulk ingest ${total / MiB} MiB (${kind})`;
  const run = promisify(execFile);
  try {
    await run('bash', [join(import.meta.dirname, '..', '..', 'scripts', 'fetch-kopia.sh')], { maxBuffer: 1 << 24 });
  } catch (e) {
    return { family: 'scaleout-bulk', group, impl: `kopia, ${kind}`, unavailable: `kopia did not build: ${String(e.stderr ?? e).slice(-200)}` };
  }
  const version = (await run(KOPIA, ['--version'])).stdout.trim().split(/\s+/)[0];
  const config = join(mkdtempSync(join(root, 'kopia-')), 'repository.config');
  const env = { ...process.env, KOPIA_PASSWORD: 'bench-password', KOPIA_CHECK_FOR_UPDATES: 'false' };
  const common = ['--config-file', config];
  const endpoint = new URL(proxy.endpoint).host;
  await run(KOPIA, ['repository', 'create', 's3', '--bucket', srv.bucket, '--prefix', `kopia-${kind}/`, '--endpoint', endpoint, '--disable-tls',
    '--access-key', srv.credentials.accessKeyId, '--secret-access-key', srv.credentials.secretAccessKey, '--cache-directory', mkdtempSync(join(root, 'kopia-cache-')), ...common], { env });
  await run(KOPIA, ['policy', 'set', '--global', '--compression', 'zstd', ...common], { env });
  await proxy.take();
  const t = performance.now();
  await run(KOPIA, ['snapshot', 'create', input.src, ...common], { env, maxBuffer: 1 << 24 });
  const seconds = (performance.now() - t) / 1000;
  const requests = await proxy.take();
  log(`${kind} kopia: ${(total / 1e6 / seconds).toFixed(0)} MB/s, ${requests.total} requests`);
  return row('scaleout-bulk', group, `kopia, ${kind}`, seconds, { bytes: total, mbPerSec: total / 1e6 / seconds, size: total, requests, version: `kopia ${version}` });
}

/** Gets of 1 MB documents from a server that has just opened the store with an empty cache, then again. */
async function gets(root, kind, srv, proxy) {
  const target = s3Store(root, srv, proxy.endpoint, true);
  const writer = await target.open();
  const docs = documents(24, MiB, 21);
  const digests = [];
  for (const d of docs) digests.push((await writer.put(d)).digest);
  await writer.close();
  const reader = await Store.open(target.location, { cacheDir: mkdtempSync(join(root, 'cache-')), s3: { endpoint: proxy.endpoint, credentials: srv.credentials } });
  const rows = [];
  for (const pass of ['cold (new cache)', 'warm (again)']) {
    await proxy.take();
    const r = await closedLoop({ family: 'scaleout-get', group: `get 1 MB (${kind})`, impl: `kura, ${pass}`, size: MiB }, {
      op: (i) => reader.getBytes(digests[Math.abs(i) % digests.length]),
      count: digests.length,
      concurrency: 4,
      bytesPerOp: MiB,
      warmup: 0,
    });
    r.requests = await proxy.take();
    rows.push(r);
  }
  await reader.close();
  return rows;
}

/** How soon a commit on one server is seen on another that only polls (no refresh asked). */
async function visibility(root, srv) {
  const a0 = s3Store(root, srv, srv.endpoint, true);
  const a = await a0.open();
  const b = await Store.open(a0.location, { cacheDir: mkdtempSync(join(root, 'cache-')), s3: { endpoint: srv.endpoint, credentials: srv.credentials } });
  const lags = [];
  for (let i = 0; i < 30; i++) {
    await new Promise((r) => setTimeout(r, 50 + (i % 5) * 170)); // now and then idle long enough to back off
    const t = performance.now();
    await a.put(new TextEncoder().encode(`visible ${i}`), { path: `lag/${i}` });
    while ((await b.list({ pathPrefix: 'lag/' })).items.length < i + 1) await new Promise((r) => setTimeout(r, 2));
    lags.push(performance.now() - t);
  }
  await a.close();
  await b.close();
  lags.sort((x, y) => x - y);
  const q = (p) => lags[Math.min(lags.length - 1, Math.floor(p * (lags.length - 1)))];
  return { family: 'scaleout-lag', group: 'visibility lag, server A to server B (versitygw)', impl: 'kura, polling', name: 'lag', opsPerSec: 0, mean: lags.reduce((x, y) => x + y, 0) / lags.length, p50: q(0.5), p95: q(0.95), p99: q(0.99), min: lags[0], max: lags.at(-1), samples: lags.length };
}

/** Metadata commits per second with 1, 2 and 4 servers on one bucket, each committing one at a time. */
async function commitRates(root, srv, seconds) {
  const rows = [];
  for (const servers of [1, 2, 4]) {
    const first = s3Store(root, srv, srv.endpoint, true);
    const stores = [await first.open()];
    for (let i = 1; i < servers; i++) stores.push(await Store.open(first.location, { cacheDir: mkdtempSync(join(root, 'cache-')), s3: { endpoint: srv.endpoint, credentials: srv.credentials } }));
    await stores[0].put(new TextEncoder().encode('target'), { path: 'meta/target' });
    for (const s of stores) await s.refresh();
    let commits = 0;
    // Per server: how many it made, and its longest wait for one (servers take turns at the
    // log under contention: catalog/turn-taking.ts; before, one could make all the commits).
    const made = stores.map(() => 0);
    let longest = 0;
    const end = performance.now() + seconds * 1000;
    await Promise.all(stores.map(async (s, k) => {
      for (let i = 0; performance.now() < end; i++) {
        const t = performance.now();
        await s.setMeta('meta/target', { [`s${k}`]: String(i) });
        longest = Math.max(longest, performance.now() - t);
        commits++;
        made[k]++;
      }
    }));
    const elapsed = seconds;
    for (const s of stores) await s.close();
    rows.push({ family: 'scaleout-commits', group: 'metadata commits, one at a time per server (versitygw)', impl: `kura, ${servers} server${servers > 1 ? 's' : ''}`, name: `commits ${servers}`, opsPerSec: commits / elapsed, mean: 0, p50: 0, p95: 0, p99: 0, min: 0, max: 0, samples: commits, perServer: made.join(' / '), longestMs: longest });
    log(`commits with ${servers} servers: ${(commits / elapsed).toFixed(0)}/s (per server ${made.join(' / ')}; longest wait ${longest.toFixed(0)} ms)`);
  }
  return rows;
}

/** A new server (empty cache) opening a store of `count` documents: seconds and requests. */
async function coldStart(root, srv, proxy, count) {
  const t0 = s3Store(root, srv, srv.endpoint, true);
  const writer = await t0.open();
  const docs = documents(count, 200, 31);
  await closedLoop({ family: 'setup', group: 'fill', impl: 'kura' }, { op: (i) => (i < 0 ? undefined : writer.put(docs[i], { path: `cold/${i}` })), count, concurrency: 64, warmup: 0 });
  await writer.checkpoint();
  await writer.close();
  await proxy.take();
  const t = performance.now();
  const fresh = await Store.open(t0.location, { cacheDir: mkdtempSync(join(root, 'cache-')), s3: { endpoint: proxy.endpoint, credentials: srv.credentials } });
  const listed = (await fresh.stats()).entries;
  const seconds = (performance.now() - t) / 1000;
  const requests = await proxy.take();
  await fresh.close();
  if (listed !== count) throw new Error(`cold start listed ${listed} entries, not ${count}`);
  log(`cold start at ${count} documents: ${seconds.toFixed(2)} s, ${requests.total} requests`);
  return row('scaleout-cold', `cold start of a new server (versitygw)`, `kura, ${count} documents`, seconds, { requests });
}

/**
 * GC of a store that is 30% garbage: documents of 1.6 MiB put one at a time (about a pack each:
 * on S3 every commit uploads its pack, so the local store gets packs of 2 MiB to match), 30%
 * of them deleted. Margin 0: on S3 the first run marks the chunks, the second deletes them and
 * the packs they emptied (locally, alone, the first run does it all).
 */
async function gcBench(root, kind, srv, proxy) {
  const count = 40;
  const size = 1.6 * MiB;
  const docs = Array.from({ length: count }, (_, i) => textLike(size, 7000 + i, 512 + (i % 5) * 128));
  const rows = [];
  const group = `GC, 30% of ${((count * size) / MiB).toFixed(0)} MiB garbage (${kind})`;
  const local = async () => {
    const dir = join(mkdtempSync(join(root, 'local-')), 's');
    await (await Store.init(dir)).close();
    return Store.open(dir, { packSize: 2 * MiB, gcMarginMs: 0 });
  };
  const onS3 = async () => {
    const target = s3Store(root, srv, proxy.endpoint, true);
    await (await target.open()).close();
    return Store.open(target.location, { cacheDir: mkdtempSync(join(root, 'cache-')), s3: { endpoint: proxy.endpoint, credentials: srv.credentials }, packSize: 2 * MiB, gcMarginMs: 0 });
  };
  for (const [impl, open] of [['local directory', local], [kind, onS3]]) {
    const store = await open();
    for (let i = 0; i < count; i++) await store.put(docs[i], { path: `gc/${i}` });
    for (let i = 0; i < count; i++) if (i % 10 < 3) await store.deletePath(`gc/${i}`);
    const before = (await store.stats()).packBytes;
    await proxy.take();
    const t = performance.now();
    const runs = [await store.gc(), await store.gc()];
    const seconds = (performance.now() - t) / 1000;
    const requests = impl === kind ? await proxy.take() : undefined;
    const freed = runs.reduce((n, r) => n + r.bytesFreed, 0);
    const after = (await store.stats()).packBytes;
    await store.close();
    rows.push(row('scaleout-gc', group, `kura, ${impl}`, seconds, { size: count * size, freedMB: freed / 1e6, packMB: `${(before / 1e6).toFixed(1)} → ${(after / 1e6).toFixed(1)}`, ...(requests ? { requests } : {}) }));
    log(`${kind} gc ${impl}: ${seconds.toFixed(2)} s, freed ${(freed / 1e6).toFixed(1)} MB${requests ? `, ${requests.total} requests` : ''}`);
  }
  return rows;
}

export async function run({ full = false } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'kura-bench-scaleout-'));
  const rows = [];
  try {
    const total = full ? 512 * MiB : 64 * MiB;
    const input = bulkInput(root, total);
    for (const kind of KINDS) {
      const srv = await startS3Server(kind);
      const proxy = await startCountingProxy(srv.endpoint);
      try {
        rows.push(...(await bulk(root, kind, srv, proxy, input, total)));
        rows.push(...(await puts(root, kind, srv, proxy)));
        rows.push(...(await gets(root, kind, srv, proxy)));
        rows.push(...(await gcBench(root, kind, srv, proxy)));
        if (kind === 'versitygw') {
          rows.push(await visibility(root, srv));
          rows.push(...(await commitRates(root, srv, full ? 10 : 3)));
          for (const n of [10_000, 100_000]) rows.push(await coldStart(root, srv, proxy, n));
        }
      } finally {
        await proxy.stop();
        await srv.stop();
      }
    }
    return rows;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const reqs = (r) => r.requests && `${r.requests.total} (${['PUT', 'GET', 'POST', 'HEAD', 'DELETE'].filter((m) => r.requests[m]).map((m) => `${m} ${r.requests[m]}`).join(', ')})`;

export const families = {
  'scaleout-bulk': { title: 'bulk ingest: files of unique text, local directory vs S3 (and restic to the same server); requests counted by a proxy', extra: [{ header: 'requests', value: reqs }] },
  'scaleout-put': { title: 'puts at 32 in flight: local directory vs S3', extra: [{ header: 'requests/doc', value: (r) => r.requestsPerDoc?.toFixed(3) }] },
  'scaleout-get': { title: 'gets of 1 MB documents from a server with a new cache (4 in flight)', extra: [{ header: 'requests', value: reqs }] },
  'scaleout-lag': { title: "visibility: from a put's answer on one server to the entry listed on another (polling only)" },
  'scaleout-commits': { title: 'commits per second on one bucket', extra: [{ header: 'commits per server', value: (r) => r.perServer }, { header: 'longest wait (ms)', value: (r) => r.longestMs?.toFixed(0) }] },
  'scaleout-gc': { title: 'GC of a store that is 30% garbage, two runs (margin 0): time, requests, bytes freed', extra: [{ header: 'freed MB', value: (r) => r.freedMB?.toFixed(1) }, { header: 'pack MB before → after', value: (r) => r.packMB }, { header: 'requests', value: reqs }] },
  'scaleout-cold': { title: 'cold start: a new server opens the store (newest checkpoint, then the log after it)', extra: [{ header: 'requests', value: reqs }] },
};

/** Medians of rounds in turns: each round's ratio and the CPU a round took on either side. */
function roundsDetail(kura, restic) {
  if (!kura.rounds || !restic.rounds) return ''; // (rows from a run before rounds)
  const ratios = kura.rounds.map((ms, i) => (restic.rounds[i] / ms).toFixed(2)).join(' / ');
  const cpu = kura.cpuSeconds && restic.cpuSeconds ? `; CPU a round: kura ${kura.cpuSeconds.toFixed(2)} s, restic ${restic.cpuSeconds.toFixed(2)} s` : '';
  return ` (medians of ${kura.rounds.length} rounds in turns; round by round ${ratios}x${cpu})`;
}

export function targets(rows) {
  const out = [];
  for (const kind of KINDS) {
    const group = rows.find((r) => r.family === 'scaleout-bulk' && r.group.endsWith(`(${kind})`))?.group;
    const local = find(rows, { family: 'scaleout-bulk', group, impl: 'kura, local directory' });
    const s3 = find(rows, { family: 'scaleout-bulk', group, impl: `kura, ${kind}` });
    const restic = find(rows, { family: 'scaleout-bulk', group, impl: `restic, ${kind}` });
    out.push(target(`bulk ingest to ${kind} >= 0.8x the local store`, s3 && local ? s3.mbPerSec / local.mbPerSec : undefined, 0.8,
      { detail: s3 && local ? `${fmt.mbps(s3.mbPerSec)} / ${fmt.mbps(local.mbPerSec)} MB/s` : '' }));
    out.push(target(`bulk ingest to ${kind} >= 1.2x restic to it`, s3 && restic ? s3.mbPerSec / restic.mbPerSec : undefined, 1.2,
      { detail: s3 && restic ? `${fmt.mbps(s3.mbPerSec)} / ${fmt.mbps(restic.mbPerSec)} MB/s${roundsDetail(s3, restic)}` : '', missing: 'restic not measured' }));
    out.push(target(`requests per GB ingested to ${kind} <= restic's`, s3?.requests && restic?.requests ? restic.requests.total / s3.requests.total : undefined, 1,
      { detail: s3?.requests && restic?.requests ? `kura ${s3.requests.total}, restic ${restic.requests.total} requests (ratio restic/kura)` : '', missing: 'restic not measured' }));
    const put = find(rows, { family: 'scaleout-put', group: `put 1 KB x${IN_FLIGHT} (${kind})`, impl: `kura, ${kind}` });
    const putLocal = find(rows, { family: 'scaleout-put', group: `put 1 KB x${IN_FLIGHT} (${kind})`, impl: 'kura, local directory' });
    const top = find(rows, { family: 'scaleout-put', group: `put 1 KB x${IN_FLIGHT} (${kind})`, impl: `ceiling: ${IN_FLIGHT} puts per create` });
    // In lockstep (the 32 puts one commit's answer releases all reach the next commit) a cycle
    // is the work of 32 puts — at least the local store's — and then one create: puts/s at
    // most 1 / (1/local + 1/ceiling), what this run's ratio could have been at best.
    const bound = put && top && putLocal ? 1 / (1 / putLocal.opsPerSec + 1 / top.opsPerSec) : undefined;
    const ofTop = bound ? `; ${(100 * put.opsPerSec / top.opsPerSec).toFixed(0)}% of the server's ceiling, ${fmt.ops(top.opsPerSec)} = ${(top.opsPerSec / putLocal.opsPerSec).toFixed(2)}x local; lockstep bound ${fmt.ops(bound)} = ${(bound / putLocal.opsPerSec).toFixed(2)}x local` : '';
    out.push(target(`1 KB puts to ${kind} >= 0.5x local (32 in flight)`, put && putLocal ? put.opsPerSec / putLocal.opsPerSec : undefined, 0.5,
      { detail: put && putLocal ? `${fmt.ops(put.opsPerSec)} / ${fmt.ops(putLocal.opsPerSec)} ops/s${ofTop}` : '' }));
  }
  const lag = rows.find((r) => r.family === 'scaleout-lag');
  out.push(target('visibility lag p99 < 1 s (default polling)', lag ? 1000 / lag.p99 : undefined, 1, { detail: lag ? `p50 ${lag.p50.toFixed(0)} ms, p99 ${lag.p99.toFixed(0)} ms` : '' }));
  const cold = rows.filter((r) => r.family === 'scaleout-cold').at(-1);
  out.push(target(`a new server serves the store in < 30 s (${cold?.impl ?? '?'})`, cold ? 30 / (cold.mean / 1000) : undefined, 1, { detail: cold ? `${(cold.mean / 1000).toFixed(1)} s, ${cold.requests?.total} requests` : '' }));
  return out;
}
