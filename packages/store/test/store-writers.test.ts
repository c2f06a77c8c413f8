/**
 * Several writer processes on one store (issue 20): writers that put, delete and run GC, and
 * one that snapshots a changing directory, all at once, killed with SIGKILL at random moments
 * — mid-put, mid-commit, mid-GC — and restarted, round after round. Afterwards: every
 * acknowledged put reads back with its bytes, every acknowledged delete stayed, every
 * acknowledged snapshot is there with its tree, verify is clean, the log is one unbroken
 * chain, and a database rebuilt from the log equals the one the writers made, row for row.
 *
 * CI runs 2, 4 and 8 writers for a few rounds each; KURA_WRITER_ROUNDS=N runs more.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { commitsAfter, emptyHead } from '../src/catalog/commits.js';
import { FsLogStore } from '../src/node/fs-log.js';
import { Store } from '../src/node/index.js';
// @ts-expect-error plain JS fixture shared with the child process
import { docBytes } from './fixtures/docgen.mjs';
import { canonicalDump } from './helpers/dump.js';
import { expectSameBytes, tempDir } from './helpers/store.js';
import { recordReliability } from './helpers/reliability.js';

const CHILD = fileURLToPath(new URL('./fixtures/child.mjs', import.meta.url));
const ROUNDS = Number(process.env.KURA_WRITER_ROUNDS ?? 2);
const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

interface Writer {
  journal: string;
  closed: Promise<void>;
  kill(): void;
}

function startWriter(args: string[], journal: string): Writer {
  const child = spawn(process.execPath, [CHILD, ...args, journal], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  // A writer must end only by the test's SIGKILL: one that dies by itself failed (its stderr says why).
  const closed = new Promise<void>((resolve, reject) =>
    child.once('close', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`writer ${args.join(' ')} ended by itself (${code ?? signal}): ${stderr}`)))),
  );
  return { journal, closed, kill: () => child.kill('SIGKILL') };
}

const told = (journal: string) => (existsSync(journal) ? readFileSync(journal, 'utf8').split('\n').slice(0, -1) : []);

describe('several writer processes on one store', () => {
  for (const writers of [2, 4, 8]) {
    it(`${writers} writers (puts, deletes, GC, snapshots), killed at random moments for ${ROUNDS} rounds: nothing acknowledged is lost`, { timeout: 240_000 }, async () => {
      const root = tempDir();
      const dir = join(root, 'store');
      await (await Store.init(dir, { chunking: { avg: 4096 }, compression: false })).close();
      const src = join(root, 'src');
      mkdirSync(src);

      const live = new Map<number, string>(); // acknowledged, not deleted since
      const gone = new Set<number>();
      const snaps = new Map<string, string>(); // snapshot id -> tree
      let acks = 0;
      let kills = 0;
      let reclaimed = 0; // chunk rows GC removed while the others wrote
      let refused = 0; // puts refused because another writer's GC reclaimed a chunk they shared
      const next = Array.from({ length: writers }, (_, w) => w * 1_000_000);
      for (let round = 0; round < ROUNDS; round++) {
        const running: Writer[] = [];
        for (let w = 0; w < writers; w++) {
          const journal = join(root, `journal-${round}-${w}`);
          // One writer snapshots; the others put, delete their own earlier documents and run GC.
          running.push(w === writers - 1 ? startWriter(['snap', dir, src], journal) : startWriter(['mixed', dir, String(next[w]!)], journal));
        }
        // Each writer works 1.5-3 s and is then killed, at moments spread over its work: timed
        // from its first journal line, not its start — eight processes starting at once on a
        // loaded machine once spent the whole window opening the store (1 put acknowledged in
        // two rounds). A writer silent for 60 s is killed all the same (the acks check fails).
        await Promise.all(
          running.map(async (r, w) => {
            const until = performance.now() + 60_000;
            while (told(r.journal).length === 0 && performance.now() < until) await new Promise((res) => setTimeout(res, 20));
            await new Promise((res) => setTimeout(res, 1500 + ((round * 7 + w * 13) % 16) * 100));
            r.kill();
            kills++;
            await r.closed;
          }),
        );
        running.forEach((r, w) => {
          const inFlight = new Set<number>();
          for (const l of told(r.journal)) {
            const [what, n, digest] = l.split(' ');
            if (what === 'ack') {
              live.set(Number(n), digest!);
              acks++;
              next[w] = Math.max(next[w]!, Number(n) + 2); // (+1: the put in flight may have committed)
            } else if (what === 'deleting') inFlight.add(Number(n));
            else if (what === 'deleted') {
              inFlight.delete(Number(n));
              live.delete(Number(n));
              gone.add(Number(n));
            } else if (what === 'snap') snaps.set(n!, digest!);
            else if (what === 'gc' && n === 'done') reclaimed += Number(digest);
            else if (what === 'refused') refused++;
          }
          // A delete the kill cut off happened or not: either is right, so it is left out of the checks.
          for (const n of inFlight) live.delete(n);
        });

        const s = await Store.open(dir);
        try {
          const report = await s.verify();
          expect(report.damagedChunks, `round ${round}`).toEqual([]);
          expect(report.ok, `round ${round}`).toBe(true);
          for (const [n, digest] of live) expectSameBytes(await s.getBytes(digest), docBytes(n), `doc ${n} after round ${round}`);
          for (const n of gone) expect(await s.has(sha(docBytes(n))), `deleted doc ${n}`).toBe(false);
          const all = new Map((await s.snapshots()).map((x) => [x.id, x.tree]));
          for (const [id, tree] of snaps) expect(all.get(id), `snapshot ${id}`).toBe(tree);
        } finally {
          await s.close();
        }
      }
      expect(acks).toBeGreaterThan(writers * 5);
      expect(gone.size).toBeGreaterThan(0);
      expect(snaps.size).toBeGreaterThan(0);
      expect(reclaimed, 'GC reclaimed chunks while the other writers wrote').toBeGreaterThan(0);

      // One chain, no gaps (commitsAfter checks seq by seq and each prev hash).
      const { commits } = await commitsAfter(new FsLogStore(dir), emptyHead());
      expect(commits.map((c) => c.frame.seq)).toEqual(commits.map((_, i) => i + 1));
      // The database the writers made is the log's replay.
      const made = canonicalDump(join(dir, 'kura.db'));
      for (const f of ['kura.db', 'kura.db-wal', 'kura.db-shm']) rmSync(join(dir, f), { force: true });
      await Store.rebuild(dir);
      expect(canonicalDump(join(dir, 'kura.db'))).toBe(made);

      recordReliability(`writers-${writers}`, `${writers} writer processes on one store, killed at random moments`, {
        rounds: ROUNDS,
        'writer processes killed': kills,
        commits: commits.length,
        'acknowledged puts': acks,
        'acknowledged deletes': gone.size,
        'acknowledged snapshots': snaps.size,
        'chunk rows GC reclaimed meanwhile': reclaimed,
        'puts refused (MISSING_CHUNKS: a chunk they shared was reclaimed)': refused,
        'acknowledged documents lost or wrong': 0,
        'rebuilt database differs': 0,
      });
    });
  }
});
