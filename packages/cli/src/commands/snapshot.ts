/**
 * Directory snapshots (docs/FORMAT.md §13):
 *   kura snapshot DIR [--label L] [--tag T] [--time T] [--no-mtime] [--reread] [--json]   record a tree
 *   kura snapshots [--json]                               list them
 *   kura restore ID DIR [--include P]... [--overwrite] [--json]   recreate one, or some paths of it
 *   kura diff A B [--json]                                what changed between two
 *   kura rm-snapshot ID... [--json]                       delete (kura gc reclaims the space)
 */
import { InvalidInputError } from '@kura/core';
import type { RestoreProgress, SnapshotDiff, SnapshotInfo, SnapshotProgress, TreeEntry } from '@kura/store';
import type { Command } from 'commander';
import { collect } from '../args.js';
import { EXIT, isKuraError, usage } from '../exit.js';
import { bytes, count, counted, rate, shownPath } from '../format.js';
import { write, writeJson } from '../output.js';
import { Progress } from '../progress.js';
import { withStore } from '../store.js';
import { notUtf8 } from '../walk.js';
import { interruptible } from '../interrupt.js';

/** A snapshot id as `kura snapshots` prints it, or any unique prefix of 4 or more of its digits. */
export function snapshotId(value: string): string {
  if (!/^[0-9a-f]{4,32}$/.test(value)) throw usage(`a snapshot id is 4 to 32 hex digits (the start of an id kura snapshots lists), got "${value}"`);
  return value;
}

/**
 * A DIR argument: "" names no directory (resolved, it was the current one, which `restore ID ""
 * --overwrite` then filled and `snapshot ""` recorded: a trial). `.` says the current directory.
 */
function requireDir(dir: string, what: string): void {
  if (dir === '') throw new InvalidInputError(`the directory ${what} is "": give one (. for the current directory)`, 'dir');
}

/** Ids are shown by their first 12 digits, as git shortens commit ids; --json has them whole. */
const SHORT_ID = 12;

const line = (s: SnapshotInfo) =>
  [s.id.slice(0, SHORT_ID), s.createdAt, `${count(s.files).padStart(7)} ${s.files === 1 ? 'file ' : 'files'}`, bytes(s.bytes).padStart(9), s.label ?? '', s.tags.length ? `[${s.tags.join(',')}]` : '', s.pinned ? 'pinned' : ''].filter(Boolean).join('  ');

/**
 * A time as restic's `backup --time` takes it, `2006-01-02 15:04:05` in the local zone, a
 * date alone (`2006-01-02`: its midnight, local time, as restic reads it), or any ISO 8601
 * time (`2006-01-02T15:04:05Z`).
 */
export function snapshotTime(value: string): Date {
  const local = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}):(\d{2}))?$/.exec(value);
  const t = local ? new Date(+local[1]!, +local[2]! - 1, +local[3]!, +(local[4] ?? 0), +(local[5] ?? 0), +(local[6] ?? 0)) : /^\d{4}-\d{2}-\d{2}T/.test(value) ? new Date(value) : new Date(NaN);
  if (Number.isNaN(t.getTime()) || (local && (t.getDate() !== +local[3]! || t.getMonth() !== +local[2]! - 1))) throw usage(`--time takes "2006-01-02 15:04:05" or "2006-01-02" (local time) or ISO 8601, got "${value}"`);
  return t;
}

/** An entry of a diff, as a person reads it: `file 12 B 644 sha256:5af7b952c062`, `dir 755`, `symlink -> target`. */
function describe(e: TreeEntry): string {
  if (e.type === 'file') return `file ${bytes(e.size)} ${e.mode.toString(8)} ${shortDigest(e.digest)}`;
  if (e.type === 'dir') return `dir ${e.mode.toString(8)}`;
  return `symlink -> ${JSON.stringify(e.target)}`;
}

/** A digest's first 12 hex digits: enough to tell two versions of a file apart by eye (--json has them whole). */
const shortDigest = (d: string) => d.slice(0, 'sha256:'.length + 12);

/** What changed at a path from `a` to `b`, each part named: content, mode, time, link target, or the kind of entry. */
function changes(a: TreeEntry, b: TreeEntry): string {
  if (a.type !== b.type) return `${describe(a)} => ${describe(b)}`;
  const out: string[] = [];
  if (a.type === 'symlink' && b.type === 'symlink') out.push(`target ${JSON.stringify(a.target)} => ${JSON.stringify(b.target)}`);
  if (a.type === 'file' && b.type === 'file' && a.digest !== b.digest) out.push(`content ${bytes(a.size)} ${shortDigest(a.digest)} => ${bytes(b.size)} ${shortDigest(b.digest)}`);
  if (a.type !== 'symlink' && b.type !== 'symlink') {
    if (a.mode !== b.mode) out.push(`mode ${a.mode.toString(8)} => ${b.mode.toString(8)}`);
    if (a.mtime !== b.mtime) out.push(`mtime ${when(a.mtime)} => ${when(b.mtime)}`);
  }
  return out.join(', ');
}

const when = (t: number | undefined) => (t === undefined ? 'none' : new Date(t).toISOString());

export function register(program: Command, setExit: (code: number) => void): void {
  program
    .command('snapshot')
    .description('record a directory tree: files deduplicated like add, symlinks as links, empty directories kept')
    .argument('<dir>', 'the directory')
    .option('--label <text>', 'a label to find it by')
    .option('--tag <tag>', 'a tag (repeatable): kura forget --keep-tag keeps snapshots by their tags', collect)
    .option('--time <time>', 'record the snapshot as of this time, "2006-01-02 15:04:05" (local) or ISO 8601 (imports; default now)')
    .option('--no-mtime', 'leave modification times out (an untouched tree then keeps its id when files are merely touched)')
    .option('--reread', 'read every file, even those unchanged since an earlier snapshot read them')
    .option('--exclude <pattern>', 'leave out entries matching a glob: a name at any depth (node_modules, *.log), a path from DIR with / (build/out), directories only with a trailing / (repeatable)', collect)
    .option('--json', 'one JSON object: {"id","label","createdAt","files","bytes","tree","tags","pinned","skipped","notUtf8","badNames","reused","vanished","excluded","changed","unreadable"}')
    .action(async (dir: string, opts: { label?: string; tag?: string[]; time?: string; mtime: boolean; reread?: boolean; exclude?: string[]; json?: boolean }, cmd: Command) => {
      requireDir(dir, 'to snapshot');
      const time = opts.time === undefined ? undefined : snapshotTime(opts.time);
      await withStore(cmd, { readonly: false }, async (store) => {
        // A bar on a terminal, unless --json: files found while the tree is scanned, then files
        // done of the tree's.
        let bar: Progress | undefined;
        let read = 0;
        let last: SnapshotProgress | undefined;
        let s: Awaited<ReturnType<typeof store.snapshot>>;
        const options = {
          mtime: opts.mtime,
          reread: opts.reread ?? false,
          ...(opts.label !== undefined ? { label: opts.label } : {}),
          ...(opts.tag ? { tags: opts.tag } : {}),
          ...(time ? { time } : {}),
          ...(opts.exclude ? { exclude: opts.exclude } : {}),
          onProgress: (p: SnapshotProgress) => {
            last = p;
            if (opts.json) return;
            bar ??= new Progress(p.total, true, ({ value, total, elapsed }) =>
              last?.phase === 'scan'
                ? `scanning: ${count(last.total)} files found`
                : [`${count(value)}/${count(total)} files`, `${bytes(read)} read`, rate(read, elapsed / 1000), last?.reused ? `${count(last.reused)} unchanged` : ''].filter(Boolean).join(' | '),
            );
            read = p.bytes;
            bar.setTotal(p.total);
            bar.set(p.files);
          },
        };
        try {
          // Ctrl-C: the snapshot records nothing, and says so (it ended with 130 and not a
          // word). Before its files are all put that is so at once (the store is left as a
          // crash leaves it: what was put stays unnamed until GC); after, the snapshot stops
          // before its commit — or, its commit begun, finishes and is printed.
          const allPut = () => last?.phase === 'files' && last.files >= last.total;
          s = await interruptible((signal) => store.snapshot(dir, { ...options, signal }), {
            stopped: 'nothing was recorded',
            atOnce: () => {
              if (allPut()) return false;
              (bar as Progress | undefined)?.stop();
              return true;
            },
          });
        } finally {
          (bar as Progress | undefined)?.stop();
        }
        // A name a tree cannot hold, or an entry it may not read: the snapshot holds the rest,
        // and the exit code says it is recorded with something left out — 4, not 1, which a
        // script could not tell from a snapshot that failed (a trial; restic exits 3 so).
        if (s.notUtf8.length || s.badNames.length || s.unreadable.length) setExit(EXIT.partial);
        if (opts.json) return writeJson(s);
        for (const p of s.skipped) process.stderr.write(`kura: skipped ${shownPath(p)}: not a file, directory or symlink\n`);
        for (const p of s.notUtf8) process.stderr.write(`kura: left out ${shownPath(p)}: ${notUtf8().message}\n`);
        for (const b of s.badNames) process.stderr.write(`kura: left out ${shownPath(b.path)}: a snapshot cannot hold ${b.why} (rename it, or leave it out with --exclude)\n`);
        for (const p of s.vanished) process.stderr.write(`kura: left out ${shownPath(p)}: deleted while the snapshot ran\n`);
        for (const p of s.unreadable) process.stderr.write(`kura: left out ${shownPath(p)}: permission denied\n`);
        for (const p of s.changed) process.stderr.write(`kura: warning: ${shownPath(p)} changed while it was read: the snapshot's copy may mix its old and new bytes (the next snapshot reads it again)\n`);
        const notes = [s.reused ? `${count(s.reused)} unchanged, not read` : '', s.excluded ? `${count(s.excluded)} excluded` : ''].filter(Boolean);
        await write(`snapshot ${s.id.slice(0, SHORT_ID)}: ${counted(s.files, 'file')}${notes.length ? ` (${notes.join('; ')})` : ''}, ${bytes(s.bytes)}${s.label ? ` (${s.label})` : ''}\n`);
      });
    });

  program
    .command('snapshots')
    .description('list the snapshots, oldest first')
    .option('--json', 'one JSON object per snapshot: {"id","label","createdAt","files","bytes","tree","tags","pinned"}')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      await withStore(cmd, { readonly: true }, async (store) => {
        for (const s of await store.snapshots()) {
          if (opts.json) await writeJson(s);
          else await write(`${line(s)}\n`);
        }
      });
    });

  program
    .command('restore')
    .description('recreate a snapshot in DIR (created if missing; must be empty unless --overwrite); nothing is written outside DIR')
    .argument('<id>', 'the snapshot id, or a unique prefix of 4+ digits (kura snapshots)')
    .argument('<dir>', 'where to restore it')
    .option('--include <path>', 'restore only this path of the snapshot (as kura ls --snapshot ID shows it) and what is under it, at its place under DIR (repeatable)', collect)
    .option('--overwrite', 'restore into a non-empty directory, replacing files the snapshot has')
    .option('--json', 'one JSON object: {"files","dirs","symlinks","bytes","holes","linksOutside","damaged"}')
    .action(async (id: string, dir: string, opts: { include?: string[]; overwrite?: boolean; json?: boolean }, cmd: Command) => {
      const n = snapshotId(id);
      requireDir(dir, 'to restore into');
      await withStore(cmd, { readonly: true }, async (store) => {
        let bar: Progress | undefined;
        let written = 0;
        // Ctrl-C stops it between files or chunks: the file being written goes, the written
        // stay (the bar is stopped first: it hides the cursor).
        const r = await interruptible(async (signal) => {
          try {
            return await store.restore(n, dir, {
              signal,
              overwrite: opts.overwrite ?? false,
              ...(opts.include ? { include: opts.include } : {}),
              ...(opts.json
                ? {}
                : {
                    onProgress: (p: RestoreProgress) => {
                      bar ??= new Progress(p.total, true, ({ value, total, elapsed }) => `${count(value)}/${count(total)} files | ${bytes(written)} | ${rate(written, elapsed / 1000)}`);
                      written = p.bytes;
                      bar.set(p.files);
                    },
                  }),
            });
          } catch (e) {
            // The store's message speaks of its `overwrite` option; here that is --overwrite.
            if (isKuraError(e, 'INVALID_INPUT') && (e as { field?: string }).field === 'target' && /not empty/.test(e.message)) {
              throw new InvalidInputError(`${dir} is not empty: restore into an empty or new directory, or pass --overwrite to replace the files the snapshot has`, 'target');
            }
            throw e;
          } finally {
            (bar as Progress | undefined)?.stop();
          }
        });
        // Damaged files are not written; the others are (exit 3: damage, as grep and verify say it).
        for (const d of r.damaged) process.stderr.write(`kura: ${shownPath(d.path)}: not restored: ${d.message} [CORRUPT_DATA]\n`);
        if (r.damaged.length) setExit(EXIT.damaged);
        if (opts.json) return writeJson(r);
        await write(`restored snapshot ${n} to ${dir}: ${counted(r.files, 'file')} (${bytes(r.bytes)}${r.holes ? `, ${bytes(r.holes)} of zeros left as holes` : ''}), ${counted(r.dirs, 'directory', 'directories')}, ${counted(r.symlinks, 'symlink')}${r.damaged.length ? `; ${counted(r.damaged.length, 'damaged file')} not restored` : ''}\n`);
        if (r.linksOutside.length) {
          const shown = r.linksOutside.slice(0, 3).map((l) => `${shownPath(l.path)} -> ${shownPath(l.target)}`).join(', ');
          process.stderr.write(`kura: note: ${counted(r.linksOutside.length, 'link')} point${r.linksOutside.length === 1 ? 's' : ''} outside the restored tree, restored as recorded: ${shown}${r.linksOutside.length > 3 ? ', …' : ''}\n`);
        }
      });
    });

  program
    .command('diff')
    .description("paths added (+), removed (-) and changed (~: content, mode, a file's time, or link target) from snapshot A to snapshot B")
    .argument('<a>', 'the older snapshot id (or a unique prefix)')
    .argument('<b>', 'the newer snapshot id (or a unique prefix)')
    .option('--json', 'one JSON object: {"added":[{path,entry}],"removed":[…],"changed":[{path,a,b}]}')
    .action(async (a: string, b: string, opts: { json?: boolean }, cmd: Command) => {
      const [x, y] = [snapshotId(a), snapshotId(b)];
      await withStore(cmd, { readonly: true }, async (store) => {
        const d: SnapshotDiff = await store.diffSnapshots(x, y);
        if (opts.json) return writeJson(d);
        const rows = [
          ...d.added.map((e) => ({ path: e.path, text: `+ ${shownPath(e.path)}  ${describe(e.entry)}` })),
          ...d.removed.map((e) => ({ path: e.path, text: `- ${shownPath(e.path)}  ${describe(e.entry)}` })),
          ...d.changed.map((c) => ({ path: c.path, text: `~ ${shownPath(c.path)}  ${changes(c.a, c.b)}` })),
        ].sort((p, q) => (p.path < q.path ? -1 : p.path > q.path ? 1 : 0));
        await write(rows.map((r) => `${r.text}\n`).join(''));
      });
    });

  program
    .command('rm-snapshot')
    .description('delete snapshots; what only they kept goes (kura gc reclaims the space)')
    .argument('<id...>', 'snapshot ids (or unique prefixes)')
    .option('--json', 'one JSON object per snapshot: {"id" (whole),"freedByGc"} (bytes of chunks only it kept, which the next gc removes)')
    .action(async (ids: string[], opts: { json?: boolean }, cmd: Command) => {
      const ns = ids.map(snapshotId);
      await withStore(cmd, { readonly: false }, async (store) => {
        for (const ref of ns) {
          const { id } = await store.snapshotInfo(ref); // the whole id a prefix names
          const freed = await store.snapshotExclusiveSize(id);
          await store.deleteSnapshot(id);
          if (opts.json) await writeJson({ id, freedByGc: freed });
          // (Said as what GC removes, not what the disk gets back: chunks in packs still mostly in
          // use stay on disk until their packs are compacted — "will free 17.8 KiB" then "freed
          // 0 B" in a trial.)
          else await write(`deleted snapshot ${id.slice(0, SHORT_ID)}: ${bytes(freed)} of chunks only it kept, which kura gc removes (their space comes back as their packs empty out)\n`);
        }
      });
    });
}
