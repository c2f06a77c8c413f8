/**
 * kura-server as a real process: spawned with KURA_* settings, spoken to over real sockets
 * with undici. SIGTERM in the middle of uploads, bounded memory on a 200 MiB stream each way,
 * resumable uploads across an aborted request and a restart, bearer tokens on the wire.
 *
 * Needs the build (bash scripts/build.sh): it runs apps/server/dist/main.js.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Store } from '@kura/store';
import { Agent, request } from 'undici';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './helpers/process.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const KiB = 1 << 10;
const MiB = 1 << 20;

const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

// ---- processes, temp dirs, clean-up --------------------------------------------------------

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface Server {
  child: ChildProcess;
  pid: number;
  port: number;
  url: string;
  agent: Agent;
  /** Everything it wrote to stdout and stderr (pino JSON lines, info and up). */
  output(): string;
  exited: Promise<Exit>;
}

const servers: Server[] = [];
const agents: Agent[] = [];
const temps: string[] = [];
const stores: Store[] = [];

afterEach(async (context) => {
  if (context.task.result?.state === 'fail') {
    for (const s of servers) console.error(`kura-server pid ${s.pid} on port ${s.port} (exit ${s.child.exitCode ?? s.child.signalCode ?? 'running'}):\n${s.output()}`);
  }
  for (const s of servers.splice(0)) {
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    await s.exited;
  }
  await Promise.all(agents.splice(0).map((a) => a.destroy().catch(() => undefined)));
  await Promise.all(stores.splice(0).map((s) => s.close().catch(() => undefined)));
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});

beforeAll(() => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: build first (bash scripts/build.sh)`);
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'kura-server-proc-'));
  temps.push(d);
  return d;
}

function newAgent(): Agent {
  const a = new Agent({ headersTimeout: 120_000, bodyTimeout: 120_000, connectTimeout: 10_000 });
  agents.push(a);
  return a;
}

/** The environment without any KURA_* of the caller's, plus these settings. */
function envWith(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('KURA_')) env[k] = v;
  return { ...env, KURA_LOG_LEVEL: 'info', ...settings };
}

async function startServer(store: string, settings: Record<string, string> = {}): Promise<Server> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(process.execPath, [MAIN], {
      // Semantic search off: these tests bound the store's memory, not the model's (~220 MiB).
      env: envWith({ KURA_STORE: store, KURA_HOST: '127.0.0.1', KURA_PORT: String(port), KURA_SEMANTIC: 'off', ...settings }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const server: Server = { child, pid: child.pid!, port, url: `http://127.0.0.1:${port}`, agent: newAgent(), output: () => out, exited };
    servers.push(server);

    // Up when this child says it listens on the port (not merely when something there answers:
    // other processes on the machine take ports too) and its health check answers.
    const deadline = Date.now() + 30_000;
    let up = false;
    const listening = `"url":"${server.url}"`;
    while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
      if (out.includes(listening)) {
        try {
          const r = await request(`${server.url}/healthz`, { dispatcher: server.agent });
          const body = await r.body.json();
          if (r.statusCode === 200 && (body as { status?: string }).status === 'ok') {
            up = true;
            break;
          }
        } catch {
          // not answering yet
        }
      }
      await sleep(50);
    }
    if (up) return server;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    // Someone took the port between our probe and the server's listen: another one.
    if (/EADDRINUSE/.test(out) && attempt < 5) continue;
    throw new Error(`kura-server did not come up on port ${port}:\n${out}`);
  }
}

/** SIGTERM (or another signal) and the exit. */
async function stopServer(server: Server, signal: NodeJS.Signals = 'SIGTERM'): Promise<Exit> {
  server.child.kill(signal);
  return server.exited;
}

async function openStore(dir: string): Promise<Store> {
  const s = await Store.open(dir);
  stores.push(s);
  return s;
}

// ---- requests ------------------------------------------------------------------------------

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
  json: any;
}

async function call(
  server: Server,
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  opts: { body?: Buffer | Readable | string; headers?: Record<string, string>; token?: string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  const r = await request(server.url + path, { method, body: opts.body ?? null, headers, dispatcher: server.agent });
  const bytes = Buffer.from(await r.body.arrayBuffer());
  const type = String(r.headers['content-type'] ?? '');
  return { status: r.statusCode, headers: r.headers, bytes, json: type.includes('json') && bytes.length ? JSON.parse(bytes.toString('utf8')) : undefined };
}

/** An error reply in the API's one shape, with this status and code. */
function expectError(r: Reply, status: number, code: string): void {
  expect({ status: r.status, code: r.json?.error?.code }, r.bytes.toString('utf8')).toEqual({ status, code });
  expect(typeof r.json.error.message).toBe('string');
  expect(r.json.error.requestId).toBe(r.headers['x-request-id']);
}

/** Polls `check` until it returns true (a deadline guards against hanging, not speed). */
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** The bytes in pieces, each after a pause; progress counts what was handed over. undici writes
 *  a request's headers together with its body's first piece, so a second piece handed over
 *  means the request line went out one pause before. */
function trickle(bytes: Buffer, piece: number, delayMs: () => number, progress: { sent: number; pieces?: number }): Readable {
  return Readable.from(
    (async function* () {
      for (let at = 0; at < bytes.length; at += piece) {
        await sleep(delayMs());
        const p = bytes.subarray(at, at + piece);
        progress.sent += p.length;
        progress.pieces = (progress.pieces ?? 0) + 1;
        yield p;
      }
    })(),
    { objectMode: false },
  );
}

/** Peak VmRSS of a process, sampled every 100 ms until stop(). */
function rssMonitor(pid: number) {
  const read = (): number => {
    try {
      const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return m ? Number(m[1]) * KiB : 0;
    } catch {
      return 0; // gone
    }
  };
  let peak = read();
  let samples = 1;
  const timer = setInterval(() => {
    peak = Math.max(peak, read());
    samples++;
  }, 100);
  return {
    now: read,
    stop(): { peak: number; samples: number } {
      clearInterval(timer);
      peak = Math.max(peak, read());
      return { peak, samples: samples + 1 };
    },
  };
}

// ---- 1. SIGTERM in the middle of uploads ---------------------------------------------------

/** Splits raw HTTP/1.1 responses (Content-Length framed) read off one socket. */
function parseResponses(raw: Buffer): { status: number; headers: Record<string, string>; body: Buffer }[] {
  const out: { status: number; headers: Record<string, string>; body: Buffer }[] = [];
  let at = 0;
  while (at < raw.length) {
    const end = raw.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const [statusLine, ...lines] = raw.subarray(at, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const i = l.indexOf(':');
      headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body: raw.subarray(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  return out;
}

describe('kura-server process', () => {
  it('SIGTERM during uploads: every acknowledged document is stored whole; late requests are refused', async () => {
    const storeDir = join(tempDir(), 'store');
    const SHUTDOWN_MS = 10_000;
    const server = await startServer(storeDir, { KURA_NO_AUTH: '1', KURA_SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_MS) });

    // fast: whole buffers at once. sized/chunked: trickled over ~3-4 s, with Content-Length
    // (<= 8 MiB: the server collects the body) or chunked (the server streams it into put).
    // crawl: would take ~20 s, longer than the shutdown timeout: cut off, never acknowledged.
    type Mode = 'fast' | 'sized' | 'chunked' | 'crawl';
    const modes: Mode[] = ['fast', 'fast', 'fast', 'fast', 'sized', 'sized', 'sized', 'sized', 'sized', 'chunked', 'chunked', 'chunked', 'chunked', 'chunked', 'crawl', 'crawl'];
    interface Upload {
      i: number;
      mode: Mode;
      bytes: Buffer;
      digest: string;
      progress: { sent: number; pieces?: number };
      sentAtSigterm?: number;
      status?: number;
      reply?: any;
      error?: unknown;
      doneAt?: number;
    }
    const uploads: Upload[] = modes.map((mode, i) => {
      const bytes = randomBytes(MiB + randomInt(3 * MiB + 1));
      return { i, mode, bytes, digest: sha(bytes), progress: { sent: 0 } };
    });

    let sigtermAt = Infinity;
    const send = async (u: Upload): Promise<void> => {
      let body: Buffer | Readable;
      const headers: Record<string, string> = { 'content-type': 'application/octet-stream', 'x-kura-sha256': u.digest };
      if (u.mode === 'fast') {
        body = u.bytes;
        u.progress.sent = u.bytes.length;
      } else if (u.mode === 'crawl') {
        body = trickle(u.bytes, 16 * KiB, () => 300, u.progress);
      } else {
        const pieces = Math.ceil(u.bytes.length / (64 * KiB));
        body = trickle(u.bytes, 64 * KiB, () => 3000 / pieces + randomInt(20), u.progress);
      }
      if (u.mode === 'sized' || (u.mode === 'crawl' && u.i % 2 === 0)) headers['content-length'] = String(u.bytes.length);
      try {
        const r = await request(`${server.url}/v1/documents?path=${encodeURIComponent(`up/${u.i}.bin`)}`, { method: 'POST', body, headers, dispatcher: server.agent });
        u.status = r.statusCode;
        const text = await r.body.text();
        try {
          u.reply = JSON.parse(text);
        } catch {
          u.reply = text;
        }
      } catch (e) {
        u.error = e;
      }
      u.doneAt = performance.now();
    };
    const all = Promise.all(uploads.map(send));

    // A request on a connection of its own, in flight at SIGTERM, with a second one pipelined
    // behind it only after the server stopped listening: the first is drained, the second refused.
    const keepAlive = randomBytes(512 * KiB);
    const socket = connect(server.port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (d: Buffer) => received.push(d));
    const socketClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.write(`POST /v1/documents?path=keepalive.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: ${keepAlive.length}\r\n\r\n`);
    socket.write(keepAlive.subarray(0, 4 * KiB));

    // SIGTERM once uploads are under way: some acknowledged, every trickling one started. A
    // first piece handed to undici is not yet a request the server has read (its headers go out
    // with that piece, and a busy server may take the signal first: it then refuses the request
    // with 503, correctly, where this test means to see it in flight); the second piece comes a
    // pause later.
    const started = performance.now();
    const trickling = uploads.filter((u) => u.mode !== 'fast');
    await until(
      'uploads under way',
      () => (uploads.filter((u) => u.status === 201).length >= 2 || performance.now() - started > 1500) && trickling.every((u) => (u.progress.pieces ?? 0) >= 2),
    );
    for (const u of uploads) u.sentAtSigterm = u.progress.sent;
    sigtermAt = performance.now();
    server.child.kill('SIGTERM');

    // Once it stops taking connections, new requests fail: none is acknowledged.
    await until(
      'the server to stop listening',
      async () => {
        try {
          const r = await request(`${server.url}/healthz`, { dispatcher: newAgent(), reset: true });
          await r.body.dump();
          return r.statusCode !== 200;
        } catch {
          return true;
        }
      },
      30_000,
      25,
    );
    const late = await Promise.all(
      [0, 1, 2].map(async (i) => {
        const bytes = randomBytes(256 * KiB);
        try {
          const r = await request(`${server.url}/v1/documents?path=late/${i}.bin`, { method: 'POST', body: bytes, dispatcher: newAgent(), reset: true });
          return { digest: sha(bytes), status: r.statusCode, body: await r.body.text() };
        } catch (e) {
          return { digest: sha(bytes), error: (e as Error & { code?: string }).code ?? String(e) };
        }
      }),
    );

    // The rest of the keep-alive body, then a pipelined request on the same connection.
    socket.write(keepAlive.subarray(4 * KiB));
    socket.write(`POST /v1/documents?path=pipelined.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: 5\r\n\r\nhello`);

    const exit = await server.exited;
    await all;
    await Promise.race([socketClosed, sleep(5_000)]);
    socket.destroy();
    const output = server.output();
    expect(exit, output).toEqual({ code: 0, signal: null });

    const acked = uploads.filter((u) => u.status === 201);
    const summary = uploads.map((u) => `${u.i}:${u.mode}:${u.status ?? (u.error as Error)?.message}${(u.doneAt ?? 0) > sigtermAt ? '(after)' : ''}`).join(' ');
    console.log(`acknowledged ${acked.length}/${uploads.length}: ${summary}; late: ${JSON.stringify(late)}`);

    // Every acknowledged upload's reply names its bytes.
    for (const u of acked) expect(u.reply, `upload ${u.i}`).toMatchObject({ digest: u.digest, size: u.bytes.length });
    // Refusals are in the API's error shape; a trickle cut off mid-body has no reply at all.
    for (const u of uploads) if (u.status !== undefined && u.status !== 201) expect(u.reply?.error?.code, `upload ${u.i}: ${JSON.stringify(u.reply)}`).toBeTypeOf('string');
    // Whatever was in flight at SIGTERM and could finish within the shutdown timeout did.
    for (const u of uploads.filter((x) => x.mode === 'sized' || x.mode === 'chunked')) {
      expect(u.status, `upload ${u.i} (${u.mode}, ${u.sentAtSigterm}/${u.bytes.length} bytes sent at SIGTERM): ${String(u.error)}`).toBe(201);
    }
    expect(uploads.filter((u) => u.status === 201 && u.sentAtSigterm! < u.bytes.length).length).toBeGreaterThan(0);
    // The crawls outlasted the shutdown timeout: cut off, not acknowledged.
    for (const u of uploads.filter((x) => x.mode === 'crawl')) expect(u.status, `crawl ${u.i}`).toBeUndefined();
    expect(output).toContain('shutdown timeout: cutting off');
    // After the server stopped listening, nothing new was taken.
    for (const l of late) expect(l.status, JSON.stringify(l)).toBeUndefined();

    // The connection kept across SIGTERM: its request in flight finished; the one pipelined
    // behind it after the server stopped listening was refused with 503 UNAVAILABLE.
    const responses = parseResponses(Buffer.concat(received));
    expect(responses.map((r) => r.status), Buffer.concat(received).toString('latin1')).toEqual([201, 503]);
    expect(JSON.parse(responses[0]!.body.toString())).toMatchObject({ digest: sha(keepAlive), size: keepAlive.length });
    const refused = JSON.parse(responses[1]!.body.toString());
    expect(refused.error?.code, responses[1]!.body.toString()).toBe('UNAVAILABLE');
    expect(refused.error.requestId).toBe(responses[1]!.headers['x-request-id']);
    expect(responses[1]!.headers.connection).toBe('close');

    // The store, opened in this process: every acknowledged document whole, and sound.
    const store = await openStore(storeDir);
    const expected = new Map(acked.map((u) => [u.digest, u.bytes]));
    expected.set(sha(keepAlive), keepAlive);
    for (const [digest, bytes] of expected) {
      expect(await store.has(digest), digest).toBe(true);
      const back = await store.getBytes(digest);
      expect(back.length).toBe(bytes.length);
      expect(sha(back)).toBe(digest);
      expect(Buffer.from(back.buffer, back.byteOffset, back.byteLength).equals(bytes)).toBe(true);
    }
    for (const l of late) expect(await store.has(l.digest)).toBe(false);
    const report = await store.verify();
    expect(report.ok, JSON.stringify(report)).toBe(true);
    expect(report.documentsChecked).toBeGreaterThanOrEqual(expected.size);
  }, 180_000);

  // ---- 2. 200 MiB each way in bounded memory -----------------------------------------------

  it('streams a 200 MiB upload and download with the server RSS bounded', async () => {
    const SIZE_MIB = 200;
    const LIMIT = 350 * MiB;
    const server = await startServer(join(tempDir(), 'store'), { KURA_NO_AUTH: '1' });

    /** Deterministic pseudo-random 1 MiB pieces (xorshift32), never more than one in memory. */
    function* pieces(seed: number, count: number, hash?: ReturnType<typeof createHash>): Generator<Buffer> {
      let x = seed | 0 || 1;
      for (let i = 0; i < count; i++) {
        const words = new Uint32Array(MiB / 4);
        for (let j = 0; j < words.length; j++) {
          x ^= x << 13;
          x ^= x >>> 17;
          x ^= x << 5;
          words[j] = x;
        }
        const piece = Buffer.from(words.buffer);
        hash?.update(piece);
        yield piece;
      }
    }
    const SEED = 0x9e3779b9;
    const first = createHash('sha256');
    for (const _ of pieces(SEED, SIZE_MIB, first));
    const digest = `sha256:${first.digest('hex')}`;

    // Warm up (modules, wasm, workers), then the baseline.
    const warm = randomBytes(MiB);
    expect((await call(server, 'POST', '/v1/documents', { body: warm })).status).toBe(201);
    const baseline = rssMonitor(server.pid).now();

    const sentHash = createHash('sha256');
    let rss = rssMonitor(server.pid);
    const up = await request(`${server.url}/v1/documents?path=big.bin`, {
      method: 'POST',
      body: Readable.from(pieces(SEED, SIZE_MIB, sentHash), { objectMode: false }),
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(SIZE_MIB * MiB), 'x-kura-sha256': digest },
      dispatcher: server.agent,
    });
    const put = (await up.body.json()) as any;
    const upload = rss.stop();
    expect(up.statusCode, JSON.stringify(put)).toBe(201);
    expect(`sha256:${sentHash.digest('hex')}`).toBe(digest);
    expect(put).toMatchObject({ digest, size: SIZE_MIB * MiB });

    rss = rssMonitor(server.pid);
    const down = await request(`${server.url}/v1/documents/${digest}`, { dispatcher: server.agent });
    expect(down.statusCode).toBe(200);
    expect(down.headers['content-length']).toBe(String(SIZE_MIB * MiB));
    const gotHash = createHash('sha256');
    let got = 0;
    for await (const piece of down.body) {
      gotHash.update(piece as Buffer);
      got += (piece as Buffer).length;
    }
    const download = rss.stop();
    expect(got).toBe(SIZE_MIB * MiB);
    expect(`sha256:${gotHash.digest('hex')}`).toBe(digest);

    const mb = (n: number) => `${(n / MiB).toFixed(0)} MiB`;
    console.log(`server RSS: baseline ${mb(baseline)}, upload peak ${mb(upload.peak)} (${upload.samples} samples), download peak ${mb(download.peak)} (${download.samples} samples)`);
    expect(upload.samples).toBeGreaterThan(2);
    expect(upload.peak).toBeLessThan(LIMIT);
    expect(download.peak).toBeLessThan(LIMIT);
    // Holding the body would add its 200 MiB: the growth stays well below that.
    expect(upload.peak - baseline).toBeLessThan(150 * MiB);
    expect(download.peak - baseline).toBeLessThan(150 * MiB);

    expect(await stopServer(server)).toEqual({ code: 0, signal: null });
  }, 300_000);

  // ---- 3. resumable uploads ----------------------------------------------------------------

  it('resumable upload: an aborted PATCH keeps what arrived, resumes from the offset, finishes; and across a restart', async () => {
    const storeDir = join(tempDir(), 'store');
    const settings = { KURA_NO_AUTH: '1', KURA_SHUTDOWN_TIMEOUT_MS: '1500' };
    let server = await startServer(storeDir, settings);
    const offsetOf = async (location: string): Promise<number> => {
      const r = await call(server, 'GET', location);
      expect(r.status, r.bytes.toString()).toBe(200);
      expect(r.headers['x-kura-upload-offset']).toBe(String(r.json.offset));
      return r.json.offset as number;
    };
    /** A PATCH, retried while the upload is still busy with a request that was cut off. */
    const patch = async (location: string, body: Buffer, start: number): Promise<Reply> => {
      for (;;) {
        const r = await call(server, 'PATCH', location, {
          body,
          headers: { 'content-type': 'application/octet-stream', 'content-range': `bytes ${start}-${start + body.length - 1}/*` },
        });
        if (r.status !== 409 || r.json?.error?.code !== 'UPLOAD_BUSY') return r;
        await sleep(100);
      }
    };

    // --- interrupted and resumed, same process
    const bytes = randomBytes(6 * MiB + 12_345);
    const digest = sha(bytes);
    const created = await call(server, 'POST', '/v1/uploads');
    expect(created.status).toBe(202);
    const location = created.headers.location as string;
    expect(location).toMatch(/^\/v1\/uploads\/[0-9a-f]{32}$/);
    expect(created.json).toMatchObject({ location, offset: 0 });
    expect(created.headers['x-kura-upload-offset']).toBe('0');

    const PART1 = 2 * MiB;
    const p1 = await patch(location, bytes.subarray(0, PART1), 0);
    expect(p1.status, p1.bytes.toString()).toBe(202);
    expect(p1.headers['x-kura-upload-offset']).toBe(String(PART1));
    expect(p1.headers.range).toBe(`0-${PART1 - 1}`);

    // Part 2 trickles; once the server has written some of it, the client goes away.
    const progress = { sent: 0 };
    const abort = new AbortController();
    const cut = request(server.url + location, {
      method: 'PATCH',
      body: trickle(bytes.subarray(PART1), 64 * KiB, () => 30, progress),
      headers: { 'content-type': 'application/octet-stream', 'content-range': `bytes ${PART1}-${bytes.length - 1}/*` },
      signal: abort.signal,
      dispatcher: server.agent,
    }).then(
      async (r) => ({ status: r.statusCode, body: await r.body.text() }),
      (e: Error) => ({ error: e.name }),
    );
    await until('part of the second PATCH to arrive', async () => (await offsetOf(location)) >= PART1 + 512 * KiB, 60_000, 50);
    abort.abort();
    expect(await cut).toEqual({ error: 'AbortError' });
    const sentBeforeAbort = progress.sent;

    // A PATCH from the wrong offset: 416 with the offset to resume from (all that arrived).
    const wrong = await patch(location, Buffer.from('not from here'), 0);
    expectError(wrong, 416, 'RANGE_NOT_SATISFIABLE');
    const resumeAt = Number(wrong.headers['x-kura-upload-offset']);
    expect(wrong.json.error.offset).toBe(resumeAt);
    expect(wrong.headers.range).toBe(`0-${resumeAt - 1}`);
    expect(resumeAt).toBeGreaterThanOrEqual(PART1 + 512 * KiB);
    expect(resumeAt).toBeLessThanOrEqual(PART1 + sentBeforeAbort);
    expect(await offsetOf(location)).toBe(resumeAt);
    const ahead = await patch(location, Buffer.from('too far'), resumeAt + 1);
    expectError(ahead, 416, 'RANGE_NOT_SATISFIABLE');
    expect(ahead.headers['x-kura-upload-offset']).toBe(String(resumeAt));

    const rest = await patch(location, bytes.subarray(resumeAt), resumeAt);
    expect(rest.status, rest.bytes.toString()).toBe(202);
    expect(rest.json.offset).toBe(bytes.length);
    const finished = await call(server, 'PUT', `${location}?digest=${digest}&path=resumed.bin`);
    expect(finished.status, finished.bytes.toString()).toBe(201);
    expect(finished.json).toMatchObject({ digest, size: bytes.length });
    const doc = await call(server, 'GET', `/v1/documents/${digest}`);
    expect(doc.status).toBe(200);
    expect(doc.bytes.equals(bytes)).toBe(true);
    expectError(await call(server, 'GET', location), 404, 'NOT_FOUND');

    // --- across a restart: SIGTERM cuts a PATCH in flight; the offset survives
    const bytes2 = randomBytes(5 * MiB + 777);
    const digest2 = sha(bytes2);
    const created2 = await call(server, 'POST', '/v1/uploads');
    expect(created2.status).toBe(202);
    const location2 = created2.headers.location as string;
    const A = 1536 * KiB;
    const B = 128 * KiB;
    expect((await patch(location2, bytes2.subarray(0, A), 0)).status).toBe(202);

    // One 128 KiB piece, then nothing: still in flight when the shutdown timeout runs out.
    let release!: () => void;
    const hang = new Promise<void>((resolve) => (release = resolve));
    const stuck = request(server.url + location2, {
      method: 'PATCH',
      body: Readable.from(
        (async function* () {
          yield bytes2.subarray(A, A + B);
          await hang;
        })(),
        { objectMode: false },
      ),
      headers: { 'content-type': 'application/octet-stream', 'content-range': `bytes ${A}-${bytes2.length - 1}/*` },
      dispatcher: server.agent,
    }).then(
      (r) => ({ status: r.statusCode }),
      (e: Error & { code?: string }) => ({ error: e.code ?? e.name }),
    );
    await until('the first piece of the stuck PATCH to arrive', async () => (await offsetOf(location2)) === A + B, 60_000, 50);
    const exit = await stopServer(server);
    expect(exit, server.output()).toEqual({ code: 0, signal: null });
    expect(server.output()).toContain('shutdown timeout: cutting off');
    expect(await stuck).toHaveProperty('error');
    release();

    server = await startServer(storeDir, settings);
    expect(await offsetOf(location2)).toBe(A + B);
    const wrong2 = await patch(location2, bytes2.subarray(A), A);
    expectError(wrong2, 416, 'RANGE_NOT_SATISFIABLE');
    expect(wrong2.headers['x-kura-upload-offset']).toBe(String(A + B));
    const rest2 = await patch(location2, bytes2.subarray(A + B), A + B);
    expect(rest2.status, rest2.bytes.toString()).toBe(202);
    expect(rest2.json.offset).toBe(bytes2.length);
    const finished2 = await call(server, 'PUT', location2, { headers: { 'x-kura-sha256': digest2 } });
    expect(finished2.status, finished2.bytes.toString()).toBe(201);
    expect(finished2.json).toMatchObject({ digest: digest2, size: bytes2.length });
    const doc2 = await call(server, 'GET', `/v1/documents/${digest2}`);
    expect(doc2.status).toBe(200);
    expect(doc2.bytes.equals(bytes2)).toBe(true);
    expect(await stopServer(server)).toEqual({ code: 0, signal: null });
  }, 180_000);

  // ---- 4. bearer tokens over a real socket -------------------------------------------------

  it('auth: scopes, missing and wrong tokens, open health check', async () => {
    const READ = 'r3ad-only-token-0123456789';
    const WRITE = 'wr1te-token-abcdefghijklmnop';
    const server = await startServer(join(tempDir(), 'store'), { KURA_TOKENS: `reader=${READ}:read; writer=${WRITE}:write` });
    const body = randomBytes(64 * KiB);
    const digest = sha(body);
    const post = (token?: string) => call(server, 'POST', '/v1/documents?path=auth.bin', { body, token, headers: { 'content-type': 'application/octet-stream' } });

    const health = await call(server, 'GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: 'ok' });

    expectError(await post(READ), 403, 'FORBIDDEN');
    const none = await post();
    expectError(none, 401, 'UNAUTHORIZED');
    expect(none.headers['www-authenticate']).toMatch(/^Bearer realm="kura"/);
    const wrong = await post('not-a-token-of-this-server-0000');
    expectError(wrong, 401, 'UNAUTHORIZED');
    expect(wrong.headers['www-authenticate']).toMatch(/^Bearer /);
    expectError(await post(`${WRITE}x`), 401, 'UNAUTHORIZED');

    const ok = await post(WRITE);
    expect(ok.status, ok.bytes.toString()).toBe(201);
    expect(ok.json).toMatchObject({ digest, size: body.length });
    expect(ok.headers.location).toBe(`/v1/documents/${digest}`);

    // Reading: the read token, not anonymous; the write token does not include read.
    const got = await call(server, 'GET', `/v1/documents/${digest}`, { token: READ });
    expect(got.status).toBe(200);
    expect(got.bytes.equals(body)).toBe(true);
    expectError(await call(server, 'GET', `/v1/documents/${digest}`), 401, 'UNAUTHORIZED');
    expectError(await call(server, 'GET', `/v1/documents/${digest}`, { token: WRITE }), 403, 'FORBIDDEN');
    expectError(await call(server, 'POST', '/v1/gc', { token: WRITE }), 403, 'FORBIDDEN');

    expect(await stopServer(server)).toEqual({ code: 0, signal: null });
  }, 120_000);
});
