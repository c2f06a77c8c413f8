/**
 * Retention policies kept in the store (decision 0058), so that `kura gc` and servers apply
 * them without anyone naming the rules again: one for the versions of the paths under each
 * prefix, one for the snapshots (of a label, or all). Set and removed through the log
 * (`policy` operation), like everything else. Durations are kept as written (`30d`).
 *
 * Versions: a path follows the policy of the longest prefix it starts with (a policy for
 * `notes/drafts/` is not overruled by one for `notes/`); paths under no prefix are left alone.
 * Snapshots: a policy for a label applies to the snapshots with that label; the one without a
 * label to the others.
 */
import { InvalidInputError } from '@kura/core';
import { z } from 'zod';
import type { StoreContext } from '../store-context.js';
import { commitOne } from '../store-context.js';
import { forgetSnapshots, forgetVersionsBy, type SnapshotForgetReport, type VersionForgetReport } from './forget.js';
import { parseDuration, policyIsEmpty, type SnapshotPolicy } from './policy.js';
import type { VersionPolicy } from './versions.js';

const count = z.number().int().min(0).max(1_000_000).optional();
const duration = z
  .string()
  .max(64)
  .refine((d) => {
    try {
      parseDuration(d);
      return true;
    } catch {
      return false;
    }
  }, 'not a duration like 1y5m7d2h')
  .optional();

/** A snapshot policy's rules as JSON (durations as written): kept in the store, and what POST /v1/forget takes. */
export const SnapshotRules = z.object({
  last: count,
  hourly: count,
  daily: count,
  weekly: count,
  monthly: count,
  yearly: count,
  within: duration,
  tags: z.array(z.array(z.string().min(1).max(256)).min(1)).max(64).optional().describe('each list: snapshots holding all of its tags'),
});

/** A versions policy's rules as JSON. */
export const VersionRules = z.object({ keep: z.number().int().min(1).max(1_000_000).optional(), within: duration });

export const StoredPolicy = z.discriminatedUnion('kind', [
  VersionRules.extend({ kind: z.literal('versions'), prefix: z.string().max(4096) }).strict(),
  SnapshotRules.extend({ kind: z.literal('snapshots'), label: z.string().max(1024).optional() }).strict(),
]);
export type StoredPolicy = z.infer<typeof StoredPolicy>;

export interface AppliedPolicy {
  policy: StoredPolicy;
  report: SnapshotForgetReport | VersionForgetReport;
}

/** The key a policy is kept under: one policy per prefix, one per label. */
export function policyTarget(p: Pick<StoredPolicy, 'kind'> & { prefix?: string; label?: string | undefined }): string {
  return p.kind === 'versions' ? `versions:${p.prefix ?? ''}` : `snapshots:${p.label ?? ''}`;
}

function checked(input: unknown): StoredPolicy {
  const r = StoredPolicy.safeParse(input);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new InvalidInputError(`policy: ${issue.path.join('.') || 'policy'}: ${issue.message}`, issue.path.join('.') || 'policy');
  }
  const p = r.data;
  if (p.kind === 'versions' && p.keep === undefined && p.within === undefined) throw new InvalidInputError('policy: name what to keep (keep, within)', 'policy');
  if (p.kind === 'snapshots' && policyIsEmpty(snapshotRules(p))) throw new InvalidInputError('policy: name what to keep (last, hourly, daily, weekly, monthly, yearly, within, tags)', 'policy');
  return p;
}

/** Rules as JSON (checked by SnapshotRules), as the policy functions take them. */
export function snapshotRules(p: z.infer<typeof SnapshotRules>): SnapshotPolicy {
  const { within, tags, ...counts } = SnapshotRules.strip().parse(p);
  return { ...counts, ...(tags ? { tags } : {}), ...(within ? { within: parseDuration(within) } : {}) };
}

/** Rules as JSON (checked by VersionRules), as the policy functions take them. */
export function versionRules(p: z.infer<typeof VersionRules>): VersionPolicy {
  return { ...(p.keep !== undefined ? { keep: p.keep } : {}), ...(p.within ? { within: parseDuration(p.within) } : {}) };
}

/** Keeps `policy` in the store (replacing the one for the same prefix or label). */
export async function setPolicy(ctx: StoreContext, policy: StoredPolicy): Promise<StoredPolicy> {
  const p = checked(policy);
  // A prefix no path can start with governs nothing, silently (`/notes`: a trial). Checked when
  // set, not when read: a policy kept before stays readable.
  if (p.kind === 'versions' && p.prefix.startsWith('/')) throw new InvalidInputError(`a policy's prefix is the start of the store's paths, which are relative: "${p.prefix}" begins with / (write ${JSON.stringify(p.prefix.replace(/^\/+/, ''))})`, 'prefix');
  await commitOne(ctx, { op: 'policy', target: policyTarget(p), rules: p });
  return p;
}

/** Removes the policy for a prefix (versions) or a label (snapshots); false when there was none. */
export async function removePolicy(ctx: StoreContext, target: { kind: 'versions'; prefix: string } | { kind: 'snapshots'; label?: string }): Promise<boolean> {
  return (await commitOne(ctx, { op: 'policy', target: policyTarget(target), rules: null })) as boolean;
}

/** The policies the store keeps, versions' by prefix, then snapshots'. */
export function policies(ctx: StoreContext): StoredPolicy[] {
  // Rows were checked when set; a row that no longer reads as a policy (a damaged database) is left out.
  return ctx.db
    .read(() => ctx.st.policiesAll.all())
    .flatMap((r) => {
      const p = StoredPolicy.safeParse(JSON.parse(r.rules));
      return p.success ? [p.data] : [];
    });
}

/** How many snapshots and versions the policies removed (or would). */
export function removedCounts(applied: readonly AppliedPolicy[]): { snapshots: number; versions: number } {
  const n = { snapshots: 0, versions: 0 };
  for (const a of applied) n[a.policy.kind] += a.report.remove.length;
  return n;
}

/** Applies every stored policy (removing what it does not keep, unless `dryRun`). */
export async function applyPolicies(ctx: StoreContext, dryRun: boolean): Promise<AppliedPolicy[]> {
  const all = policies(ctx);
  const out: AppliedPolicy[] = [];
  const versions = all.filter((p): p is Extract<StoredPolicy, { kind: 'versions' }> => p.kind === 'versions').sort((a, b) => b.prefix.length - a.prefix.length);
  for (const p of versions) {
    // The paths under this prefix that no longer prefix's policy claims.
    const longer = versions.filter((q) => q.prefix.length > p.prefix.length && q.prefix.startsWith(p.prefix));
    const rules = versionRules(p);
    const report = await forgetVersionsBy(ctx, p.prefix, (path) => (longer.some((q) => path.startsWith(q.prefix)) ? undefined : rules), dryRun);
    out.push({ policy: p, report });
  }
  const labelled = new Set(all.flatMap((p) => (p.kind === 'snapshots' && p.label !== undefined ? [p.label] : [])));
  for (const p of all) {
    if (p.kind !== 'snapshots') continue;
    const report = await forgetSnapshots(ctx, { ...snapshotRules(p), dryRun, ...(p.label !== undefined ? { label: p.label } : { exceptLabels: labelled }) });
    out.push({ policy: p, report });
  }
  return out;
}
