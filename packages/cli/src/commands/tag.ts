/**
 * `kura tag REF [--add T]... [--remove T]... [--json]` and
 * `kura meta REF [key=value | key=]... [--json]`; REF is a PATH, or a digest naming the entry
 * of that content (decision 0025: refused as AMBIGUOUS when several paths show it). Tags and
 * metadata belong to a path, not to one of its versions: PATH@N is refused. With changes they
 * are applied in one transaction and print nothing (or, with --json, the resulting entry);
 * without, they show the tags (one per line) or the metadata (key=value per line), reading the
 * store read-only.
 */
import type { DocumentInfo, MetaUpdate } from '@kura/store';
import type { Command } from 'commander';
import { collect, docRef, keyValues } from '../args.js';
import { usage } from '../exit.js';
import { write, writeJson } from '../output.js';
import { withPathHint } from '../refs.js';
import { withStore } from '../store.js';

async function apply(
  cmd: Command,
  change: Omit<MetaUpdate, 'digest' | 'path'> | undefined,
  arg: string,
  json: boolean,
  show: (info: DocumentInfo) => string[],
): Promise<void> {
  const ref = docRef(arg);
  if ('path' in ref && /@(\d+|\d{4}-\d\d.*)$/.test(ref.path)) {
    throw usage(`tags and metadata belong to a path, not to one of its versions: name ${ref.path.replace(/@[^@]*$/, '')}`);
  }
  await withStore(cmd, { readonly: change === undefined }, async (store) => {
    const target = 'digest' in ref ? ref.digest : ref.path;
    let info: DocumentInfo;
    try {
      if (change) await store.updateMeta([{ ...change, ...ref }]);
      info = await store.stat(target);
    } catch (e) {
      throw 'path' in ref ? await withPathHint(store, ref.path, e) : e;
    }
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
    .description("add or remove a path's tags, or list them")
    .argument('<ref>', 'PATH, or sha256:<64 hex digits> for the one path (or pathless put) showing that content')
    .option('-a, --add <tag>', 'add a tag (repeatable)', collect)
    .option('-r, --remove <tag>', 'remove a tag (repeatable)', collect)
    .option('--json', 'print the resulting entry as one JSON line')
    .addHelpText('after', '\nWithout --add/--remove, prints the tags, one per line.\nExample: kura tag notes/today.md --add reviewed --remove draft')
    .action(async (arg: string, opts: { add?: string[]; remove?: string[]; json?: boolean }, cmd: Command) => {
      const add = opts.add ?? [];
      const remove = opts.remove ?? [];
      const both = add.find((t) => remove.includes(t));
      if (both !== undefined) throw usage(`--add and --remove both name the tag "${both}"`);
      const change = add.length || remove.length ? { addTags: add, removeTags: remove } : undefined;
      await apply(cmd, change, arg, !!opts.json, (info) => info.tags);
    });

  program
    .command('meta')
    .description("set or delete a path's key=value metadata, or show it")
    .argument('<ref>', 'PATH, or sha256:<64 hex digits> for the one path (or pathless put) showing that content')
    .argument('[changes...]', 'key=value sets a key; key= deletes it')
    .option('--json', 'print the resulting entry as one JSON line')
    .addHelpText('after', '\nWithout changes, prints the metadata as key=value lines.\nExample: kura meta sha256:… author=ada draft=')
    .action(async (arg: string, changes: string[], opts: { json?: boolean }, cmd: Command) => {
      const kv = keyValues(changes, 'meta', true);
      const change = changes.length ? { meta: kv } : undefined;
      await apply(cmd, change, arg, !!opts.json, (info) => Object.entries(info.meta).map(([k, v]) => `${k}=${v}`));
    });
}
