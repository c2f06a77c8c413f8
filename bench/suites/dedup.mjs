/**
 * The `dedup` suite: a real corpus nobody here wrote — consecutive releases of the `typescript`
 * npm package (about 22 MB of JavaScript and declarations each), fetched with `npm pack` into
 * bench/.cache (not committed) on first use — ingested release by release at average chunk
 * sizes of 8, 16, 64 and 256 KiB: dedup ratio, compression ratio, ingest MB/s, bytes stored;
 * and `restic backup` of the same releases, one backup each, in the same run.
 * Quick: 3 releases; --full: 5.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Store } from '@kura/store';
import { target } from '../lib/report.mjs';

const CACHE = fileURLToPath(new URL('../.cache/corpus/', import.meta.url));
export const RELEASES = ['5.4.5', '5.5.4', '5.6.3', '5.7.3', '5.8.3'];
const MiB = 1024 * 1024;
const log = (msg) => process.stderr.write(`[dedup] ${msg}\n`);

/** The unpacked release, fetched and extracted once (the search suite measures a store of them too). */
export function release(version) {
  const dir = join(CACHE, `typescript-${version}`);
  if (existsSync(join(dir, 'package', 'package.json'))) return dir;
  mkdirSync(dir, { recursive: true });
  const tgz = execFileSync('npm', ['pack', `typescript@${version}`, '--pack-destination', dir, '--silent'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split('\n').pop();
  execFileSync('tar', ['xzf', join(dir, tgz), '-C', dir]);
  rmSync(join(dir, tgz));
  return dir;
}

export function filesOf(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

const sizeOf = (files) => files.reduce((n, f) => n + statSync(f).size, 0);
export const dirSize = (dir) => filesOf(dir).reduce((n, f) => n + statSync(f).size, 0);

export async function run({ full = false } = {}) {
  const versions = RELEASES.slice(0, full ? 5 : 3);
  let dirs;
  try {
    dirs = versions.map(release);
  } catch (e) {
    const why = `could not fetch the corpus with npm pack: ${e.message.split('\n')[0]}`;
    return [{ family: 'dedup', group: 'typescript releases', impl: 'kura', size: 0, unavailable: why }];
  }
  const perRelease = dirs.map((d) => filesOf(d));
  const total = perRelease.reduce((n, fs) => n + sizeOf(fs), 0);
  log(`corpus: typescript ${versions.join(', ')}: ${(total / MiB).toFixed(0)} MiB in ${perRelease.flat().length} files`);
  const root = mkdtempSync(join(tmpdir(), 'kura-bench-dedup-'));
  const rows = [];
  try {
    for (const avgKiB of [8, 16, 64, 256]) {
      const store = await Store.init(join(root, `s${avgKiB}`), { chunking: { avg: avgKiB * 1024 } });
      const started = performance.now();
      for (const files of perRelease) {
        for await (const o of store.putFiles(files.map((path) => ({ path })))) if (o.error) throw o.error;
      }
      const seconds = (performance.now() - started) / 1000;
      const s = await store.stats();
      await store.close();
      rows.push(row(`avg ${avgKiB} KiB`, 'kura', total, seconds, { unique: s.uniqueChunkBytes, stored: s.packBytes, dedupRatio: s.dedupRatio, compressionRatio: s.compressionRatio, avgKiB }));
      log(`avg ${avgKiB} KiB: unique ${((100 * s.uniqueChunkBytes) / total).toFixed(0)}% of input, stored ${(s.packBytes / MiB).toFixed(1)} MiB, ${(total / 1e6 / seconds).toFixed(0)} MB/s`);
      rmSync(join(root, `s${avgKiB}`), { recursive: true, force: true });
    }
    rows.push(...restic(root, dirs, total));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return rows;
}

function row(group, impl, bytes, seconds, extra) {
  const ms = seconds * 1000;
  return {
    family: 'dedup', group, impl, name: `${group} ${impl}`, size: bytes, bytes, opsPerSec: 1 / seconds, mbPerSec: bytes / 1e6 / seconds,
    mean: ms, p50: ms, p95: ms, p99: ms, min: ms, max: ms, samples: 1, ...extra,
  };
}

/** `restic backup` of each of `dirs` into a new repository under `root`: its size and time, or why not. */
export function resticBackup(root, dirs) {
  let version;
  try {
    version = execFileSync('restic', ['version'], { encoding: 'utf8' }).trim();
  } catch {
    return { unavailable: 'restic not installed (apt-get install restic)' };
  }
  const repo = join(root, 'restic');
  const env = { ...process.env, RESTIC_PASSWORD: 'bench', RESTIC_REPOSITORY: repo, RESTIC_CACHE_DIR: join(root, 'restic-cache') };
  execFileSync('restic', ['init', '--repository-version', '2', '-q'], { env });
  const started = performance.now();
  for (const d of dirs) execFileSync('restic', ['backup', '-q', '--compression', 'auto', d], { env, maxBuffer: 1 << 24 });
  const seconds = (performance.now() - started) / 1000;
  return { stored: dirSize(repo), seconds, version };
}

function restic(root, dirs, total) {
  const r = resticBackup(root, dirs);
  if (r.unavailable) return [{ family: 'dedup', group: 'restic', impl: 'restic backup', size: total, unavailable: r.unavailable }];
  log(`restic: stored ${(r.stored / MiB).toFixed(1)} MiB, ${(total / 1e6 / r.seconds).toFixed(0)} MB/s`);
  return [row('restic (its own chunker, avg ~1 MiB)', 'restic backup', total, r.seconds, { stored: r.stored, version: r.version })];
}

export const families = {
  dedup: {
    title: 'consecutive typescript releases ingested one after another (unique = distinct chunk bytes / input; stored = pack or repository bytes)',
    ratio: () => undefined,
    extra: [
      { header: 'unique', value: (r) => r.unique && `${((100 * r.unique) / r.bytes).toFixed(0)}%` },
      { header: 'stored', value: (r) => r.stored && `${(r.stored / MiB).toFixed(1)} MiB` },
      { header: 'input/stored', value: (r) => r.stored && (r.bytes / r.stored).toFixed(2) },
      { header: 'compression', value: (r) => r.compressionRatio && r.compressionRatio.toFixed(2) },
    ],
  },
};

export function targets(rows) {
  const k16 = rows.find((r) => r.avgKiB === 16 && !r.unavailable);
  const k64 = rows.find((r) => r.avgKiB === 64 && !r.unavailable);
  return [
    target('avg 16 KiB dedups better than avg 64 KiB (unique bytes, DESIGN.md)', k16 && k64 ? k64.unique / k16.unique : undefined, 1, {
      detail: k16 && k64 ? `unique ${((100 * k16.unique) / k16.bytes).toFixed(0)}% vs ${((100 * k64.unique) / k64.bytes).toFixed(0)}% of input` : '',
      missing: 'corpus not fetched',
    }),
  ];
}
