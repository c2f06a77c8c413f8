/**
 * `kura tag REF [--add T]... [--remove T]... [--json]` and
 * `kura meta REF [key=value | key=]... [--json]`; REF is a digest or PATH[@N] (as for get).
 * With changes they are applied in one transaction and print nothing (or, with --json, the
 * resulting DocumentInfo); without, they show the tags (one per line) or the metadata
 * (key=value per line), reading the store read-only.
 */
import type { DocumentInfo, MetaUpdate } from '@kura/store';
import type { Command } from 'commander';
import { collect, docRef, keyValues } from '../args.js';
import { usage } from '../exit.js';
import { write, writeJson } from '../output.js';
import { resolveRef } from '../refs.js';
import { withStore } from '../store.js';

async function apply(
  cmd: Command,
  change: Omit<MetaUpdate, 'digest'> | undefined,
  ref: ReturnType<typeof docRef>,
  json: boolean,
  show: (info: DocumentInfo) => string[],
): Promise<void> {
  await withStore(cmd, { readonly: change === undefined }, async (store) => {
    const d = await resolveRef(store, ref);
    if (change) await store.updateMeta([{ ...change, digest: d }]);
    const info = await store.stat(d);
    if (json) await writeJson(info);
    else if (!change) {
      const lines = show(info);
      if (lines.length) await write(lines.map((l) => `${l}\n`).join(''));
    }
  });
}

export function register(program: Command): void {
  program
    .command('tag')
    .description("add or remove a document's tags, or list them")
    .argument('<ref>', 'sha256:<64 hex digits>, or PATH, PATH@N, PATH@<ISO time> (as for kura get)')
    .option('-a, --add <tag>', 'add a tag (repeatable)', collect)
    .option('-r, --remove <tag>', 'remove a tag (repeatable)', collect)
    .option('--json', 'print the resulting DocumentInfo as one JSON line')
    .addHelpText('after', '\nWithout --add/--remove, prints the tags, one per line.\nExample: kura tag notes/today.md --add reviewed --remove draft')
    .action(async (arg: string, opts: { add?: string[]; remove?: string[]; json?: boolean }, cmd: Command) => {
      const ref = docRef(arg);
      const add = opts.add ?? [];
      const remove = opts.remove ?? [];
      const both = add.find((t) => remove.includes(t));
      if (both !== undefined) throw usage(`--add and --remove both name the tag "${both}"`);
      const change = add.length || remove.length ? { addTags: add, removeTags: remove } : undefined;
      await apply(cmd, change, ref, !!opts.json, (info) => info.tags);
    });

  program
    .command('meta')
    .description("set or delete a document's key=value metadata, or show it")
    .argument('<ref>', 'sha256:<64 hex digits>, or PATH, PATH@N, PATH@<ISO time> (as for kura get)')
    .argument('[changes...]', 'key=value sets a key; key= deletes it')
    .option('--json', 'print the resulting DocumentInfo as one JSON line')
    .addHelpText('after', '\nWithout changes, prints the metadata as key=value lines.\nExample: kura meta sha256:… author=ada draft=')
    .action(async (arg: string, changes: string[], opts: { json?: boolean }, cmd: Command) => {
      const ref = docRef(arg);
      const kv = keyValues(changes, 'meta', true);
      const change = changes.length ? { meta: kv } : undefined;
      await apply(cmd, change, ref, !!opts.json, (info) => Object.entries(info.meta).map(([k, v]) => `${k}=${v}`));
    });
}
