/**
 * Figures for the reliability report (`pnpm test:reliability`, scripts/reliability-report.mjs):
 * a test that passes records what it did — rounds, faults injected, damage detected, requests
 * sent, data lost — when KURA_RELIABILITY_OUT names a directory; otherwise nothing happens.
 * A test that fails records nothing, and the report shows it as failed or not run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function recordReliability(source: string, title: string, figures: Record<string, number>): void {
  const dir = process.env.KURA_RELIABILITY_OUT;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${source}.json`), JSON.stringify({ source, title, figures, at: new Date().toISOString() }, null, 2));
}
