/**
 * A server of a store on object storage killed at each step of a commit (issue 21): writer
 * processes on one versitygw bucket (fixtures/child.mjs, mode `crash`, each with a cache
 * directory of its own) SIGKILL themselves at a named point — an in-memory pack opened, a record
 * in it, a pack uploaded with its index (`pack-sealing`), a commit object created before the
 * database applies it (`published`), applied before its caller is told (`committed`), GC's
 * condemnation, moved records, a pack object deleted, a checkpoint written. Once alone, once
 * beside a second server that goes on writing. After each round the killed server restarts on
 * its own cache (its database may be behind the log) and a new server starts on an empty one:
 * both pass verify, hold every acknowledged put, delete and metadata batch, and agree row for
 * row; the log's objects are 1..head with no gap.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRASH_POINTS, DIRECTORY_ONLY, type CrashPoint } from '../src/crash-points.js';
import { Store } from '../src/node/index.js';
import { S3ObjectStore } from '../src/node/s3-objects.js';
import { listAll } from '../src/objects/object-store.js';
import { canonicalDump } from './helpers/dump.js';
import { Ledger, awaitCrash, checkLedgers, expectSameDump, startChild } from './helpers/crash-children.js';
import { recordReliability } from './helpers/reliability.js';
import { startS3Server, type S3Server } from './helpers/s3-servers.js';

const ROUNDS = Number(process.env.KURA_CRASH_POINT_ROUNDS ?? 2);

type ObjectPoint = Exclude<CrashPoint, (typeof DIRECTORY_ONLY)[number]>;
const NTH: Record<ObjectPoint, number> = {
  'pack-created': 4,
  'record-appended': 30,
  published: 10,
  committed: 12,
  'pack-sealing': 5,
  condemned: 2,
  'records-moved': 1,
  'pack-removed': 2,
  'checkpoint-written': 1,
};

/** Each commit on a bucket uploads packs of its own documents: compactions come from the child's pairs of puts, every tenth put; every round dies at the first. */
const nth = (point: ObjectPoint, round: number) => NTH[point] + (point === 'records-moved' ? 0 : round);

let s3: S3Server;
const root = mkdtempSync(join(tmpdir(), 'kura-s3-crash-'));

beforeAll(async () => {
  s3 = await startS3Server('versitygw');
}, 60_000);

afterAll(async () => {
  await s3?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** Where a child with KURA_CACHE=`base` keeps the store's cache (node/object-backends.ts defaultCacheDir). */
const cacheOf = (base: string, location: string) => join(base, 'stores', createHash('sha256').update(location).digest('hex').slice(0, 16));

describe('a server of a store on object storage killed at each step of a commit', () => {
  for (const point of Object.keys(NTH) as ObjectPoint[]) {
    it(`${point}: nothing acknowledged is lost, alone and beside another server (${ROUNDS} rounds)`, { timeout: 300_000 }, async () => {
      expect(CRASH_POINTS).toContain(point);
      const location = `s3://${s3.bucket}/crash-${point}`;
      const s3Options = { endpoint: s3.endpoint, credentials: s3.credentials };
      const env = { AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey, AWS_ENDPOINT_URL_S3: s3.endpoint };
      await (await Store.init(location, { cacheDir: mkdtempSync(join(root, 'init-')), s3: s3Options, chunking: { avg: 4096 }, compression: false })).close();
      const cacheA = mkdtempSync(join(root, 'a-'));
      const cacheB = mkdtempSync(join(root, 'b-'));
      const crashed = new Ledger();
      const other = new Ledger();
      other.next = 10_000_000;
      for (let round = 0; round < ROUNDS; round++) {
        const beside = round % 2 === 1;
        const a = startChild(location, crashed.next, join(root, `journal-${point}-a-${round}`), `${point}:${nth(point, round)}`, { ...env, KURA_CACHE: cacheA });
        const b = beside ? startChild(location, other.next, join(root, `journal-${point}-b-${round}`), undefined, { ...env, KURA_CACHE: cacheB }) : undefined;
        await awaitCrash({ a, b, point, n: round }, crashed, other);
        // The killed server back on its own cache, and a new one on an empty cache.
        const restarted = await Store.open(location, { cacheDir: cacheOf(cacheA, location), s3: s3Options });
        const freshDir = mkdtempSync(join(root, 'fresh-'));
        const fresh = await Store.open(location, { cacheDir: freshDir, s3: s3Options });
        try {
          const what = `after a crash at ${point}, round ${round}`;
          await checkLedgers(restarted, [crashed, other], `${what} (restarted)`);
          await checkLedgers(fresh, [crashed, other], `${what} (new server)`);
          const heads = [(await restarted.refresh()).seq, (await fresh.refresh()).seq];
          expect(heads[0], what).toBe(heads[1]);
        } finally {
          await restarted.close();
          await fresh.close();
        }
        expectSameDump(canonicalDump(join(cacheOf(cacheA, location), 'kura.db')), canonicalDump(join(freshDir, 'kura.db')));
      }
      expect(crashed.acks).toBeGreaterThan(0);

      const bucket = new S3ObjectStore(location, s3Options);
      const seqs: number[] = [];
      for await (const o of listAll(bucket, 'log/')) seqs.push(Number(o.key.slice('log/'.length)));
      await bucket.close();
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));

      recordReliability(`s3-crash-point-${point}`, `a server on object storage killed at ${point}`, {
        rounds: ROUNDS,
        'server processes killed': ROUNDS + Math.floor(ROUNDS / 2),
        commits: seqs.length,
        'acknowledged puts': crashed.acks + other.acks,
        'acknowledged deletes': crashed.gone.size + other.gone.size,
        'acknowledged documents lost or wrong': 0,
        'restarted and new servers differ': 0,
      });
    });
  }
});
