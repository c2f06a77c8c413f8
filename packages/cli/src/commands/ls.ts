/**
 * `kura ls [--tag T] [--type M] [--prefix P] [--since ISO] [--until ISO] [--limit N]
 * [--cursor C] [--json]`: entries (paths, and puts without one) in the order they were made. Without --limit, every
 * match is listed. With --limit N, one page of at most N; when more remain, the last line on
 * stderr is `kura: next cursor: C`, and `--cursor C` lists the next page. stdout stays pure:
 * with --json, every stdout line is one entry (DocumentInfo) object.
 */
import type { DocumentInfo, ListQuery, WalkEntry } from '@kura/store';
import { snapshotId } from './snapshot.js';
import type { Command } from 'commander';
import { storePrefix } from '../store-path.js';
import { isoDate, wholeNumber } from '../args.js';
import { usage } from '../exit.js';
import { bytes, shownPath } from '../format.js';
import { write, writeJson } from '../output.js';
import { withStore } from '../store.js';

interface LsOptions {
  deleted?: boolean;
  snapshot?: string;
  tag?: string;
  type?: string;
  prefix?: string;
  since?: string;
  until?: string;
  limit?: string;
  cursor?: string;
  json?: boolean;
}

/** The store's largest page. */
const PAGE_MAX = 10_000;
const PAGE = 1000;

export function humanLine(d: DocumentInfo): string {
  const tags = d.tags.length ? `  [${d.tags.join(', ')}]` : '';
  return `${d.digest}  ${bytes(d.size).padStart(10)}  ${d.path === null ? '-' : shownPath(d.path)}${tags}`;
}

/** A snapshot's entry as `ls -l` would show it: mode, size, time (when recorded) and path. */
function snapshotLine(w: WalkEntry): string {
  const e = w.entry;
  const time = e.type !== 'symlink' && e.mtime !== undefined ? new Date(e.mtime).toISOString() : '-';
  if (e.type === 'symlink') return `${'l'.padEnd(5)}  ${''.padStart(10)}  ${'-'.padEnd(24)}  ${shownPath(w.path)} -> ${shownPath(e.target)}`;
  const mode = e.mode.toString(8).padStart(4, '0');
  const size = e.type === 'file' ? bytes(e.size) : '';
  return `${(e.type === 'dir' ? 'd' : '-') + mode}  ${size.padStart(10)}  ${time.padEnd(24)}  ${shownPath(w.path)}${e.type === 'dir' ? '/' : ''}`;
}

export function register(program: Command): void {
  program
    .command('ls')
    .description('list paths (and puts without one) with their latest version; filters combine with AND')
    .option('--tag <tag>', 'only paths with this tag')
    .option('--type <media-type>', 'only paths of this media type')
    .option('--prefix <path>', 'only paths that start with this')
    .option('--since <iso>', 'only paths changed at or after this time (e.g. 2024-05-01T00:00:00Z)')
    .option('--until <iso>', 'only paths changed before this time')
    .option('--limit <n>', `list one page of at most N paths (1..${PAGE_MAX}); default: all`)
    .option('--cursor <c>', 'continue after the page that printed this cursor')
    .option('--json', 'one JSON object (DocumentInfo) per line')
    .option('--deleted', 'paths deleted with their versions kept (a watched file deleted on disk), with when: "<time>  <path>"; --json {"path","deletedAt"}')
    .option('--snapshot <id>', 'the files, directories and links of a snapshot (its id or 4+ digits), under --prefix: "<mode>  <size>  <time>  <path>" (a directory ends in /, a link "-> target"); --json {"path","entry"}')
    .addHelpText(
      'after',
      `
Output: one line per path, "<digest>  <size>  <path>  [tags]" (the digest of its latest
version; "-" for a put without a path), or with --json one entry per line:
{"path","digest","size","chunks","version","mediaType","tags","meta","createdAt","updatedAt"}.
The same bytes at two paths list twice: two entries sharing one document.

Pagination: without --limit every match is printed. With --limit N at most N are printed and,
when more remain, the last line on stderr is "kura: next cursor: C" (stdout holds only
entries, with or without --json). Run the same command with --cursor C for the next page;
when no such line appears, the listing is complete. A cursor is a position in the order paths
were first added: later pages never repeat earlier ones, and paths added meanwhile come at the
end.`,
    )
    .action(async (opts: LsOptions, cmd: Command) => {
      const limit = opts.limit === undefined ? undefined : wholeNumber(opts.limit, '--limit');
      if (limit !== undefined && (limit < 1 || limit > PAGE_MAX)) throw usage(`--limit must be between 1 and ${PAGE_MAX}, got ${limit}`);
      if (opts.cursor !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(opts.cursor)) throw usage(`--cursor must be a cursor printed by kura ls, got "${opts.cursor}"`);
      const since = isoDate(opts.since, '--since');
      const until = isoDate(opts.until, '--until');
      const query: ListQuery = {
        ...(opts.tag !== undefined ? { tag: opts.tag } : {}),
        ...(opts.type !== undefined ? { mediaType: opts.type } : {}),
        ...(opts.prefix !== undefined ? { pathPrefix: storePrefix(opts.prefix) } : {}),
        ...(since ? { since } : {}),
        ...(until ? { until } : {}),
      };
      if (opts.snapshot !== undefined) {
        // A snapshot's files were listed by nothing: restore or get --snapshot had to guess
        // their paths (a backup trial; restic ls).
        if (opts.deleted || opts.tag !== undefined || opts.type !== undefined || since || until || opts.cursor !== undefined) throw usage('--snapshot lists by --prefix (and --limit) only: a snapshot\'s files have no tags, type or entry time');
        const ref = snapshotId(opts.snapshot);
        const under = opts.prefix === undefined ? undefined : storePrefix(opts.prefix);
        return withStore(cmd, { readonly: true }, async (store) => {
          const { id } = await store.snapshotInfo(ref);
          let left = limit ?? Infinity;
          for await (const w of store.snapshotEntries(id)) {
            if (under !== undefined && !`${w.path}${w.entry.type === 'dir' ? '/' : ''}`.startsWith(under)) continue;
            if (left-- <= 0) return;
            if (opts.json) await writeJson(w);
            else await write(`${snapshotLine(w)}\n`);
          }
        });
      }
      if (opts.deleted) {
        // Nothing listed them, though their versions stay readable as PATH@N (a trial).
        if (opts.tag !== undefined || opts.type !== undefined || since || until || opts.cursor !== undefined) throw usage('--deleted lists by --prefix (and --limit) only: a deleted path has no tags, type or entry time');
        return withStore(cmd, { readonly: true }, async (store) => {
          let after: string | undefined;
          let left = limit ?? Infinity;
          while (left > 0) {
            const page = await store.deletedPaths({ ...(opts.prefix !== undefined ? { prefixes: [storePrefix(opts.prefix)] } : {}), ...(after !== undefined ? { after } : {}), limit: Math.min(left, PAGE) });
            for (const d of page) {
              if (opts.json) await writeJson(d);
              else await write(`${d.deletedAt}  ${shownPath(d.path)}\n`);
            }
            left -= page.length;
            if (page.length < Math.min(left + page.length, PAGE)) return;
            after = page.at(-1)!.path;
          }
        });
      }
      await withStore(cmd, { readonly: true }, async (store) => {
        let cursor = opts.cursor;
        let left = limit ?? Infinity;
        for (;;) {
          const page = await store.list({ ...query, limit: Math.min(left, PAGE), ...(cursor !== undefined ? { cursor } : {}) });
          for (const d of page.items) {
            if (opts.json) await writeJson(d);
            else await write(`${humanLine(d)}\n`);
          }
          left -= page.items.length;
          cursor = page.nextCursor;
          if (cursor === undefined) return;
          if (left <= 0) break;
        }
        process.stderr.write(`kura: next cursor: ${cursor}\n`);
      });
    });
}
