/**
 * Facts about where and what was measured, saved with every result file: a figure without
 * its CPU, Node version, peer versions and commit cannot be compared with a later one.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));

/** The packages measured (and the harness); versions read from bench/node_modules. */
const PACKAGES = [
  '@kura/core', 'tinybench', 'hash-wasm', '@noble/hashes', 'blake3-jit', 'blake3-wasm',
  '@bokuweb/zstd-wasm', 'rabin-wasm',
];

/** Reads package.json from disk: some packages (@noble/hashes) do not export it. */
function packageVersion(name) {
  try {
    return JSON.parse(readFileSync(`${BENCH_DIR}node_modules/${name}/package.json`, 'utf8')).version;
  } catch {
    return null;
  }
}

function git(...args) {
  try {
    return execFileSync('git', args, { cwd: BENCH_DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null; // no git, or no commit yet
  }
}

export function machineFacts() {
  const cpus = os.cpus();
  const status = git('status', '--porcelain');
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    loadAverage: os.loadavg().map((n) => Math.round(n * 100) / 100),
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    v8: process.versions.v8,
    packages: Object.fromEntries(PACKAGES.map((p) => [p, packageVersion(p)])),
    git: { commit: git('rev-parse', 'HEAD'), dirty: status === null ? null : status.length > 0 },
  };
}

/** One line for the top of the printed report. */
export function describeMachine(m) {
  const commit = m.git.commit ? `${m.git.commit.slice(0, 12)}${m.git.dirty ? ' (dirty)' : ''}` : 'no commit';
  return `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, load ${m.loadAverage.join(' ')}; Node ${m.node}; ${commit}`;
}
