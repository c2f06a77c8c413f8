/**
 * The `copy` suite (issue 50, item 2; decision 0061): `kura copy` between two stores on one S3
 * server (versitygw, started here) against `restic copy` between two repositories on the same
 * server, the same files in both sources, every request counted by a proxy in front of the
 * server. Quick: 64 MiB of unique text in 4 MiB files; full: 512 MiB. Each source is filled
 * first (not timed), and Kura's is then opened with an empty cache, so that it reads from the
 * bucket as restic does; the figures are the copy alone: MB/s and requests per GB. A second copy
 * (nothing new) is timed and counted too: what a nightly copy costs when little changed.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Store, copyStore } from '@kura/store';
import { MiB, textLike } from '../lib/data.mjs';
import { target } from '../lib/report.mjs';
import { startS3Server } from '../lib/s3-server.mjs';
import { startCountingProxy } from '../lib/counting-proxy.mjs';

const log = (msg) => process.stderr.write(`[copy] ${msg}\n`);
const exec = promisify(execFile);

function input(root, total) {
  const src = join(root, 'input');
  for (let i = 0; i < total / (4 * MiB); i++) {
    const sub = join(src, `d${i % 8}`);
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `f${i}.txt`), textLike(4 * MiB, 5000 + i, 256 + (i % 7) * 64));
  }
  return { src, files: readdirSync(src, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath ?? e.path, e.name)).sort() };
}

const perGB = (requests, bytes) => (requests * 1e9) / bytes;

export async function run({ full }) {
  const total = (full ? 512 : 64) * MiB;
  const root = mkdtempSync(join(tmpdir(), 'kura-bench-copy-'));
  const srv = await startS3Server('versitygw');
  const proxy = await startCountingProxy(srv.endpoint);
  const rows = [];
  const group = `copy ${total / MiB} MiB of text, S3 to S3 (versitygw)`;
  try {
    const data = input(root, total);
    const at = (prefix) => ({ location: `s3://${srv.bucket}/${prefix}`, options: { cacheDir: mkdtempSync(join(root, 'cache-')), s3: { endpoint: proxy.endpoint, credentials: srv.credentials } } });
    // The source, filled (not timed).
    const a = at('kura-a');
    const filling = await Store.init(a.location, a.options);
    for await (const o of filling.putFiles(data.files.map((path) => ({ path })))) if (o.error) throw o.error;
    await filling.close();
    // Read from the bucket, as restic reads its repository: a server with an empty cache.
    const src = await Store.open(a.location, { ...a.options, cacheDir: mkdtempSync(join(root, 'cache-')) });
    const b = at('kura-b');
    const made = await Store.init(b.location, { ...b.options, chunking: { avg: src.config.chunking.avg, seed: src.config.chunking.seed } });
    await made.close();
    for (const pass of ['first', 'again']) {
      await proxy.take();
      const t = performance.now();
      const dst = await Store.open(b.location, b.options);
      const report = await copyStore(src, dst);
      await dst.close();
      const seconds = (performance.now() - t) / 1000;
      const requests = await proxy.take();
      if (report.errors.length) throw new Error(`copy failed: ${JSON.stringify(report.errors[0])}`);
      rows.push({ family: 'copy', group, impl: `kura copy (${pass})`, size: total, ms: seconds * 1000, mbPerSec: total / 1e6 / seconds, requests, perGB: perGB(requests.total, total), sent: report.bytesSent });
      log(`kura copy (${pass}): ${(total / 1e6 / seconds).toFixed(1)} MB/s, ${requests.total} requests, ${(report.bytesSent / 1e6).toFixed(1)} MB sent`);
    }
    await src.close();

    let version;
    try {
      version = execFileSync('restic', ['version'], { encoding: 'utf8' }).trim();
    } catch {
      rows.push({ family: 'copy', group, impl: 'restic copy (first)', unavailable: 'restic not installed' });
    }
    if (version) {
      const cache = mkdtempSync(join(root, 'restic-cache-'));
      // (restic refuses a secondary repository except where one is read: init with the chunker
      // parameters copied, and copy)
      const env = (repo, from = false) => ({
        ...process.env,
        RESTIC_PASSWORD: 'bench',
        RESTIC_REPOSITORY: `s3:${proxy.endpoint}/${srv.bucket}/${repo}`,
        ...(from ? { RESTIC_FROM_PASSWORD: 'bench', RESTIC_FROM_REPOSITORY: `s3:${proxy.endpoint}/${srv.bucket}/restic-a` } : {}),
        AWS_ACCESS_KEY_ID: srv.credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: srv.credentials.secretAccessKey,
        RESTIC_CACHE_DIR: cache,
      });
      const o = ['-q', '-o', 's3.bucket-lookup=path'];
      await exec('restic', ['init', ...o], { env: env('restic-a') });
      await exec('restic', ['backup', ...o, '--compression', 'auto', data.src], { env: env('restic-a'), maxBuffer: 1 << 24 });
      // The destination shares the source's chunker parameters (as a Kura copy's destination
      // shares its chunking), so that restic copies blobs instead of re-chunking.
      await exec('restic', ['init', ...o, '--copy-chunker-params'], { env: env('restic-b', true) });
      for (const pass of ['first', 'again']) {
        await proxy.take();
        const t = performance.now();
        await exec('restic', ['copy', ...o], { env: env('restic-b', true), maxBuffer: 1 << 24 });
        const seconds = (performance.now() - t) / 1000;
        const requests = await proxy.take();
        rows.push({ family: 'copy', group, impl: `restic copy (${pass})`, size: total, ms: seconds * 1000, mbPerSec: total / 1e6 / seconds, requests, perGB: perGB(requests.total, total), version });
        log(`restic copy (${pass}): ${(total / 1e6 / seconds).toFixed(1)} MB/s, ${requests.total} requests`);
      }
    }
  } finally {
    await proxy.stop();
    await srv.stop();
    rmSync(root, { recursive: true, force: true });
  }
  return rows;
}

const reqs = (r) => r.requests && `${r.requests.total} (${['PUT', 'GET', 'POST', 'HEAD', 'DELETE'].filter((m) => r.requests[m]).map((m) => `${m} ${r.requests[m]}`).join(', ')})`;

export const families = {
  copy: {
    title: 'copying a store: kura copy against restic copy, both between two repositories on one S3 server (requests counted by a proxy)',
    ratio: () => undefined,
    extra: [
      { header: 'MB/s', value: (r) => r.mbPerSec?.toFixed(1) },
      { header: 'requests', value: reqs },
      { header: 'requests/GB', value: (r) => r.perGB?.toFixed(0) },
    ],
  },
};

export function targets(rows) {
  const kura = rows.find((r) => r.family === 'copy' && r.impl === 'kura copy (first)');
  const restic = rows.find((r) => r.family === 'copy' && r.impl === 'restic copy (first)' && !r.unavailable);
  return [
    target("requests per GB copied <= restic copy's", kura && restic ? restic.perGB / kura.perGB : undefined, 1, { detail: kura && restic ? `kura ${kura.perGB.toFixed(0)}, restic ${restic.perGB.toFixed(0)} per GB (ratio restic/kura)` : '', missing: 'restic not measured' }),
  ];
}
