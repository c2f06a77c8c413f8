/**
 * Plain-text tables for the terminal and the targets verdict. Suites return flat result rows
 * ({ family, group, impl, size, mbPerSec, ... }); a suite's `families` say how to print them.
 */
import { sizeLabel } from './data.mjs';

/**
 * Pads cells into aligned columns. `align` has one letter per column, 'l' or 'r'; figures
 * are right-aligned so their digits line up.
 */
export function formatTable(headers, rows, align = '') {
  const cells = [headers, ...rows].map((r) => headers.map((_, i) => (r[i] === undefined || r[i] === null ? '' : String(r[i]))));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (align[i] === 'r' ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(cells[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

export const fmt = {
  // (Blank for rows without the figure: a quality score has no MB/s.)
  mbps: (v) => (!Number.isFinite(v) ? '' : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)),
  ops: (v) => (!Number.isFinite(v) ? '' : v >= 1e6 ? `${(v / 1e6).toFixed(2)}M` : v >= 1e4 ? `${(v / 1e3).toFixed(1)}k` : v.toFixed(v >= 100 ? 0 : 1)),
  /** ms in, shown in the unit that keeps 3 significant figures. */
  time: (ms) => (!Number.isFinite(ms) ? '' : ms < 1 ? `${(ms * 1000).toFixed(ms < 0.01 ? 2 : 1)} µs` : ms < 1000 ? `${ms.toFixed(2)} ms` : `${(ms / 1000).toFixed(2)} s`),
  ratio: (v) => (Number.isFinite(v) ? `${v.toFixed(2)}x` : ''),
  pct: (v) => `${v >= 0 ? '+' : ''}${(v * 100).toFixed(0)}%`,
};

/**
 * One family's table as data: `spec.ratio(row, rows)` gives the comparison column (default: the
 * baseline impl's MB/s over this row's, same group and size); `spec.extra` adds columns.
 * Unavailable peers become notes, once each, with the reason.
 */
export function familyData(rows, spec) {
  const extra = spec.extra ?? [];
  const ratioOf = spec.ratio ?? ((row, all) => kuraOver(row, all, spec.baseline ?? 'kura'));
  const headers = ['group', 'impl', 'size', 'MB/s', 'ops/s', 'p50', 'p99', spec.ratioHeader ?? 'kura/peer', ...extra.map((e) => e.header)];
  const body = ordered(rows.filter((r) => !r.unavailable)).map((r) => [
    r.group, r.impl, r.size === undefined ? '' : sizeLabel(r.size), fmt.mbps(r.mbPerSec), fmt.ops(r.opsPerSec), fmt.time(r.p50), fmt.time(r.p99),
    fmt.ratio(ratioOf(r, rows)), ...extra.map((e) => e.value(r) ?? ''),
  ]);
  const missing = new Map(rows.filter((r) => r.unavailable).map((r) => [r.impl, r.unavailable]));
  const notes = [...missing].map(([impl, why]) => `unavailable: ${impl}: ${why}`);
  return { title: spec.title, headers, body, notes };
}

/** One family's table for the terminal. */
export function familyTable(rows, spec) {
  const d = familyData(rows, spec);
  return [d.title, formatTable(d.headers, d.body, 'llrrrrrrrrrr'), ...d.notes.map((n) => `  ${n}`)].join('\n');
}

/** A Markdown table (pipes in cells escaped). */
export function markdownTable(headers, rows, align = '') {
  const cell = (c) => String(c ?? '').replace(/\|/g, '\\|');
  const rule = headers.map((_, i) => (align[i] === 'r' ? '---:' : '---'));
  return [headers, rule, ...rows].map((r) => `| ${r.map(cell).join(' | ')} |`).join('\n');
}

/** Rows by group (first-seen order), then size, then impl (first-seen order): stable. */
function ordered(rows) {
  const groups = [...new Set(rows.map((r) => r.group))];
  return rows.map((r, i) => [r, i]).sort(([a, i], [b, j]) =>
    groups.indexOf(a.group) - groups.indexOf(b.group) || a.size - b.size || i - j).map(([r]) => r);
}

/**
 * baseline MB/s / row MB/s for a peer row (ops/s over ops/s when the op moves no bytes, as a
 * metadata update); undefined for the baseline itself.
 */
export function kuraOver(row, all, baseline = 'kura') {
  if (row.impl === baseline) return undefined;
  const k = find(all, { group: row.group, impl: baseline, size: row.size });
  if (!k) return undefined;
  if (row.mbPerSec) return k.mbPerSec / row.mbPerSec;
  return row.size === 0 && row.opsPerSec ? k.opsPerSec / row.opsPerSec : undefined;
}

/** The measured row matching every given field (unavailable rows never match). */
export function find(rows, where) {
  return rows.find((r) => !r.unavailable && Object.entries(where).every(([k, v]) => r[k] === v));
}

/**
 * A target verdict. `measured` undefined (a peer or figure missing) is reported as MISS with
 * the reason, never silently dropped. margin = measured / goal - 1.
 */
export function target(label, measured, goal, { unit = 'x', detail = '', missing = 'no figure' } = {}) {
  if (measured === undefined || !Number.isFinite(measured)) {
    return { target: label, goal, measured: null, unit, pass: false, margin: null, detail: missing };
  }
  return { target: label, goal, measured, unit, pass: measured >= goal, margin: measured / goal - 1, detail };
}

export function targetsTable(targets) {
  const show = (t) => (t.measured === null ? 'n/a' : t.unit === 'x' ? fmt.ratio(t.measured) : `${fmt.mbps(t.measured)} ${t.unit}`);
  const rows = targets.map((t) => [t.target, show(t), t.pass ? 'PASS' : 'MISS', t.margin === null ? '' : fmt.pct(t.margin), t.detail]);
  return `targets\n${formatTable(['target', 'measured', 'verdict', 'margin', 'from'], rows, 'lrlrl')}`;
}
