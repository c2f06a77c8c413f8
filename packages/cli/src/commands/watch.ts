/**
 * `kura watch DIR... [--prefix P] [--exclude GLOB] [--tag T] [--poll S | --rescan S] [--json]`: keeps folders in the
 * store (decision 0059): catches up with what changed since the last watch, then stores each
 * change once its writer has closed the file (or half a second after its last change where
 * that cannot be seen), until SIGINT or SIGTERM. Human output: a line
 * per path stored or deleted; --json: one JSON object per event. A line is printed only after
 * its commit: what was reported stored stays stored, however the process ends.
 */
import type { Command } from 'commander';
import type { Watch, WatchEvent } from '@kura/store';
import { basename, resolve } from 'node:path';
import { collect } from '../args.js';
import { usage } from '../exit.js';
import { bytes, shownPath } from '../format.js';
import { write, writeJson } from '../output.js';
import { withStore } from '../store.js';

function line(e: WatchEvent): string | undefined {
  switch (e.type) {
    case 'ready':
      return `caught up in ${(e.ms / 1000).toFixed(1)} s: ${e.stored} stored, ${e.deleted} deleted, ${e.unchanged} unchanged; watching`;
    case 'stored':
      return `stored  ${shownPath(e.path)}  ${bytes(e.size)}${e.newChunks === 0 ? '  (no new bytes)' : ''}`;
    case 'deleted':
      return `deleted ${shownPath(e.path)}  (its versions stay)`;
    case 'scanning':
      return `kura: ${e.reason}`;
    case 'error':
      return `kura: ${e.path ? `${shownPath(e.path)}: ` : ''}${e.message}${e.code ? ` [${e.code}]` : ''}`;
  }
}

export function register(program: Command): void {
  program
    .command('watch')
    .description('keep folders in the store: store each change as a new version, keep what is deleted on disk as versions (until kura forget)')
    .argument('<dir...>', 'the folders')
    .option('--prefix <path>', 'where in the store (one folder only; default: the folder\'s name, e.g. notes/)')
    .option('--exclude <pattern>', 'leave out names or paths matching this glob, as kura snapshot --exclude (repeatable; .git, node_modules, stores and editors\' temporary files — .x.swp, x~, .#x, #x#, 4913 — always)', collect)
    .option('--tag <tag>', 'tag every path stored (repeatable)', collect)
    .option('--poll <seconds>', 'scan the folders this often instead of listening to the OS (network file systems: the OS hears of no remote change)')
    .option('--rescan <seconds>', 'besides listening to the OS, check the whole folders this often: the OS loses changes under load (default 3600; 0: never)')
    .option('--json', 'one JSON object per event: {"type":"ready"|"stored"|"deleted"|"scanning"|"error",…}')
    .addHelpText('after', '\nThe watch owns the paths under its prefix: files not in the folder any more are deleted there (their versions stay).\nRuns until Ctrl-C or SIGTERM; started again, it catches up with what changed meanwhile.')
    .action(async (dirs: string[], opts: { prefix?: string; exclude?: string[]; tag?: string[]; poll?: string; rescan?: string; json?: boolean }, cmd: Command) => {
      const poll = opts.poll === undefined ? undefined : Number(opts.poll);
      if (poll !== undefined && !(poll >= 0.1 && poll <= 86_400)) throw usage(`--poll takes seconds from 0.1 to 86400, got "${opts.poll}"`);
      const rescan = opts.rescan === undefined ? undefined : Number(opts.rescan);
      if (rescan !== undefined && !(rescan === 0 || (rescan >= 1 && rescan <= 604_800))) throw usage(`--rescan takes seconds from 1 to 604800, or 0 (never), got "${opts.rescan}"`);
      if (rescan !== undefined && poll !== undefined) throw usage('--rescan checks beside listening to the OS; --poll scans instead of it: give one');
      if (opts.prefix !== undefined && dirs.length > 1) throw usage('--prefix names where one folder goes: watch several folders without it (each goes under its own name)');
      // The watch owns its prefix: an empty one would delete every path of the store that is not in the folder (a trial).
      if (opts.prefix === '') throw usage('--prefix "" would make the watch own every path in the store (and delete those not in the folder): give a folder, such as --prefix notes/');
      // A folder named without its slash is that folder (`--prefix w` was refused as no prefix, in
      // words that offered the empty one, which the line above refuses: a trial).
      const prefixes = dirs.map((d) => (opts.prefix === undefined ? `${basename(resolve(d))}/` : opts.prefix.endsWith('/') ? opts.prefix : `${opts.prefix}/`));
      if (new Set(prefixes).size < prefixes.length) throw usage('two folders have the same name: watch them one at a time with --prefix');
      await withStore(cmd, { readonly: false }, async (store) => {
        // Events are printed in order: each write waits for the one before.
        let printed = Promise.resolve();
        const onEvent = (e: WatchEvent) => {
          printed = printed.then(async () => {
            if (opts.json) await writeJson(e);
            else {
              const text = line(e);
              if (text === undefined) return;
              if (e.type === 'error' || e.type === 'scanning') process.stderr.write(`${text}\n`);
              else await write(`${text}\n`);
            }
          });
        };
        const watches: Watch[] = dirs.map((d, i) =>
          store.watch(d, { prefix: prefixes[i]!, ...(opts.exclude ? { exclude: opts.exclude } : {}), ...(opts.tag ? { tags: opts.tag } : {}), ...(poll !== undefined ? { pollMs: Math.round(poll * 1000) } : {}), ...(rescan !== undefined ? { rescanMs: Math.round(rescan * 1000) } : {}), onEvent }),
        );
        const stop = new Promise<void>((done) => {
          process.once('SIGINT', done);
          process.once('SIGTERM', done);
        });
        try {
          await Promise.race([Promise.all(watches.map((w) => w.ready)), stop]);
          await stop;
        } finally {
          await Promise.all(watches.map((w) => w.close()));
          await printed;
        }
      });
    });
}
