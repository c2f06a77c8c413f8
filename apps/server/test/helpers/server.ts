/** A real server on 127.0.0.1 (a random port) over a fresh store in a temp dir, and a client. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { build, type BuildOptions } from '../../src/app.js';
import type { ServerConfigInput } from '../../src/config.js';

export interface TestServer {
  app: FastifyInstance;
  url: string;
  dir: string;
  close(): Promise<void>;
}

const open: TestServer[] = [];

export async function startServer(config: ServerConfigInput = {}, options: Omit<BuildOptions, 'config'> = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'kura-http-'));
  // Semantic search off unless a test asks (it loads the model and embeds in the background).
  const app = await build({ config: { store: join(dir, 'store'), noAuth: true, logLevel: 'silent', semantic: 'off', ...config }, ...options });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address() as { port: number };
  const s: TestServer = {
    app,
    url: `http://127.0.0.1:${addr.port}`,
    dir,
    close: async () => {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  open.push(s);
  return s;
}

export async function closeAll(): Promise<void> {
  await Promise.all(open.splice(0).map((s) => s.close()));
}

export interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  json: any;
}

/** One request; the body is read whole, and parsed when it is JSON. */
export async function call(
  base: string,
  method: string,
  path: string,
  opts: { body?: string | Uint8Array | AsyncIterable<Uint8Array>; json?: unknown; headers?: Record<string, string>; token?: string } = {},
): Promise<Res> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body = opts.body as any;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] ??= 'application/json';
  }
  const r = await request(`${base}${path}`, { method: method as any, headers, body });
  const buf = Buffer.from(await r.body.arrayBuffer());
  const type = String(r.headers['content-type'] ?? '');
  return { status: r.statusCode, headers: r.headers, body: buf, json: type.startsWith('application/json') && buf.length ? JSON.parse(buf.toString()) : undefined };
}

/** The error code of an error response, asserting its shape. */
export function errorCode(res: Res): string {
  const e = res.json?.error;
  if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || typeof e.requestId !== 'string') {
    throw new Error(`not an error body (status ${res.status}): ${res.body.toString().slice(0, 300)}`);
  }
  if (e.requestId !== res.headers['x-request-id']) throw new Error('error requestId differs from x-request-id');
  if (/\n\s+at /.test(e.message)) throw new Error('stack trace in an error message');
  return e.code;
}
