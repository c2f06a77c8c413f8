/**
 * `kura index [--wait] [--json]`: what the search index has still to do, and the documents
 * whose text could not be (fully) extracted (decision 0035). --wait first finishes the pending
 * work (extraction included); --json prints the IndexStatus as one line.
 */
import type { IndexStatus } from '@kura/store';
import type { Command } from 'commander';
import { count } from '../format.js';
import { write, writeJson } from '../output.js';
import { withStore } from '../store.js';

function report(s: IndexStatus): string {
  const { ok, capped, failed } = s.extracted;
  const lines = [
    `${'queued'.padEnd(12)}${count(s.queued)} entr${s.queued === 1 ? 'y' : 'ies'} to index`,
    `${'extracted'.padEnd(12)}${count(ok + capped + failed)} document${ok + capped + failed === 1 ? '' : 's'} (PDF, DOCX, HTML): ${count(ok)} ok, ${count(capped)} capped, ${count(failed)} failed`,
  ];
  for (const p of s.problems) lines.push(`  ${p.digest}  ${p.path ?? '-'}  ${p.kind} ${p.status}: ${p.note ?? ''}`);
  return lines.join('\n') + '\n';
}

export function register(program: Command): void {
  program
    .command('index')
    .description('the search index: pending work, and documents whose text could not be extracted')
    .option('--wait', 'finish pending indexing and text extraction first')
    .option('--json', 'one JSON line: {"queued","extracted":{"ok","capped","failed"},"problems":[{"digest","path","kind","status","note","pages"}]}')
    .action(async (opts: { wait?: boolean; json?: boolean }, cmd: Command) => {
      await withStore(cmd, { readonly: false }, async (store) => {
        const s = await store.indexStatus({ wait: opts.wait ?? false });
        if (opts.json) await writeJson(s);
        else await write(report(s));
      });
    });
}
