/**
 * Retention applied to a store (decision 0058): which snapshots and versions a policy keeps,
 * and — unless it is a dry run — removing the others through the log, so that every server of
 * the store sees the same history. Removals are marked `policy`: one pinned after the policy was
 * worked out stays (a pin always wins). The bytes only removed items held go at the next GC.
 */
import { InvalidInputError } from '@kura/core';
import type { Op } from '../catalog/ops.js';
import { snapshotTags } from '../catalog/snapshot.js';
import type { StoreContext } from '../store-context.js';
import { applySnapshotPolicy, parseDuration, policyIsEmpty, type Duration, type SnapshotPolicy } from './policy.js';
import { applyVersionPolicy, versionPolicyIsEmpty, type VersionItem, type VersionPolicy } from './versions.js';

export interface ForgetSnapshotsOptions extends Omit<SnapshotPolicy, 'within'> {
  /** Every snapshot newer than this before the newest one: a Duration (fields left out are 0), or its text (`5d`). */
  within?: Partial<Duration> | string;
  /** Only snapshots with this label are considered (the others are neither kept nor removed). */
  label?: string;
  /** Only snapshots whose label is none of these (stored policies: those for a label apply to it). */
  exceptLabels?: ReadonlySet<string>;
  /** Work out what would go, and change nothing. */
  dryRun?: boolean;
}

export interface ForgetVersionsOptions extends Omit<VersionPolicy, 'within'> {
  /** Versions made within this before the path's newest: a Duration (fields left out are 0), or its text (`3d`). */
  within?: Partial<Duration> | string;
  /** Only paths starting with this. */
  prefix?: string;
  dryRun?: boolean;
}

export interface SnapshotForgetReport {
  keep: { id: string; time: string; reasons: string[] }[];
  remove: { id: string; time: string }[];
}

export interface VersionForgetReport {
  keep: { path: string; version: number; time: string; reasons: string[] }[];
  remove: { path: string; version: number; time: string }[];
}

/** Removals per commit: a commit stays small (~100 bytes an operation), and each is all or none. */
const OPS_PER_COMMIT = 1000;

const iso = (ms: number) => new Date(ms).toISOString();

async function commitAll(ctx: StoreContext, ops: Op[]): Promise<void> {
  for (let i = 0; i < ops.length; i += OPS_PER_COMMIT) await ctx.log.commitAsync(ops.slice(i, i + OPS_PER_COMMIT));
  if (ops.length && ctx.writer.durability === 'full') await ctx.log.sync();
}

/** Options each forget takes: any other is refused (a misspelt one was dropped, and its rule with it). */
const SNAPSHOT_OPTIONS = new Set(['last', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'within', 'tags', 'label', 'exceptLabels', 'dryRun']);
const VERSION_OPTIONS = new Set(['keep', 'within', 'prefix', 'dryRun']);
const DURATION_FIELDS = ['years', 'months', 'days', 'hours'] as const;

/**
 * `o` checked before anything is worked out, and `within` read: a Duration (fields left out are
 * 0), or its text (`5d`, as stored policies and the CLI write it). A `within` of any other
 * shape was not looked at — `'5d'` and `{ days: 5 }` kept nothing for being within, and every
 * snapshot not kept otherwise went (a library trial).
 */
function checked<T extends { within?: Partial<Duration> | string; tags?: unknown }>(o: T, known: ReadonlySet<string>, what: string): Omit<T, 'within'> & { within?: Duration } {
  if (o === null || typeof o !== 'object') throw new InvalidInputError(`${what} options are an object`, 'options');
  for (const key of Object.keys(o)) if (!known.has(key)) throw new InvalidInputError(`${what} has no option ${JSON.stringify(key)} (it knows ${[...known].join(', ')})`, key);
  const { within, ...rest } = o;
  const out: Omit<T, 'within'> & { within?: Duration } = rest;
  if (within !== undefined) out.within = durationOf(within);
  if (o.tags !== undefined && !(Array.isArray(o.tags) && o.tags.every((t) => Array.isArray(t) && t.length > 0 && t.every((x) => typeof x === 'string')))) {
    throw new InvalidInputError('tags is a list of tag lists: a snapshot is kept when it holds every tag of one of them ([["daily"], ["a", "b"]])', 'tags');
  }
  return out;
}

function durationOf(v: unknown): Duration {
  if (typeof v === 'string') {
    try {
      return parseDuration(v);
    } catch (e) {
      throw new InvalidInputError(`within: ${(e as Error).message}`, 'within');
    }
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new InvalidInputError('within is a duration: { years?, months?, days?, hours? } or its text (1y5m7d2h)', 'within');
  const d: Duration = { years: 0, months: 0, days: 0, hours: 0 };
  for (const [k, n] of Object.entries(v)) {
    if (!(DURATION_FIELDS as readonly string[]).includes(k)) throw new InvalidInputError(`within has no field ${JSON.stringify(k)} (it has ${DURATION_FIELDS.join(', ')})`, 'within');
    if (!Number.isSafeInteger(n) || (n as number) < 0) throw new InvalidInputError(`within.${k} must be a whole number of 0 or more, not ${JSON.stringify(n)}`, 'within');
    d[k as keyof Duration] = n as number;
  }
  if (Object.keys(v).length === 0) throw new InvalidInputError('within is empty: name how long (days: 5, or "5d")', 'within');
  return d;
}

export async function forgetSnapshots(ctx: StoreContext, given: ForgetSnapshotsOptions): Promise<SnapshotForgetReport> {
  const o = checked(given, SNAPSHOT_OPTIONS, 'forgetSnapshots');
  if (o.exceptLabels !== undefined && !(o.exceptLabels instanceof Set)) throw new InvalidInputError('exceptLabels is a Set of labels', 'exceptLabels');
  if (policyIsEmpty(o)) throw new InvalidInputError('no policy: name what to keep (keep-last, keep-daily, keep-within, keep-tag, …); forgetting everything is never a default', 'policy');
  const rows = ctx.db
    .read(() => ctx.st.snapshotsAll.all())
    .filter((r) => (o.label === undefined || r.label === o.label) && !(r.label !== null && o.exceptLabels?.has(r.label)));
  const items = rows.map((r) => ({ id: r.uid, time: r.created_at, tags: snapshotTags(r), pinned: r.pinned === 1, ...(r.utc_offset !== null && r.utc_offset !== undefined ? { utcOffset: r.utc_offset } : {}) }));
  const { keep, remove } = applySnapshotPolicy(items, o);
  if (!o.dryRun) await commitAll(ctx, remove.map((s) => ({ op: 'rm-snapshot', id: s.id, policy: true })));
  return {
    keep: keep.map((k) => ({ id: k.item.id, time: iso(k.item.time), reasons: k.reasons })),
    remove: remove.map((s) => ({ id: s.id, time: iso(s.time) })),
  };
}

export async function forgetVersions(ctx: StoreContext, given: ForgetVersionsOptions): Promise<VersionForgetReport> {
  const o = checked(given, VERSION_OPTIONS, 'forgetVersions');
  if (o.prefix !== undefined && typeof o.prefix !== 'string') throw new InvalidInputError('prefix is a path prefix', 'prefix');
  if (versionPolicyIsEmpty(o)) throw new InvalidInputError('no policy: name what to keep (keep-versions, keep-versions-within)', 'policy');
  applyVersionPolicy([], o); // its rules checked even when no path has versions
  return forgetVersionsBy(ctx, o.prefix ?? '', () => o, o.dryRun ?? false);
}

/**
 * Applies to each path under `prefix` the policy `policyOf` gives it (none: the path is left
 * as it is), removing what it does not keep unless `dryRun`.
 */
export async function forgetVersionsBy(ctx: StoreContext, prefix: string, policyOf: (path: string) => VersionPolicy | undefined, dryRun: boolean): Promise<VersionForgetReport> {
  const report: VersionForgetReport = { keep: [], remove: [] };
  const removals: Op[] = [];
  // Path by path, in path order: one read transaction for the listing.
  const byPath = ctx.db.read(() => {
    const paths = new Map<string, VersionItem[]>();
    for (const r of ctx.st.versionsRetained.iterate(prefix)) {
      if (!r.path.startsWith(prefix)) break;
      let list = paths.get(r.path);
      if (!list) paths.set(r.path, (list = []));
      list.push({ path: r.path, version: r.version, time: r.created_at, pinned: r.pinned === 1 });
    }
    // Whether each path exists (one deleted with its versions kept has only history).
    return [...paths].map(([path, versions]) => {
      const live = ctx.st.entryIdByPath.get(path) !== undefined;
      return { path, versions, live, deletedAt: live ? undefined : ctx.st.deletedPathGet.get(path)?.at };
    });
  });
  const now = Date.now();
  for (const { path, versions, live, deletedAt } of byPath) {
    const policy = policyOf(path);
    if (!policy) continue;
    const { keep, remove } = applyVersionPolicy(versions, policy, live, now, deletedAt);
    for (const k of keep) report.keep.push({ path: k.item.path, version: k.item.version, time: iso(k.item.time), reasons: k.reasons });
    for (const v of remove) {
      report.remove.push({ path: v.path, version: v.version, time: iso(v.time) });
      removals.push({ op: 'delete-version', path: v.path, version: v.version, policy: true });
    }
  }
  if (!dryRun) await commitAll(ctx, removals);
  return report;
}
