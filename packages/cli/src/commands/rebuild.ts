/**
 * `kura rebuild [--force] [--json]`: makes kura.db again from the store's log (FORMAT.md §15.4):
 * the configuration, the newest whole checkpoint and every commit after it. The old database is
 * replaced only once the new one is complete, and kept when it has applied more than the log
 * holds (unless --force; node/rebuild.ts). Needs the store to itself, like any writer. A store
 * whose database is a cache (object storage, encrypted) has that cache's made again.
 */
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_FILE, DB_FILE, Store, defaultCacheDir, isObjectLocation } from '@kura/store';
import type { Command } from 'commander';
import { count } from '../format.js';
import { write, writeJson } from '../output.js';
import { storeDir, withStore } from '../store.js';
import { CliError, isKuraError } from '../exit.js';

/** Whether the store's database is a cache made from its log (object storage, an encrypted directory: FORMAT.md §17). */
function databaseIsCache(dir: string): boolean {
  if (isObjectLocation(dir)) return true;
  try {
    return /"encryption"/.test(readFileSync(join(dir, CONFIG_FILE), 'utf8'));
  } catch {
    return false;
  }
}

export function register(program: Command): void {
  program
    .command('rebuild')
    .description("make the store's database again from its log (after losing or damaging kura.db)")
    .option('--json', 'one JSON line: {"seq","commits","checkpoint","seconds"}')
    .option('--force', 'replace the database even when it has applied commits the log no longer holds (they are lost)')
    .action(async (opts: { json?: boolean; force?: boolean }, cmd: Command) => {
      const dir = storeDir(cmd);
      const started = performance.now();
      if (databaseIsCache(dir)) {
        // Its database is the cache's: removed, the next open makes it again from the store's
        // log (told to run kura rebuild, the command refused such a store: two trials).
        // (Stop servers and watches using this cache first: nothing locks a cache.)
        const cache = defaultCacheDir(dir);
        const db = join(cache, DB_FILE);
        const had = existsSync(db);
        // Set aside, not deleted, until the new one is made: an open that fails (the log
        // damaged, the bucket unreachable, a wrong password) leaves the old one in place.
        const files = [db, `${db}-wal`, `${db}-shm`].filter((f) => existsSync(f));
        for (const f of files) renameSync(f, `${f}.before-rebuild`);
        let seq: number;
        try {
          seq = await withStore(cmd, { readonly: false }, async (store) => (await store.refresh()).seq);
        } catch (e) {
          for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
          for (const f of files) renameSync(`${f}.before-rebuild`, f);
          throw e;
        }
        for (const f of files) rmSync(`${f}.before-rebuild`, { force: true });
        const seconds = (performance.now() - started) / 1000;
        if (opts.json) return writeJson({ seq, cache, seconds: Number(seconds.toFixed(3)) });
        return write(`${had ? 'rebuilt' : 'made'} the database of ${dir} in its cache ${cache} from the store's log, up to commit ${seq}, in ${seconds.toFixed(2)} s\n`);
      }
      let r: Awaited<ReturnType<typeof Store.rebuild>>;
      try {
        r = await Store.rebuild(dir, { force: opts.force === true });
      } catch (e) {
        if (isKuraError(e, 'STORE_LOCKED')) throw new CliError(`${dir}: the store is locked: another process is writing to it; stop it first [STORE_LOCKED]`);
        throw e;
      }
      const seconds = (performance.now() - started) / 1000;
      if (opts.json) {
        writeJson({ seq: r.seq, commits: r.commits, checkpoint: r.checkpoint ?? null, ...(r.cut ? { cut: r.cut } : {}), seconds: Number(seconds.toFixed(3)) });
        return;
      }
      const from = r.checkpoint === undefined ? 'the start of the log' : `checkpoint ${r.checkpoint}`;
      for (const f of r.cut ?? []) process.stderr.write(`kura: the log was damaged: cut there, what followed kept in ${dir}/${f}\n`);
      write(`rebuilt ${dir}/kura.db: ${count(r.commits)} commits replayed from ${from}, up to commit ${r.seq}, in ${seconds.toFixed(2)} s\n`);
    });
}
