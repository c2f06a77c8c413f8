/**
 * `kura versions PATH [--json]`: the versions of a logical path, oldest first. Human output:
 * `@N  <digest>  <size>  <time>` (and `  pinned`); --json: one VersionInfo per line.
 */
import type { Command } from 'commander';
import { bytes } from '../format.js';
import { write, writeJson } from '../output.js';
import { withPathHint } from '../refs.js';
import { withStore } from '../store.js';
import { storePath } from '../store-path.js';

export function register(program: Command): void {
  program
    .command('versions')
    .description('list the versions of a path (kura get PATH@N reads one)')
    .argument('<path>', 'the path, as given to kura add (normalized the same way)')
    .option('--json', 'one JSON object per version: {"path","version","digest","size","createdAt","pinned"}')
    .action(async (arg: string, opts: { json?: boolean }, cmd: Command) => {
      const path = storePath(arg);
      await withStore(cmd, { readonly: true }, async (store) => {
        const versions = await store.versions(path);
        if (versions.length === 0) throw await withPathHint(store, path, Object.assign(new Error(`no versions of ${path}`), { code: 'NOT_FOUND' }));
        for (const v of versions) {
          if (opts.json) await writeJson(v);
          else await write(`@${v.version}  ${v.digest}  ${bytes(v.size).padStart(9)}  ${v.createdAt}${v.pinned ? '  pinned' : ''}\n`);
        }
      });
    });
}
