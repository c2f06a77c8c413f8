/**
 * Which versions of a path a retention policy keeps (decision 0058): the newest `keep` of
 * them, those made within a duration before the path's newest version (as restic's
 * `--keep-within` counts from the newest snapshot, not from now), and pinned ones. The
 * version a path shows (its newest) is always kept: forgetting never changes what a path
 * reads, only how far back its history goes. A path deleted with its versions kept reads
 * nothing: its history is kept as it was at the deletion for `within` after the deletion (a
 * trash bin), then goes (counted from its newest version, no rule ever let its last version go;
 * counted from each version's time, a note written months ago went the moment it was deleted).
 */
import { InvalidInputError } from '@kura/core';
import { before, formatDuration, type Decision, type Duration } from './policy.js';

export interface VersionPolicy {
  /** The newest N versions of each path. */
  keep?: number;
  /** Versions made within this before the path's newest version. */
  within?: Duration;
}

export interface VersionItem {
  path: string;
  version: number;
  /** ms since the epoch. */
  time: number;
  pinned: boolean;
}

export function versionPolicyIsEmpty(p: VersionPolicy): boolean {
  return p.keep === undefined && !p.within;
}

/**
 * The versions of one path (any order) the policy keeps, newest first, and those it removes.
 * `live`: the path exists (its newest version is what it reads, and stays); a path deleted
 * with its versions kept has only history, which the rules alone keep — `within` as it was
 * at the deletion (`deletedAt`, ms; unknown: long ago) for `within` after it.
 */
export function applyVersionPolicy(versions: readonly VersionItem[], policy: VersionPolicy, live = true, now = Date.now(), deletedAt?: number): { keep: Decision<VersionItem>[]; remove: VersionItem[] } {
  if (policy.keep !== undefined && (!Number.isSafeInteger(policy.keep) || policy.keep < 1)) {
    throw new InvalidInputError(`keep-versions must be a whole number of at least 1 (the newest version is always kept), not ${policy.keep}`, 'keepVersions');
  }
  const list = [...versions].sort((a, b) => b.version - a.version);
  const keep: Decision<VersionItem>[] = [];
  const remove: VersionItem[] = [];
  if (list.length === 0) return { keep, remove };
  const empty = versionPolicyIsEmpty(policy);
  // Deleted within `within`: its history stays as a live path's would (a trash bin).
  const binned = !live && policy.within !== undefined && deletedAt !== undefined && deletedAt > before(now, policy.within);
  const from = policy.within ? before(live || binned ? list[0]!.time : now, policy.within) : undefined;
  list.forEach((item, nr) => {
    const reasons: string[] = [];
    if (nr === 0 && live) reasons.push('latest');
    if (nr === 0 && binned) reasons.push(`deleted within ${formatDuration(policy.within!)}`);
    if (item.pinned) reasons.push('pinned');
    if (empty) reasons.push('policy is empty');
    const newest = nr === 0 && (live || binned); // kept as the path's content (or its last, binned): the rules need not say it
    if (policy.keep !== undefined && nr < policy.keep && !newest) reasons.push(`last ${policy.keep} version${policy.keep === 1 ? '' : 's'}`);
    if (from !== undefined && item.time > from && !newest) reasons.push(`within ${formatDuration(policy.within!)}`);
    if (reasons.length) keep.push({ item, reasons });
    else remove.push(item);
  });
  return { keep, remove };
}
