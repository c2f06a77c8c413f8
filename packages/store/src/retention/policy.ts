/**
 * Which snapshots a retention policy keeps (decision 0058), as restic's `forget` decides it
 * (restic 0.14, the peer this machine has; tested against it): snapshots newest first; each
 * `keep-*` count keeps the newest snapshot of each of the last N *periods that have a
 * snapshot* (hours, days, ISO weeks, months, years of the local calendar) — counts of
 * periods, not windows of time: `--keep-daily 7` keeps one snapshot for each of the 7 most
 * recent days that have one, however far back they reach; `--keep-within 2m` keeps
 * everything newer than two months before the newest snapshot (not before now); a tag list
 * keeps every snapshot holding all of its tags; pinned snapshots are always kept. A snapshot
 * is kept when any rule keeps it, with every rule that did as its reasons.
 */
import { InvalidInputError } from '@kura/core';

/** restic's duration: years, months, days and hours, e.g. `1y5m7d2h`. */
export interface Duration {
  years: number;
  months: number;
  days: number;
  hours: number;
}

export interface SnapshotPolicy {
  last?: number;
  hourly?: number;
  daily?: number;
  weekly?: number;
  monthly?: number;
  yearly?: number;
  /** Every snapshot newer than this before the newest one. */
  within?: Duration;
  /** Snapshots holding every tag of any one of these lists. */
  tags?: string[][];
}

/** What a policy decides about one snapshot (or version): kept with its reasons, or removed. */
export interface Decision<T> {
  item: T;
  reasons: string[];
}

export interface Dated {
  /** ms since the epoch. */
  time: number;
  /**
   * Minutes east of UTC where it was made: its hours, days, weeks, months and years are
   * counted there, as restic counts a snapshot's in the zone its time was recorded with (absent:
   * this process's time zone).
   */
  utcOffset?: number;
  tags?: readonly string[];
  pinned?: boolean;
}

const COUNTS = ['last', 'hourly', 'daily', 'weekly', 'monthly', 'yearly'] as const;
const REASON: Record<(typeof COUNTS)[number], string> = {
  last: 'last snapshot',
  hourly: 'hourly snapshot',
  daily: 'daily snapshot',
  weekly: 'weekly snapshot',
  monthly: 'monthly snapshot',
  yearly: 'yearly snapshot',
};

/** restic's duration syntax: numbers each followed by y, m (months), d or h, e.g. `1y5m7d2h`. */
export function parseDuration(text: string): Duration {
  const d: Duration = { years: 0, months: 0, days: 0, hours: 0 };
  const s = text.trim();
  if (!/^(\d+[ymdh])+$/.test(s)) throw new InvalidInputError(`"${text}" is not a duration like 1y5m7d2h (y years, m months, d days, h hours)`, 'duration');
  for (const [, n, unit] of s.matchAll(/(\d+)([ymdh])/g)) {
    const value = Number(n);
    if (!Number.isSafeInteger(value) || value > 100_000) throw new InvalidInputError(`"${text}": ${n} is too large`, 'duration');
    if (unit === 'y') d.years = value;
    else if (unit === 'm') d.months = value;
    else if (unit === 'd') d.days = value;
    else d.hours = value;
  }
  // A window of nothing keeps nothing by time: every snapshot (or version) the other rules do
  // not keep would go. restic reads `0d` as no rule at all; a rule that reads as one thing and
  // does another is refused instead.
  if (d.years + d.months + d.days + d.hours === 0) throw new InvalidInputError(`"${text}" is a duration of zero: it would keep nothing; leave the rule out instead`, 'duration');
  return d;
}

export function formatDuration(d: Duration): string {
  return `${d.years ? `${d.years}y` : ''}${d.months ? `${d.months}m` : ''}${d.days ? `${d.days}d` : ''}${d.hours ? `${d.hours}h` : ''}`;
}

/**
 * `time` minus the duration as Go's time.AddDate then Add do it: years, months and days off the
 * local calendar date (overflow normalised: 31 March less a month is 3 March), then hours.
 */
export function before(time: number, d: Duration): number {
  const t = new Date(time);
  const moved = new Date(t.getFullYear() - d.years, t.getMonth() - d.months, t.getDate() - d.days, t.getHours(), t.getMinutes(), t.getSeconds(), t.getMilliseconds());
  return moved.getTime() - d.hours * 3_600_000;
}

/** A time's calendar date and hour, in the zone `utcOffset` east of UTC, else this process's. */
function calendar(time: number, utcOffset: number | undefined): { y: number; m: number; d: number; h: number } {
  if (utcOffset === undefined) {
    const t = new Date(time);
    return { y: t.getFullYear(), m: t.getMonth(), d: t.getDate(), h: t.getHours() };
  }
  const t = new Date(time + utcOffset * 60_000);
  return { y: t.getUTCFullYear(), m: t.getUTCMonth(), d: t.getUTCDate(), h: t.getUTCHours() };
}

/** The ISO 8601 week of a calendar date: year * 100 + week, as Go's ISOWeek. */
function isoWeek(t: { y: number; m: number; d: number }): number {
  // The Thursday of the date's week decides the year (UTC arithmetic on the calendar date).
  const day = Date.UTC(t.y, t.m, t.d);
  const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday 0
  const thursday = new Date(day + (3 - weekday) * 86_400_000);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * 86_400_000)) + 1;
  return year * 100 + week;
}

/** The period a time falls in, for each count (restic's buckets; `last`: every snapshot its own). */
function bucket(kind: (typeof COUNTS)[number], time: number, nr: number, utcOffset: number | undefined): number {
  const t = calendar(time, utcOffset);
  switch (kind) {
    case 'last':
      return nr;
    case 'hourly':
      return t.y * 1_000_000 + (t.m + 1) * 10_000 + t.d * 100 + t.h;
    case 'daily':
      return t.y * 10_000 + (t.m + 1) * 100 + t.d;
    case 'weekly':
      return isoWeek(t);
    case 'monthly':
      return t.y * 100 + t.m + 1;
    case 'yearly':
      return t.y;
  }
}

export function policyIsEmpty(p: SnapshotPolicy): boolean {
  return COUNTS.every((k) => !p[k]) && !p.within && !(p.tags && p.tags.length);
}

/**
 * The snapshots `policy` keeps, newest first with their reasons, and those it removes. An
 * empty policy keeps everything (as restic's does): forgetting all is never a default.
 */
export function applySnapshotPolicy<T extends Dated>(items: readonly T[], policy: SnapshotPolicy, now = Date.now()): { keep: Decision<T>[]; remove: T[] } {
  for (const k of COUNTS) {
    const n = policy[k];
    if (n !== undefined && (!Number.isSafeInteger(n) || n < 0)) throw new InvalidInputError(`keep-${k} must be a whole number, not ${n}`, k);
  }
  // Newest first; equal times keep their order (a stable sort, as restic's).
  const list = [...items].sort((a, b) => b.time - a.time);
  const keep: Decision<T>[] = [];
  const remove: T[] = [];
  if (list.length === 0) return { keep, remove };
  if (policyIsEmpty(policy)) {
    for (const item of list) keep.push({ item, reasons: item.pinned ? ['pinned'] : ['policy is empty'] });
    return { keep, remove };
  }
  const counts = COUNTS.map((k) => ({ kind: k, left: policy[k] ?? 0, last: -1 }));
  // The newest snapshot that is not in the future.
  let latest = 0;
  for (const s of list) if (s.time > latest && s.time < now) latest = s.time;
  const withinFrom = policy.within ? before(latest, policy.within) : undefined;
  list.forEach((item, nr) => {
    const reasons: string[] = [];
    if (item.pinned) reasons.push('pinned');
    for (const tags of policy.tags ?? []) if (tags.every((t) => item.tags?.includes(t))) reasons.push(`has tags [${tags.join(' ')}]`);
    if (withinFrom !== undefined && item.time > withinFrom) reasons.push(`within ${formatDuration(policy.within!)}`);
    for (const c of counts) {
      if (c.left <= 0) continue;
      const b = bucket(c.kind, item.time, nr, item.utcOffset);
      if (b !== c.last) {
        c.last = b;
        c.left--;
        reasons.push(REASON[c.kind]);
      }
    }
    if (reasons.length) keep.push({ item, reasons });
    else remove.push(item);
  });
  return { keep, remove };
}
