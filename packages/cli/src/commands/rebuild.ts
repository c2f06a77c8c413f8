/**
 * `kura rebuild [--json]`: makes kura.db again from the store's log (FORMAT.md §15.4): the
 * configuration, the newest checkpoint and every commit after it. The old database is never
 * read (it may be the damaged thing) and is replaced only once the new one is complete. Needs
 * the store to itself, like any writer.
 */
import { Store } from '@kura/store';
import type { Command } from 'commander';
import { count } from '../format.js';
import { write, writeJson } from '../output.js';
import { storeDir } from '../store.js';
import { CliError, isKuraError } from '../exit.js';

export function register(program: Command): void {
  program
    .command('rebuild')
    .description("make the store's database again from its log (after losing or damaging kura.db)")
    .option('--json', 'one JSON line: {"seq","commits","checkpoint","seconds"}')
    .option('--force', 'replace the database even when it has applied commits the log no longer holds (they are lost)')
    .action(async (opts: { json?: boolean; force?: boolean }, cmd: Command) => {
      const dir = storeDir(cmd);
      const started = performance.now();
      let r: Awaited<ReturnType<typeof Store.rebuild>>;
      try {
        r = await Store.rebuild(dir, { force: opts.force === true });
      } catch (e) {
        if (isKuraError(e, 'STORE_LOCKED')) throw new CliError(`${dir}: the store is locked: another process is writing to it; stop it first [STORE_LOCKED]`);
        throw e;
      }
      const seconds = (performance.now() - started) / 1000;
      if (opts.json) {
        writeJson({ seq: r.seq, commits: r.commits, checkpoint: r.checkpoint ?? null, seconds: Number(seconds.toFixed(3)) });
        return;
      }
      const from = r.checkpoint === undefined ? 'the start of the log' : `checkpoint ${r.checkpoint}`;
      write(`rebuilt ${dir}/kura.db: ${count(r.commits)} commits replayed from ${from}, up to commit ${r.seq}, in ${seconds.toFixed(2)} s\n`);
    });
}
