/**
 * Real S3-compatible servers on loopback for tests (decision 0039): versitygw (posix backend)
 * and MinIO, built once per machine by scripts/fetch-s3-servers.sh into ~/.cache/kura/bin. Each
 * runs on a free port over a fresh temporary directory, under a watchdog shell that stops it
 * when this process dies (a killed test worker leaves no server behind) or after an hour.
 * A missing binary fails the test with the command that builds it: never a skip.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from './ports.js';

export { freePort };

export type S3ServerKind = 'versitygw' | 'minio';

export interface S3Server {
  kind: S3ServerKind;
  /** `http://127.0.0.1:PORT` */
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** A bucket made for the test. */
  bucket: string;
  /** Makes another bucket (a test that wants one of its own). */
  makeBucket(name: string): Promise<void>;
  /** Stops the server and starts it again over the same data, on the same port. */
  restart(): Promise<void>;
  /** Everything it wrote so far. */
  output(): string;
  stop(): Promise<void>;
}

// (the pinned SDK's notice that its 2027 releases need Node 22: noise in test output)
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const BIN = join(process.env.KURA_CACHE ?? join(homedir(), '.cache', 'kura'), 'bin');
const ACCESS = 'kuratestaccess';
const SECRET = 'kuratestsecret-0123456789';

export function s3ServerBinary(kind: S3ServerKind): string {
  const path = join(BIN, kind);
  if (!existsSync(path)) throw new Error(`${path} is missing: bash scripts/fetch-s3-servers.sh builds it (npm test runs it)`);
  return path;
}

/** Starts a server of `kind` with a bucket named `bucket`. */
export async function startS3Server(kind: S3ServerKind, bucket = 'kura-test'): Promise<S3Server> {
  const binary = s3ServerBinary(kind);
  const dir = mkdtempSync(join(tmpdir(), `kura-${kind}-`));
  const data = join(dir, 'data');
  mkdirSync(data);
  const port = await freePort();
  const consolePort = await freePort();
  let child: ChildProcess | undefined;
  let out = '';
  const launch = async () => {
    const args =
      kind === 'versitygw'
        ? ['--access', ACCESS, '--secret', SECRET, '--port', `127.0.0.1:${port}`, '--keep-alive', '--quiet', 'posix', data]
        : ['server', data, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'];
    // The watchdog: the server dies with this process, or after an hour at most.
    const script = `"$@" & c=$!; trap 'kill $c 2>/dev/null; wait $c' TERM INT; for i in $(seq 7200); do kill -0 ${process.pid} 2>/dev/null && kill -0 $c 2>/dev/null || break; sleep 0.5; done; kill $c 2>/dev/null; wait $c`;
    child = spawn('bash', ['-c', script, 'watchdog', binary, ...args], {
      env: { ...process.env, MINIO_ROOT_USER: ACCESS, MINIO_ROOT_PASSWORD: SECRET, MINIO_BROWSER: 'off', MINIO_UPDATE: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    await ready(port, child, () => out, kind);
  };
  const stopChild = async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000)]);
    if (c.exitCode === null) c.kill('SIGKILL');
  };
  await launch();
  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: ACCESS, secretAccessKey: SECRET };
  const makeBucket = async (name: string) => {
    const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
    try {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    } finally {
      client.destroy();
    }
  };
  await makeBucket(bucket);
  return {
    kind,
    endpoint,
    credentials,
    bucket,
    makeBucket,
    output: () => out,
    restart: async () => {
      await stopChild();
      await launch();
    },
    stop: async () => {
      await stopChild();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until the server accepts connections (and MinIO's S3 API answers). */
async function ready(port: number, child: ChildProcess, output: () => string, kind: S3ServerKind): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${kind} exited (${child.exitCode}) before it was ready:\n${output()}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (up && (kind !== 'minio' || (await fetch(`http://127.0.0.1:${port}/minio/health/ready`).then((r) => r.ok, () => false)))) return;
    await sleep(50);
  }
  throw new Error(`${kind} was not ready on port ${port} within 30 s:\n${output()}`);
}
