#!/usr/bin/env node
/**
 * Kura's benchmark runner: `node bench/run.mjs [suite...] [--full] [--quick]`
 * (`pnpm bench core` from the workspace root).
 *
 * A suite is bench/suites/<name>.mjs exporting `async run({ full }) -> results[]` and,
 * optionally, `families` (how to print its tables) and `targets(results)` (verdicts).
 * No suite named = all of them. Quick (the default) keeps budgets short; --full measures
 * more sizes for longer. Results and machine facts go to bench/results/<suite>-<time>.json.
 *
 * Every run also rewrites bench/REPORT.md from the newest result of each suite. Baselines:
 * `--save-baseline NAME` keeps this run's results in bench/baselines/NAME/; `--baseline NAME`
 * compares with them (lib/baseline.mjs) and exits 1 when a Kura figure regressed.
 *
 * Exit status: a MISS is a report, not a failure (exit 0); a regression against a baseline
 * exits 1; a crash (Kura erring, a failed self-check, a bad argument) exits non-zero.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describeMachine, machineFacts } from './lib/machine.mjs';
import { setMode } from './lib/measure.mjs';
import { checkName, compareWithBaseline, saveBaseline } from './lib/baseline.mjs';
import { writeReport } from './lib/markdown.mjs';
import { familyTable, fmt, targetsTable } from './lib/report.mjs';

const SUITES_DIR = new URL('./suites/', import.meta.url);
const RESULTS_DIR = new URL('./results/', import.meta.url);

function parseArgs(argv) {
  const available = readdirSync(SUITES_DIR).filter((f) => f.endsWith('.mjs')).map((f) => f.slice(0, -4)).sort();
  const opts = { full: false, suites: [], saveBaseline: undefined, baseline: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--full') opts.full = true;
    else if (arg === '--quick') opts.full = false;
    else if (arg === '--save-baseline' || arg === '--baseline') {
      const name = argv[++i];
      if (!name) throw new Error(`${arg} needs a name`);
      opts[arg === '--baseline' ? 'baseline' : 'saveBaseline'] = checkName(name);
    } else if (arg === '--help' || arg === '-h') {
      console.log(`usage: node bench/run.mjs [${available.join('|')}...] [--full] [--quick] [--save-baseline NAME] [--baseline NAME]`);
      process.exit(0);
    } else if (arg.startsWith('-')) throw new Error(`unknown option ${arg}`);
    else if (!available.includes(arg)) throw new Error(`unknown suite "${arg}"; suites: ${available.join(', ')}`);
    else opts.suites.push(arg);
  }
  if (opts.suites.length === 0) opts.suites = available;
  return opts;
}

/** Prints one table per family, in the order the suite declares them (then any other). */
function printTables(results, families = {}) {
  const names = [...new Set([...Object.keys(families), ...results.map((r) => r.family)])];
  for (const name of names) {
    const rows = results.filter((r) => r.family === name);
    if (rows.length) console.log(`\n${familyTable(rows, families[name] ?? { title: name })}`);
  }
}

async function main() {
  const { full, suites, saveBaseline: save, baseline } = parseArgs(process.argv.slice(2));
  const regressions = [];
  setMode(full);
  const machine = machineFacts();
  const mode = full ? 'full' : 'quick';
  console.log(`Kura bench (${mode}): ${describeMachine(machine)}`);
  mkdirSync(RESULTS_DIR, { recursive: true });
  for (const name of suites) {
    const suite = await import(new URL(`${name}.mjs`, SUITES_DIR));
    const startedAt = new Date();
    console.log(`\n=== suite ${name} ===`);
    const results = await suite.run({ full });
    const seconds = (Date.now() - startedAt.getTime()) / 1000;
    printTables(results, suite.families);
    const targets = suite.targets ? suite.targets(results) : [];
    if (targets.length) console.log(`\n${targetsTable(targets)}`);
    const passed = targets.filter((t) => t.pass).length;
    console.log(`\nsuite ${name}: ${results.length} figures in ${seconds.toFixed(0)} s; targets ${passed}/${targets.length} PASS`);
    // ':' is not portable in file names; keep the rest of the ISO timestamp
    const stamp = startedAt.toISOString().replace(/[:]/g, '-').replace(/\.\d+Z$/, 'Z');
    const file = new URL(`${name}-${stamp}.json`, RESULTS_DIR);
    const units = { latency: 'ms (mean, p50, p95, p99, min, max)', mbPerSec: '10^6 bytes of raw input per second', size: 'bytes' };
    const report = { suite: name, mode, startedAt: startedAt.toISOString(), seconds, units, machine, targets, results };
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`written ${fileURLToPath(file)}`);
    if (baseline) {
      const c = compareWithBaseline(baseline, name, results);
      console.log(`\n${c.text}`);
      regressions.push(...c.regressions.map((r) => ({ suite: name, ...r })));
    }
    if (save) console.log(`baseline ${save}: saved ${saveBaseline(save, name, fileURLToPath(file))}`);
  }
  console.log(`\nreport: ${await writeReport()}`);
  if (regressions.length) {
    console.log(`\n${regressions.length} figure(s) regressed against baseline ${baseline}:`);
    for (const r of regressions) console.log(`  ${r.suite}: ${r.figure}: ${fmt.ops(r.baseline)}/s -> ${fmt.ops(r.now)}/s (${fmt.pct(r.delta)})`);
    process.exitCode = 1;
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
