/**
 * S3-compatible servers for benchmarks (decision 0039): versitygw or MinIO, built by
 * scripts/fetch-s3-servers.sh into ~/.cache/kura/bin, started on a free loopback port over a
 * temporary directory with one bucket, stopped by `stop()` (and by a watchdog shell when this
 * process dies). The tests' twin is packages/store/test/helpers/s3-servers.ts.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const BIN = join(process.env.KURA_CACHE ?? join(homedir(), '.cache', 'kura'), 'bin');
export const CREDENTIALS = { accessKeyId: 'kurabenchaccess', secretAccessKey: 'kurabenchsecret-0123456789' };

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Starts `kind` ('versitygw' | 'minio'); resolves with { endpoint, credentials, bucket, dir, stop }. */
export async function startS3Server(kind, bucket = 'kura-bench') {
  const binary = join(BIN, kind);
  if (!existsSync(binary)) throw new Error(`${binary} is missing: run bash scripts/fetch-s3-servers.sh`);
  const dir = mkdtempSync(join(tmpdir(), `kura-bench-${kind}-`));
  const data = join(dir, 'data');
  mkdirSync(data);
  const port = await freePort();
  const consolePort = await freePort();
  const args =
    kind === 'versitygw'
      ? ['--access', CREDENTIALS.accessKeyId, '--secret', CREDENTIALS.secretAccessKey, '--port', `127.0.0.1:${port}`, '--keep-alive', '--quiet', 'posix', data]
      : ['server', data, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'];
  const script = `"$@" & c=$!; trap 'kill $c 2>/dev/null; wait $c' TERM INT; for i in $(seq 14400); do kill -0 ${process.pid} 2>/dev/null && kill -0 $c 2>/dev/null || break; sleep 0.5; done; kill $c 2>/dev/null; wait $c`;
  const child = spawn('bash', ['-c', script, 'watchdog', binary, ...args], {
    env: { ...process.env, MINIO_ROOT_USER: CREDENTIALS.accessKeyId, MINIO_ROOT_PASSWORD: CREDENTIALS.secretAccessKey, MINIO_BROWSER: 'off', MINIO_UPDATE: 'off' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${kind} exited: ${err}`);
    const up = await new Promise((resolve) => {
      const s = connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (up && (kind !== 'minio' || (await fetch(`http://127.0.0.1:${port}/minio/health/ready`).then((r) => r.ok, () => false)))) break;
    if (Date.now() > deadline) throw new Error(`${kind} did not start: ${err}`);
    await sleep(50);
  }
  const endpoint = `http://127.0.0.1:${port}`;
  // The bucket, with a signed request (the store's own client is the simplest signer at hand).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { S3Client, CreateBucketCommand } = await import('@aws-sdk/client-s3');
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: CREDENTIALS });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  client.destroy();
  return {
    kind,
    endpoint,
    credentials: CREDENTIALS,
    bucket,
    dir,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, sleep(10_000)]);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
