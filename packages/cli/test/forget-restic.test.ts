/**
 * `kura forget` against restic's `forget` (Debian's restic, the peer this machine has): the same
 * snapshot times and tags given to both — `restic backup --time` on restic's side, snapshots
 * recorded with a `time` on Kura's — then, for each of 24 policies, `restic forget --dry-run
 * --json` and `kura forget --dry-run --json` must keep exactly the same snapshots (by time).
 * 200 snapshots spread over four years, denser lately (as backups are), in a time zone with
 * daylight saving, so days, ISO weeks and months are cut as restic cuts them there.
 *
 * restic costs ~0.6 s a snapshot here (its key derivation runs per command): its repository is
 * made by two processes at once and kept in the temp directory, named by the times and tags it
 * holds, so later runs reuse it.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Store } from '@kura/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const TZ = 'Europe/Berlin';
const COUNT = 200;
const haveRestic = spawnSync('restic', ['version']).status === 0;
const roots: string[] = [];
afterAll(() => roots.splice(0).forEach((r) => rmSync(r, { recursive: true, force: true })));

/** Seeded times: 2021-01 .. 2024-12, half of them in the last five months, some hours apart. */
function snapshotTimes(): { time: string; tags: string[] }[] {
  let seed = 0x5eed;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const start = Date.UTC(2021, 0, 1);
  const end = Date.UTC(2024, 11, 31);
  const dense = Date.UTC(2024, 7, 1);
  const times = new Set<number>();
  while (times.size < COUNT) {
    const from = times.size % 2 ? dense : start;
    // Whole seconds; none in the hour a clock change repeats or skips (both tools must read the
    // local time the same way: restic and JavaScript choose differently inside that hour).
    const t = Math.floor((from + rnd() * (end - from)) / 1000) * 1000;
    const m = new Date(t).getUTCMonth();
    if ((m === 2 || m === 9) && new Date(t).getUTCDate() >= 24) continue;
    times.add(t);
  }
  const tagsOf = (i: number) => [...(i % 7 === 0 ? ['release'] : []), ...(i % 11 === 0 ? ['manual'] : [])];
  return [...times].sort((a, b) => a - b).map((t, i) => ({ time: localText(t), tags: tagsOf(i) }));
}

/** A time as `2006-01-02 15:04:05` in TZ (what restic's --time and kura's --time take). */
function localText(ms: number): string {
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-GB', { timeZone: TZ, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' }).formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
}

const POLICIES: string[][] = [
  ['--keep-last', '5'],
  ['--keep-hourly', '10'],
  ['--keep-daily', '7'],
  ['--keep-daily', '30'],
  ['--keep-weekly', '8'],
  ['--keep-weekly', '60'],
  ['--keep-monthly', '12'],
  ['--keep-monthly', '40'],
  ['--keep-yearly', '3'],
  ['--keep-yearly', '10'],
  ['--keep-within', '2m'],
  ['--keep-within', '1y2m7d'],
  ['--keep-within', '36h'],
  ['--keep-tag', 'release'],
  ['--keep-tag', 'release,manual'],
  ['--keep-tag', 'release', '--keep-tag', 'manual'],
  ['--keep-last', '3', '--keep-daily', '7', '--keep-weekly', '4', '--keep-monthly', '12', '--keep-yearly', '5'],
  ['--keep-hourly', '24', '--keep-daily', '14'],
  ['--keep-daily', '10', '--keep-within', '1m'],
  ['--keep-weekly', '10', '--keep-tag', 'manual'],
  ['--keep-monthly', '6', '--keep-yearly', '2', '--keep-last', '1'],
  ['--keep-within', '1y', '--keep-monthly', '48'],
  ['--keep-last', '200'],
  ['--keep-daily', '1', '--keep-weekly', '1', '--keep-monthly', '1', '--keep-yearly', '1'],
];

const env = (extra: Record<string, string> = {}) => ({ ...process.env, TZ, RESTIC_PASSWORD: 'kura-test', ...extra });

/** A restic repository holding `snapshots` (made once, then kept by name in the temp dir). */
async function resticRepository(snapshots: { time: string; tags: string[] }[]): Promise<string> {
  const name = createHash('sha256').update(JSON.stringify(snapshots)).digest('hex').slice(0, 16);
  const repo = join(tmpdir(), `kura-restic-retention-${name}`);
  if (existsSync(join(repo, 'config'))) return repo;
  const building = mkdtempSync(join(tmpdir(), 'kura-restic-building-'));
  const data = join(tmpdir(), 'kura-restic-retention-data');
  mkdirSync(data, { recursive: true });
  writeFileSync(join(data, 'file.txt'), 'one file\n');
  execFileSync('restic', ['init', '-q', '--repo', building], { env: env() });
  // Two at a time: restic's backups take a shared lock.
  let next = 0;
  const worker = async () => {
    while (next < snapshots.length) {
      const s = snapshots[next++]!;
      const args = ['backup', '-q', '--repo', building, '--host', 'kura-test', '--time', s.time, ...s.tags.flatMap((t) => ['--tag', t]), data];
      await new Promise<void>((resolve, reject) => {
        const p = spawn('restic', args, { env: env(), stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        p.stderr.on('data', (d) => (err += d));
        p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`restic backup: ${err}`))));
      });
    }
  };
  await Promise.all([worker(), worker()]);
  renameSync(building, repo);
  return repo;
}

describe.skipIf(!haveRestic)('kura forget keeps what restic forget keeps', () => {
  let repo: string;
  let store: string;
  const snapshots = snapshotTimes();

  beforeAll(async () => {
    repo = await resticRepository(snapshots);
    const root = mkdtempSync(join(tmpdir(), 'kura-forget-'));
    roots.push(root);
    store = join(root, 'store');
    // Kura's side: the same times, read as local times in TZ by the kura command's parser.
    const { snapshotTime } = await import('../src/commands/snapshot.js');
    const before = process.env.TZ;
    process.env.TZ = TZ;
    try {
      const s = await Store.init(store);
      for (const { time, tags } of snapshots) await s.createSnapshot({ type: 'dir', name: '', mode: 0o755, entries: [] }, { time: snapshotTime(time), tags });
      await s.close();
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  }, 600_000);

  it.each(POLICIES.map((p) => [p.join(' '), p]))('%s', (_name, policy) => {
    const r = spawnSync('restic', ['forget', '--repo', repo, '--dry-run', '--json', ...policy], { env: env(), encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const groups = JSON.parse(r.stdout) as { keep: { time: string }[] | null; remove: { time: string }[] | null }[];
    expect(groups).toHaveLength(1);
    const resticKept = (groups[0]!.keep ?? []).map((s) => Date.parse(s.time)).sort((a, b) => a - b);
    const k = spawnSync(process.execPath, [BIN, 'forget', '--store', store, '--dry-run', '--json', ...policy], { env: env(), encoding: 'utf8' });
    expect(k.status, k.stderr).toBe(0);
    const kura = JSON.parse(k.stdout) as { keep: { time: string; reasons: string[] }[]; remove: { time: string }[] };
    const kuraKept = kura.keep.map((s) => Date.parse(s.time)).sort((a, b) => a - b);
    expect(kuraKept.map((t) => new Date(t).toISOString())).toEqual(resticKept.map((t) => new Date(t).toISOString()));
    expect(kura.keep.length + kura.remove.length).toBe(COUNT);
    expect(kura.keep.every((s) => s.reasons.length > 0)).toBe(true);
  });
});
