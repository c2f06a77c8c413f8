/**
 * Fault injection under SQLite: a child process runs a fixed workload (fixtures/fault-child.mjs:
 * init, puts sharing chunks, metadata and tags single and batched, search, deletes, GC, more
 * puts, close) with an LD_PRELOAD shim (faults/io-faults.c) that fails the k-th read, write,
 * sync, truncate or unlink of the database's files (kura.db, its WAL, shared memory and
 * journal) — with EIO, ENOSPC, a short write followed by ENOSPC, or a disk that stays full.
 * For each k: the child must not crash, each failing operation must fail with a typed error,
 * and after reopening without faults the store must verify clean with everything that was
 * acknowledged (documents, metadata, tags, deletes) intact, and keep working.
 *
 * CI runs KURA_SQLITE_FAULT_POSITIONS (default 24) positions spread over the operations of a
 * clean run; `pnpm test:reliability` sets it to `all`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
// @ts-expect-error plain JS fixture shared with the child process
import { docBytes } from './fixtures/docgen.mjs';
import { recordReliability } from './helpers/reliability.js';
import { expectSameBytes, tempDir } from './helpers/store.js';

const CHILD = fileURLToPath(new URL('./fixtures/fault-child.mjs', import.meta.url));
const SHIM_SOURCE = fileURLToPath(new URL('./faults/io-faults.c', import.meta.url));
const KINDS = ['eio', 'enospc', 'short', 'full'] as const;
/**
 * Codes a storage failure may surface with (docs/ERRORS.md). SQLite reports some failed reads
 * as a malformed database (SQLITE_CORRUPT): CORRUPT_DATA, reason 'database'.
 */
const STORAGE_CODES = ['IO_ERROR', 'STORAGE_FULL', 'CORRUPT_DATA'];

/**
 * Compiles the shim once per source version: gcc (`cc`) ships with this machine kind, and the
 * bootstrap installs clang (for the wasm build) should it be missing.
 */
function buildShim(): string {
  const source = readFileSync(SHIM_SOURCE);
  const out = join(tmpdir(), `kura-io-faults-${createHash('sha256').update(source).digest('hex').slice(0, 12)}.so`);
  if (existsSync(out)) return out;
  const tmp = `${out}.${process.pid}`;
  const errors: string[] = [];
  for (const compiler of ['cc', 'clang']) {
    const r = spawnSync(compiler, ['-shared', '-fPIC', '-O2', '-Wall', '-o', tmp, SHIM_SOURCE, '-ldl'], { encoding: 'utf8' });
    if (r.status === 0) {
      renameSync(tmp, out);
      return out;
    }
    errors.push(`${compiler}: ${r.stderr || r.error}`);
  }
  throw new Error(`could not build the io-faults shim:\n${errors.join('\n')}`);
}

interface Outcome {
  status: number | null;
  stderr: string;
  acked: Map<string, number>;
  meta: { digest: string; key: string; value: string }[];
  tags: { digest: string; name: string }[];
  deleted: Set<string>;
  failed: { op: string; code: string | null; message: string }[];
  injected: string[];
  ops: number;
  done: boolean;
}

function runChild(shim: string, dir: string, at: number, kind: string): Promise<Outcome> {
  const child = spawn(process.execPath, [CHILD, dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LD_PRELOAD: shim, KURA_FAULT_MATCH: `${dir}/kura.db`, KURA_FAULT_AT: String(at), KURA_FAULT_KIND: kind },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => {
      const o: Outcome = { status, stderr, acked: new Map(), meta: [], tags: [], deleted: new Set(), failed: [], injected: [], ops: 0, done: false };
      for (const line of stdout.split('\n').filter(Boolean)) {
        const m = JSON.parse(line);
        if (m.ack) o.acked.set(m.ack, m.n);
        else if (m.meta) o.meta.push({ digest: m.meta, key: m.key, value: m.value });
        else if (m.tag) o.tags.push({ digest: m.tag, name: m.name });
        else if (m.deleted) o.deleted.add(m.deleted);
        else if (m.failed) o.failed.push({ op: m.failed, code: m.code, message: m.message });
        else if (m.done) o.done = true;
      }
      for (const line of stderr.split('\n')) {
        if (line.startsWith('kura-fault: injected')) o.injected.push(line.slice('kura-fault: injected '.length));
        const ops = /^kura-fault: ops (\d+)$/.exec(line);
        if (ops) o.ops = Math.max(o.ops, Number(ops[1]));
      }
      resolve(o);
    });
  });
}

/** k values to try: all of 1..total, or `count` of them spread evenly (and always the last). */
function positions(total: number, setting: string): number[] {
  if (setting === 'all') return Array.from({ length: total }, (_, i) => i + 1);
  const count = Math.min(total, Number(setting));
  return [...new Set(Array.from({ length: count }, (_, i) => Math.round(((i + 1) * total) / count)))];
}

describe('fault injection under SQLite', () => {
  const setting = process.env.KURA_SQLITE_FAULT_POSITIONS ?? '24';

  it(`every failing database read, write, sync or truncate fails cleanly; nothing acknowledged is lost (${setting} positions)`, { timeout: 3_600_000 }, async () => {
    const shim = buildShim();
    const root = tempDir();
    const clean = await runChild(shim, join(root, 'clean'), 0, 'eio');
    expect(clean.status, clean.stderr).toBe(0);
    expect(clean.failed).toEqual([]);
    expect(clean.done).toBe(true);
    expect(clean.acked.size).toBe(8);
    // The shim saw SQLite's file operations (a broken preload would count none).
    expect(clean.ops).toBeGreaterThan(100);

    const figures = { positions: 0, injected: 0, failedOps: 0, acked: 0, metadata: 0, deletes: 0, reopenedAfterFailedInit: 0 };
    const byOp = new Map<string, number>();
    const at = positions(clean.ops, setting);
    for (const [i, k] of at.entries()) {
      const kind = KINDS[i % KINDS.length]!;
      const dir = join(root, `k${k}`);
      mkdirSync(dir, { recursive: true });
      const o = await runChild(shim, join(dir, 'store'), k, kind);
      const where = `fault at op ${k} (${kind}): ${o.injected.join('; ') || 'none injected'}`;
      figures.positions++;
      figures.injected += o.injected.length;
      for (const inj of o.injected) {
        const op = /in (\w+) on/.exec(inj)?.[1] ?? '?';
        byOp.set(op, (byOp.get(op) ?? 0) + 1);
      }
      // No crash: the workload ran to its end, and every failure carried a storage code.
      expect(o.status, `${where}\n${o.stderr}`).toBe(0);
      expect(o.done, where).toBe(true);
      for (const f of o.failed) expect(STORAGE_CODES, `${where}: ${f.op} failed with ${f.code}: ${f.message}`).toContain(f.code);
      figures.failedOps += o.failed.length;

      let store: Store;
      try {
        store = await Store.open(join(dir, 'store'));
      } catch (e) {
        // Only a store whose init failed may not open, and init must then work again.
        expect(o.failed.map((f) => f.op), `${where}: the store does not open (${String(e)})`).toContain('init');
        expect(o.acked.size).toBe(0);
        store = await Store.init(join(dir, 'store'), { chunking: { avg: 4096 } });
        figures.reopenedAfterFailedInit++;
      }
      const report = await store.verify();
      expect(report.damagedChunks, where).toEqual([]);
      expect(report.ok, where).toBe(true);
      for (const [digest, n] of o.acked) {
        if (o.deleted.has(digest)) continue;
        expectSameBytes(await store.getBytes(digest), docBytes(n), `${where}: document ${n}`);
        figures.acked++;
      }
      for (const digest of o.deleted) {
        expect(await store.has(digest), `${where}: deleted ${digest} is back`).toBe(false);
        figures.deletes++;
      }
      for (const m of o.meta) {
        if (o.deleted.has(m.digest)) continue;
        expect((await store.stat(m.digest)).meta[m.key], `${where}: ${m.key} of ${m.digest}`).toBe(m.value);
        figures.metadata++;
      }
      for (const t of o.tags) {
        if (!o.deleted.has(t.digest)) expect((await store.stat(t.digest)).tags, where).toContain(t.name);
      }
      // Whatever is listed is whole (verify re-hashed it) and is one of the workload's documents.
      for (const item of (await store.list({ limit: 100 })).items) expect(item.path, where).toMatch(/^docs\/\d+\.bin$/);
      // The store keeps working: a put, a GC and a verify after the fault.
      const extra = docBytes(1000 + k);
      const r = await store.put(extra);
      expectSameBytes(await store.getBytes(r.digest), extra, `${where}: a put after reopening`);
      await store.gc();
      expect((await store.verify()).ok, where).toBe(true);
      await store.close();
    }
    console.log(`sqlite faults: ${figures.positions} positions of ${clean.ops} operations, ${figures.injected} injected (${[...byOp].map(([op, n]) => `${op} ${n}`).join(', ')}), ${figures.failedOps} operations failed`);
    recordReliability('faults-sqlite', 'faults under SQLite (EIO, ENOSPC, short writes, disk full) in reads, writes, syncs and truncates of the database files', {
      'database file operations in the workload': clean.ops,
      'fault positions tried': figures.positions,
      'faults injected': figures.injected,
      'operations that failed (each IO_ERROR, STORAGE_FULL or CORRUPT_DATA)': figures.failedOps,
      'acknowledged documents re-read after reopening': figures.acked,
      'acknowledged metadata updates re-read': figures.metadata,
      'acknowledged deletes checked': figures.deletes,
      'acknowledged documents lost or wrong': 0,
      'stores that verify found damaged': 0,
      'child processes that crashed': 0,
    });
  });
});
