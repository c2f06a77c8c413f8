/**
 * `kura index [--wait] [--json]`: what the search index has still to do, the documents whose
 * text could not be (fully) extracted (decision 0035), and how far embedding is when the local
 * model is installed (0036). --wait first finishes the pending work, extraction and embedding
 * included, with a progress bar on a terminal; --json prints the IndexStatus as one line.
 */
import type { IndexStatus } from '@kura/store';
import type { Command } from 'commander';
import { embedderFor } from '../embedder.js';
import { count, shownPath } from '../format.js';
import { write, writeJson } from '../output.js';
import { Progress } from '../progress.js';
import { withStore } from '../store.js';

function report(s: IndexStatus): string {
  const { ok, capped, failed } = s.extracted;
  const lines = [
    `${'queued'.padEnd(12)}${count(s.queued)} entr${s.queued === 1 ? 'y' : 'ies'} to index`,
    `${'extracted'.padEnd(12)}${count(ok + capped + failed)} document${ok + capped + failed === 1 ? '' : 's'} (PDF, DOCX, HTML): ${count(ok)} ok, ${count(capped)} capped, ${count(failed)} failed`,
  ];
  for (const p of s.problems) lines.push(`  ${p.digest}  ${p.path ? shownPath(p.path) : '-'}  ${p.kind} ${p.status}: ${p.note ?? ''}`);
  if (s.textCapped > 0) lines.push(`${'capped'.padEnd(12)}${count(s.textCapped)} text file${s.textCapped === 1 ? '' : 's'} over 1 MiB: searched by their first MiB (kura grep reads them whole)`);
  const e = s.embedding;
  lines.push(
    e
      ? `${'embedded'.padEnd(12)}${count(e.documents)} document${e.documents === 1 ? '' : 's'} in ${count(e.chunks)} chunk${e.chunks === 1 ? '' : 's'}, ${count(e.pending)} to embed (${e.model})`
      : `${'embedded'.padEnd(12)}- (no embedding model installed: scripts/fetch-model.sh)`,
  );
  return lines.join('\n') + '\n';
}

/** Documents embedded of those there are, while --wait embeds. */
function embeddingBar(json: boolean) {
  let bar: Progress | undefined;
  let start: number | undefined;
  const onProgress = (s: IndexStatus) => {
    const e = s.embedding;
    if (!e || (bar === undefined && e.pending === 0)) return;
    start ??= e.documents;
    bar ??= new Progress(0, !json, ({ value, total, elapsed }) => {
      const rate = elapsed > 0 ? ((value - start!) * 1000) / elapsed : 0;
      return `embedded ${count(value)}/${count(total)} documents, ${rate.toFixed(1)}/s`;
    });
    bar.setTotal(e.documents + e.pending);
    bar.set(e.documents);
  };
  return { onProgress, stop: () => bar?.stop() };
}

export function register(program: Command): void {
  program
    .command('index')
    .description('the search index: pending work, documents whose text could not be extracted, and embedding')
    .option('--wait', 'finish pending indexing, text extraction and embedding first')
    .option(
      '--json',
      'one JSON line: {"queued","extracted":{"ok","capped","failed"},"problems":[{"digest","path","kind","status","note","pages"}],"textCapped","embedding":{"model","documents","chunks","pending"}|null}',
    )
    .action(async (opts: { wait?: boolean; json?: boolean }, cmd: Command) => {
      const embedder = await embedderFor(undefined);
      const bar = embeddingBar(opts.json ?? false);
      try {
        await withStore(cmd, { readonly: false }, async (store) => {
          if (embedder) store.useEmbedder(embedder);
          const s = await store.indexStatus({ wait: opts.wait ?? false, onProgress: bar.onProgress });
          bar.stop();
          if (opts.json) await writeJson(s);
          else await write(report(s));
        });
      } finally {
        bar.stop();
        await embedder?.close();
      }
    });
}
