/**
 * Retention (decision 0058):
 *   kura forget --keep-… [--label L] [--dry-run] [--json]                    snapshots, restic's rules
 *   kura forget --keep-versions N | --keep-versions-within D [--prefix P] …  versions of paths
 *   kura pin REF / kura unpin REF          REF: a snapshot id (or prefix), or PATH@N
 * What goes is removed through the log; `kura gc` then frees the bytes only it held.
 */
import type { SnapshotForgetReport, VersionForgetReport } from '@kura/store';
import { parseDuration } from '@kura/store';
import type { Command } from 'commander';
import { collect, wholeNumber } from '../args.js';
import { usage } from '../exit.js';
import { write, writeJson } from '../output.js';
import { shownPath } from '../format.js';
import { withStore } from '../store.js';
import { storePath } from '../store-path.js';

/** The snapshot rules' options (kura forget, kura policy set). */
export interface SnapshotRuleOptions {
  keepLast?: string;
  keepHourly?: string;
  keepDaily?: string;
  keepWeekly?: string;
  keepMonthly?: string;
  keepYearly?: string;
  keepWithin?: string;
  keepTag?: string[];
}

const PERIODS = [
  ['last', 'keepLast', 'the newest n snapshots'],
  ['hourly', 'keepHourly', 'the newest snapshot of each of the last n hours that have one'],
  ['daily', 'keepDaily', 'the newest snapshot of each of the last n days that have one'],
  ['weekly', 'keepWeekly', 'the newest snapshot of each of the last n ISO weeks that have one'],
  ['monthly', 'keepMonthly', 'the newest snapshot of each of the last n months that have one'],
  ['yearly', 'keepYearly', 'the newest snapshot of each of the last n years that have one'],
] as const;

/** Adds the snapshot rules' options to `c`. */
export function snapshotRuleOptions(c: Command): Command {
  for (const [name, , help] of PERIODS) c.option(`--keep-${name} <n>`, help);
  return c
    .option('--keep-within <duration>', 'every snapshot newer than this before the newest snapshot (e.g. 1y2m7d)')
    .option('--keep-tag <tags>', 'snapshots holding all of these comma-separated tags (repeatable: any of the lists)', collect);
}

/** The counts and tag lists the options give (the duration as written). */
export function snapshotRuleValues(opts: SnapshotRuleOptions): { counts: Partial<Record<(typeof PERIODS)[number][0], number>>; within?: string; tags?: string[][] } {
  const counts: Partial<Record<(typeof PERIODS)[number][0], number>> = {};
  for (const [name, key] of PERIODS) if (opts[key] !== undefined) counts[name] = wholeNumber(opts[key], `--keep-${name}`);
  return { counts, ...(opts.keepWithin !== undefined ? { within: opts.keepWithin } : {}), ...(opts.keepTag ? { tags: opts.keepTag.map((l) => l.split(',').filter(Boolean)) } : {}) };
}

interface ForgetOptions extends SnapshotRuleOptions {
  label?: string;
  keepVersions?: string;
  keepVersionsWithin?: string;
  prefix?: string;
  dryRun?: boolean;
  json?: boolean;
}

const HELP = `
Snapshots are kept as restic's forget keeps them. Each --keep-<period> N keeps the newest
snapshot of each of the N most recent periods that HAVE a snapshot — a count of periods, not a
window of time: --keep-daily 7 keeps one snapshot for each of the last 7 days on which one was
taken, however long ago those were. --keep-within 1y2m keeps every snapshot newer than that
before the NEWEST snapshot (not before now; a snapshot dated in the future is kept and not
counted as the newest, as restic does). --keep-tag a,b keeps snapshots holding both tags
(repeat it for either). A snapshot is kept when any rule keeps it; the rest go. Periods are of
the local calendar (TZ); weeks are ISO weeks. Pinned snapshots (kura pin) always stay.
Unlike restic, which applies the rules to each host and set of paths apart, Kura applies them to
all the store's snapshots as one group (a snapshot does not record where it was taken from):
give --label L to apply them to the snapshots labelled L alone.

Versions: --keep-versions N keeps each path's newest N versions, --keep-versions-within D those
made within D before the path's newest; the newest version (what the path reads) and pinned
versions always stay. A path deleted with its versions kept (kura watch) reads nothing: its
versions are kept within D before now, so --keep-versions-within 30d lets its history go 30
days on. Snapshots and versions are forgotten by separate runs.

Durations: numbers with y (years), m (months), d (days), h (hours), e.g. 1y6m, 30d, 12h; a
duration of zero (0d) is refused: it would keep nothing.
--dry-run lists what would go and which rule keeps each kept item, and changes nothing.
The space only forgotten items held is freed by the next kura gc.`;

const duration = (flag: string, v: string | undefined) => {
  if (v === undefined) return undefined;
  try {
    return parseDuration(v);
  } catch (e) {
    throw usage(`${flag}: ${(e as Error).message}`);
  }
};

function printSnapshots(r: SnapshotForgetReport, dryRun: boolean): Promise<void> {
  const lines = [
    `keep ${r.keep.length} snapshots:`,
    ...r.keep.map((k) => `  ${k.id.slice(0, 12)}  ${k.time}  ${k.reasons.join(', ')}`),
    `${dryRun ? 'would remove' : 'removed'} ${r.remove.length} snapshot${r.remove.length === 1 ? '' : 's'}:`,
    ...r.remove.map((s) => `  ${s.id.slice(0, 12)}  ${s.time}`),
  ];
  return write(`${lines.join('\n')}\n`);
}

function printVersions(r: VersionForgetReport, dryRun: boolean): Promise<void> {
  const lines = [
    `keep ${r.keep.length} versions:`,
    ...r.keep.map((k) => `  ${shownPath(k.path)}@${k.version}  ${k.time}  ${k.reasons.join(', ')}`),
    `${dryRun ? 'would remove' : 'removed'} ${r.remove.length} version${r.remove.length === 1 ? '' : 's'}:`,
    ...r.remove.map((v) => `  ${shownPath(v.path)}@${v.version}  ${v.time}`),
  ];
  return write(`${lines.join('\n')}\n`);
}

/** A pin's target: PATH@N, or a snapshot id (4 to 32 hex digits). */
function pinTarget(ref: string): { snapshot: string } | { path: string; version: number } {
  const version = /^(.+)@(\d+)$/.exec(ref);
  if (version) return { path: storePath(version[1]!), version: wholeNumber(version[2]!, 'the version') };
  if (/^[0-9a-f]{4,32}$/.test(ref)) return { snapshot: ref };
  throw usage(`"${ref}" is neither a snapshot id (4 to 32 hex digits, as kura snapshots shows) nor PATH@N (a version, as kura versions shows)`);
}

export function register(program: Command): void {
  snapshotRuleOptions(program.command('forget').description('remove snapshots, or versions of paths, that a retention policy does not keep (kura gc then frees their space)'))
    .option('--label <label>', 'only snapshots with this label are considered')
    .option('--keep-versions <n>', "each path's newest n versions")
    .option('--keep-versions-within <duration>', "each path's versions made within this before its newest; a deleted path's history stays this long after its deletion (e.g. 30d)")
    .option('--prefix <path>', 'versions: only paths starting with this')
    .option('--dry-run', 'say what would go and why the rest stays; change nothing')
    .option('--json', 'one JSON object: {"keep":[{"id","time","reasons"}…],"remove":[{"id","time"}…]} (versions: "path","version" for "id")')
    .addHelpText('after', HELP)
    .action(async (opts: ForgetOptions, cmd: Command) => {
      const rules = snapshotRuleValues(opts);
      const snapshots = { ...rules.counts, ...(rules.tags ? { tags: rules.tags } : {}), ...(rules.within !== undefined ? { within: duration('--keep-within', rules.within) } : {}) };
      const versions = { keep: opts.keepVersions === undefined ? undefined : wholeNumber(opts.keepVersions, '--keep-versions'), within: duration('--keep-versions-within', opts.keepVersionsWithin) };
      const forSnapshots = Object.keys(snapshots).length > 0;
      const forVersions = versions.keep !== undefined || versions.within !== undefined;
      if (forSnapshots && forVersions) throw usage('snapshots and versions are forgotten by separate runs: give --keep-versions* or the snapshot rules, not both');
      if (!forSnapshots && !forVersions) throw usage('name what to keep: --keep-last, --keep-daily, …, --keep-within, --keep-tag for snapshots, or --keep-versions, --keep-versions-within for versions (kura forget --help)');
      if (forSnapshots && opts.prefix !== undefined) throw usage('--prefix selects versions: snapshots are selected by --label');
      if (forVersions && opts.label !== undefined) throw usage('--label selects snapshots: versions are selected by --prefix');
      if (versions.keep === 0) throw usage('--keep-versions must be at least 1 (the newest version always stays)');
      const dryRun = opts.dryRun ?? false;
      await withStore(cmd, { readonly: dryRun }, async (store) => {
        if (forSnapshots) {
          const r = await store.forgetSnapshots({ ...snapshots, ...(opts.label !== undefined ? { label: opts.label } : {}), dryRun });
          if (opts.json) await writeJson(r);
          else await printSnapshots(r, dryRun);
        } else {
          const r = await store.forgetVersions({
            ...(versions.keep !== undefined ? { keep: versions.keep } : {}),
            ...(versions.within ? { within: versions.within } : {}),
            ...(opts.prefix !== undefined ? { prefix: opts.prefix } : {}),
            dryRun,
          });
          if (opts.json) await writeJson(r);
          else await printVersions(r, dryRun);
        }
      });
    });

  for (const [verb, pinned] of [['pin', true], ['unpin', false]] as const) {
    program
      .command(verb)
      .description(pinned ? 'keep a snapshot or a version whatever a retention policy says' : 'let a pinned snapshot or version go by retention again')
      .argument('<ref...>', 'a snapshot id (or its first 4+ digits), or PATH@N for a version')
      .action(async (refs: string[], _opts: unknown, cmd: Command) => {
        const targets = refs.map(pinTarget);
        await withStore(cmd, { readonly: false }, async (store) => {
          // A line per ref as it is done: a later one that fails leaves those before said.
          for (const t of targets) {
            await store.pin(t, pinned);
            // (The snapshot's whole id, not the digits given: which one was pinned is the answer.)
            const what = 'snapshot' in t ? `snapshot ${(await store.snapshotInfo(t.snapshot)).id}` : `${shownPath(t.path)}@${t.version}`;
            await write(`${pinned ? 'pinned' : 'unpinned'} ${what}\n`);
          }
        });
      });
  }
}
