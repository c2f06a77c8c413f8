/**
 * Baselines: a named copy of a run's results (bench/baselines/<name>/<suite>.json, committed),
 * and the comparison of a later run against it. Only Kura's own rows count (a peer that got
 * faster is not a regression), by ops/s, matched on what identifies a figure.
 *
 * Thresholds are per suite and wide on purpose: on this shared 2-core machine one figure can
 * move 2x between two runs minutes apart (bench/README.md, "Noise"). A regression is a Kura
 * figure below (1 - threshold) x its baseline; re-run before believing one.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fmt, formatTable } from './report.mjs';

export const BASELINES_DIR = fileURLToPath(new URL('../baselines/', import.meta.url));

/** Fraction a Kura figure may drop below its baseline before it counts as a regression. */
export const THRESHOLDS = { core: 0.3, store: 0.35, meta: 0.35, search: 0.35, http: 0.35, snapshot: 0.35, browser: 0.35 };
const DEFAULT_THRESHOLD = 0.35;

const NAME = /^[\w.-]{1,64}$/;

export function checkName(name) {
  if (!NAME.test(name)) throw new Error(`a baseline name is 1-64 of A-Z a-z 0-9 _ . -, got "${name}"`);
  return name;
}

export function saveBaseline(name, suite, resultFile) {
  const dir = `${BASELINES_DIR}${checkName(name)}/`;
  mkdirSync(dir, { recursive: true });
  copyFileSync(resultFile, `${dir}${suite}.json`);
  return `${dir}${suite}.json`;
}

const key = (r) => [r.family, r.group, r.impl, r.size, r.clients ?? r.concurrency ?? ''].join('|');
const metric = (r) => r.filesPerSec ?? r.updatesPerSec ?? r.opsPerSec;

/**
 * Compares a suite's rows with the baseline's. Returns printable lines and the regressions;
 * no baseline file for the suite is reported, not failed.
 */
export function compareWithBaseline(name, suite, rows) {
  const file = `${BASELINES_DIR}${checkName(name)}/${suite}.json`;
  if (!existsSync(file)) return { text: `baseline ${name}: no ${suite} figures saved; nothing compared`, regressions: [] };
  const base = new Map(JSON.parse(readFileSync(file, 'utf8')).results.filter((r) => !r.unavailable).map((r) => [key(r), r]));
  const threshold = THRESHOLDS[suite] ?? DEFAULT_THRESHOLD;
  const table = [];
  const regressions = [];
  for (const r of rows) {
    if (r.unavailable || !String(r.impl).startsWith('kura')) continue;
    const b = base.get(key(r));
    if (!b || !metric(b) || !metric(r)) continue;
    const delta = metric(r) / metric(b) - 1;
    const verdict = delta < -threshold ? 'REGRESSED' : delta > threshold ? 'faster' : '';
    if (verdict === 'REGRESSED') regressions.push({ figure: key(r), baseline: metric(b), now: metric(r), delta });
    table.push([r.group, r.impl, r.size ?? '', fmt.ops(metric(b)), fmt.ops(metric(r)), fmt.pct(delta), verdict]);
  }
  const head = `baseline ${name} (${suite}; a Kura figure below ${Math.round((1 - threshold) * 100)}% of its baseline is a regression)`;
  return { text: `${head}\n${formatTable(['group', 'impl', 'size', 'baseline/s', 'now/s', 'delta', ''], table, 'llrrrrl')}`, regressions };
}
