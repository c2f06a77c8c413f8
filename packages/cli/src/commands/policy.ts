/**
 * Retention policies kept in the store (decision 0058), applied by `kura gc` and by servers:
 *   kura policy set --versions PREFIX --keep-versions N [--keep-versions-within D]
 *   kura policy set --snapshots [--label L] --keep-daily N …
 *   kura policy list [--json]      kura policy rm --versions PREFIX | --snapshots [--label L]
 *   kura policy apply [--dry-run] [--json]    what they keep and remove now (gc does this first)
 */
import { NotFoundError, type StoredPolicy } from '@kura/store';
import type { Command } from 'commander';
import { wholeNumber } from '../args.js';
import { snapshotRuleOptions, snapshotRuleValues, type SnapshotRuleOptions } from './forget.js';
import { usage } from '../exit.js';
import { write, writeJson } from '../output.js';
import { shownPath } from '../format.js';
import { withStore } from '../store.js';

interface PolicyOptions extends SnapshotRuleOptions {
  versions?: string;
  snapshots?: boolean;
  label?: string;
  keepVersions?: string;
  keepVersionsWithin?: string;
}

export function describePolicy(p: StoredPolicy): string {
  if (p.kind === 'versions') return `versions under "${p.prefix}": ${[p.keep !== undefined ? `keep ${p.keep}` : '', p.within ? `within ${p.within}` : ''].filter(Boolean).join(', ')}`;
  const rules = (['last', 'hourly', 'daily', 'weekly', 'monthly', 'yearly'] as const).flatMap((k) => (p[k] ? [`${k} ${p[k]}`] : []));
  if (p.within) rules.push(`within ${p.within}`);
  for (const t of p.tags ?? []) rules.push(`tag ${t.join(',')}`);
  return `snapshots${p.label !== undefined ? ` labelled "${p.label}"` : ''}: ${rules.join(', ')}`;
}

function target(opts: PolicyOptions): { kind: 'versions'; prefix: string } | { kind: 'snapshots'; label?: string } {
  if ((opts.versions !== undefined) === Boolean(opts.snapshots)) throw usage('name what the policy is for: --versions PREFIX (the versions of paths under it; "" for all) or --snapshots');
  if (opts.versions !== undefined && opts.label !== undefined) throw usage('--label selects snapshots');
  return opts.versions !== undefined ? { kind: 'versions', prefix: opts.versions } : { kind: 'snapshots', ...(opts.label !== undefined ? { label: opts.label } : {}) };
}

export function register(program: Command): void {
  const policy = program.command('policy').description('retention policies kept in the store: kura gc and servers apply them');
  const forWhat = (c: Command) =>
    c
      .option('--versions <prefix>', 'for the versions of the paths under this prefix ("" for every path)')
      .option('--snapshots', 'for snapshots')
      .option('--label <label>', 'snapshots: only those with this label');
  snapshotRuleOptions(forWhat(policy.command('set').description('keep a policy (replacing the one for the same prefix or label); the rules are kura forget\'s')))
    .option('--keep-versions <n>', "versions: each path's newest n")
    .option('--keep-versions-within <duration>', "versions: those made within this before each path's newest")
    .action(async (opts: PolicyOptions, cmd: Command) => {
      const t = target(opts);
      const p: Record<string, unknown> = { ...t };
      if (t.kind === 'versions') {
        if (opts.keepVersions !== undefined) p.keep = wholeNumber(opts.keepVersions, '--keep-versions');
        if (opts.keepVersionsWithin !== undefined) p.within = opts.keepVersionsWithin;
      } else {
        const rules = snapshotRuleValues(opts);
        Object.assign(p, rules.counts, rules.within !== undefined ? { within: rules.within } : {}, rules.tags ? { tags: rules.tags } : {});
      }
      await withStore(cmd, { readonly: false }, async (store) => {
        await write(`kept: ${describePolicy(await store.setPolicy(p as StoredPolicy))}\n`);
      });
    });
  forWhat(policy.command('rm').description('remove the policy for a prefix or a label')).action(async (opts: PolicyOptions, cmd: Command) => {
    const t = target(opts);
    await withStore(cmd, { readonly: false }, async (store) => {
      if (!(await store.removePolicy(t))) throw new NotFoundError(`no policy for ${t.kind === 'versions' ? `versions under "${t.prefix}"` : 'those snapshots'}`);
    });
  });
  policy
    .command('list')
    .description('the policies kept in the store')
    .option('--json', 'one JSON object per policy')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      await withStore(cmd, { readonly: true }, async (store) => {
        for (const p of await store.policies()) {
          if (opts.json) await writeJson(p);
          else await write(`${describePolicy(p)}\n`);
        }
      });
    });
  policy
    .command('apply')
    .description('apply every policy now (kura gc does this first): what each keeps and removes')
    .option('--dry-run', 'say what would go; change nothing')
    .option('--json', 'one JSON object per policy: {"policy","report":{"keep","remove"}}')
    .action(async (opts: { dryRun?: boolean; json?: boolean }, cmd: Command) => {
      await withStore(cmd, { readonly: opts.dryRun ?? false }, async (store) => {
        for (const a of await store.applyPolicies({ dryRun: opts.dryRun ?? false })) {
          if (opts.json) await writeJson(a);
          else {
            // What goes, each on its line (counts alone did not "say what would go": a trial).
            const gone = a.report.remove.map((r) => ('id' in r ? `  ${r.id.slice(0, 12)}  ${r.time}` : `  ${shownPath(r.path)}@${r.version}  ${r.time}`));
            await write(`${describePolicy(a.policy)}: keep ${a.report.keep.length}, ${opts.dryRun ? 'would remove' : 'removed'} ${a.report.remove.length}${gone.length ? ':' : ''}\n${gone.map((l) => `${l}\n`).join('')}`);
          }
        }
      });
    });
}
