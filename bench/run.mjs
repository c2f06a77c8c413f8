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
 * Exit status: a MISS is a report, not a failure (exit 0); a crash (Kura erring, a failed
 * self-check, a bad argument) exits non-zero.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describeMachine, machineFacts } from './lib/machine.mjs';
import { setMode } from './lib/measure.mjs';
import { familyTable, targetsTable } from './lib/report.mjs';

const SUITES_DIR = new URL('./suites/', import.meta.url);
const RESULTS_DIR = new URL('./results/', import.meta.url);

function parseArgs(argv) {
  const available = readdirSync(SUITES_DIR).filter((f) => f.endsWith('.mjs')).map((f) => f.slice(0, -4)).sort();
  const opts = { full: false, suites: [] };
  for (const arg of argv) {
    if (arg === '--full') opts.full = true;
    else if (arg === '--quick') opts.full = false;
    else if (arg === '--help' || arg === '-h') {
      console.log(`usage: node bench/run.mjs [${available.join('|')}...] [--full] [--quick]`);
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
  const { full, suites } = parseArgs(process.argv.slice(2));
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
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
