/**
 * `kura grep PATTERN [PREFIX...] [-i] [-w] [-o] [-n] [-l] [-c] [-C N] [--tag T] [--type M] [--json]`:
 * lines of the stored text that match a regular expression (decision 0055) — text files as
 * they are, PDF, DOCX and HTML by their extracted text — printed as grep -r prints them
 * (`path:line:text`, context as `path-line-text`, groups apart by `--`; `-o`: each match
 * alone, `path:line:match`), matches in bold on a terminal. Streams: memory stays bounded whatever the store's size. Exit 0 when a line
 * matched, 1 when none did (as grep), 2 for a pattern that is not one, 3 when a document
 * could not be read (damage: `kura verify` says more).
 */
import type { Command } from 'commander';
import { storePrefix } from '../store-path.js';
import type { GrepEvent, Store } from '@kura/store';
import { wholeNumber } from '../args.js';
import { CliError, EXIT, isKuraError } from '../exit.js';
import { write, writeJson } from '../output.js';
import { shownPath } from '../format.js';
import { withStore } from '../store.js';

interface GrepOptions {
  fixedStrings?: boolean;
  ignoreCase?: boolean;
  wordRegexp?: boolean;
  onlyMatching?: boolean;
  lineNumber?: boolean;
  filesWithMatches?: boolean;
  count?: boolean;
  context?: string;
  tag?: string;
  type?: string;
  json?: boolean;
}

export function register(program: Command, setExit: (code: number) => void): void {
  program
    .command('grep')
    .description('lines of the stored text (text files; PDF, DOCX and HTML by their extracted text) that match a regular expression')
    .argument('<pattern>', "a regular expression (Rust's regex syntax: no look-around, backreferences or \\p{…} classes; linear time whatever the pattern)")
    .argument('[prefix...]', 'only these stored paths or folders (as rg takes paths: notes/log is that file, or the folder notes/log/), else paths beginning with it (notes/2026-)')
    .option('-F, --fixed-strings', 'the pattern is text, not a regular expression')
    .option('-i, --ignore-case', 'match case-insensitively (Unicode)')
    .option('-w, --word-regexp', 'match whole words only: the pattern between word boundaries')
    .option('-o, --only-matching', 'print only the matched parts of each matching line, each on its own line')
    .option('-n, --line-number', 'print line numbers')
    .option('-l, --files-with-matches', 'print only the paths with a match')
    .option('-c, --count', 'print each path with a match and its count of matching lines')
    .option('-C, --context <n>', 'print N lines of context around each match')
    .option('--tag <tag>', 'only paths with this tag')
    .option('--type <media-type>', 'only this media type: text/markdown, text/*, or a subtype alone (pdf)')
    .option('--json', 'one JSON object per line: begin, match, context, end, error and a summary (as ripgrep --json names them)')
    .action(async (pattern: string, prefixes: string[], opts: GrepOptions, cmd: Command) => {
      const context = opts.context === undefined ? 0 : wholeNumber(opts.context, '--context');
      await withStore(cmd, { readonly: false }, async (store) => {
        const tty = process.stdout.isTTY;
        let last: { path: string; line: number } | undefined;
        let damaged = 0;
        let matched = 0;
        const where = await named(store, prefixes.map(storePrefix));
        const events = store.grep(opts.fixedStrings ? fixed(pattern) : pattern, {
          ignoreCase: opts.ignoreCase ?? false,
          ...(opts.wordRegexp ? { word: true } : {}),
          ...where,
          ...(opts.tag ? { tag: opts.tag } : {}),
          ...(opts.type ? { type: opts.type } : {}),
          context: opts.filesWithMatches || opts.count || opts.onlyMatching ? 0 : context,
          ...(opts.onlyMatching && !opts.filesWithMatches && !opts.count ? { onlyMatching: true } : {}),
          firstPerFile: opts.filesWithMatches ?? false,
          ...(opts.count && !opts.filesWithMatches ? { count: true } : {}),
        });
        for await (const e of events as AsyncIterable<GrepEvent>) {
          if (e.type === 'error') {
            damaged++;
            process.stderr.write(`kura: ${shownPath(e.path)}: ${e.message} [${e.code}]\n`);
          }
          if (opts.json) {
            await writeJson(e);
            if (e.type === 'summary') matched = e.matches;
            continue;
          }
          if (e.type === 'summary') matched = e.matches;
          if (opts.filesWithMatches) {
            if (e.type === 'end') await write(`${shownPath(e.path)}\n`);
            continue;
          }
          if (opts.count) {
            if (e.type === 'end') await write(`${shownPath(e.path)}:${e.matches}\n`);
            continue;
          }
          if (e.type !== 'match' && e.type !== 'context') continue;
          if (opts.onlyMatching) {
            // As grep -o: each non-empty match on a line of its own, no context.
            const where = `${shownPath(e.path)}:${opts.lineNumber ? `${e.line}:` : ''}`;
            for (const part of e.type === 'match' ? (e.matchedTexts ?? []) : []) await write(`${where}${tty ? `\x1b[1;31m${part}\x1b[0m` : part}\n`);
            continue;
          }
          if (context > 0 && last && (last.path !== e.path || e.line !== last.line + 1)) await write('--\n');
          last = { path: e.path, line: e.line };
          const sep = e.type === 'match' ? ':' : '-';
          let text = e.text;
          if (e.type === 'match' && e.submatch && tty) {
            const [a, b] = e.submatch;
            text = `${text.slice(0, a)}\x1b[1;31m${text.slice(a, b)}\x1b[0m${text.slice(b)}`;
          }
          await write(`${shownPath(e.path)}${sep}${opts.lineNumber ? `${e.line}${sep}` : ''}${e.cutBefore ? '[…] ' : ''}${text}${e.cutAfter ? ' […]' : ''}\n`);
        }
        if (damaged) throw new CliError(`${damaged} document${damaged === 1 ? '' : 's'} could not be read (kura verify)`, EXIT.damaged);
        if (matched === 0 && prefixes.length) {
          // A prefix no stored path begins with is said, as grep -r names a missing directory
          // (it was silent, and read as "no line matched": a trial's `kura grep TODO src/`).
          const none: string[] = [];
          for (const p of prefixes) if ((await store.list({ pathPrefix: storePrefix(p), limit: 1 })).items.length === 0) none.push(p);
          for (const p of none) process.stderr.write(`kura: ${p}: no stored path begins with it (kura ls lists what is stored)\n`);
          if (none.length === prefixes.length) return setExit(EXIT.usage);
        }
        if (matched === 0) setExit(EXIT.error); // as grep: 1 when no line matched
      });
    });
}

/** A pattern's text matched as it is (`-F`): each of the regex crate's metacharacters escaped (its `regex::escape`). */
export function fixed(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$#&\-~]/g, '\\$&');
}

/**
 * What the arguments name, as ripgrep takes paths: a stored path is that file (`notes/log`, not
 * `notes/log.old`), a folder of stored paths its files (`doc/gpg` is `doc/gpg/`, not
 * `doc/gpg-agent/`: a trial found both greped), and anything else the paths beginning with it
 * (`notes/2026-`), as before.
 */
async function named(store: Store, args: string[]): Promise<{ prefixes?: string[]; paths?: string[] }> {
  if (args.length === 0) return {};
  const prefixes: string[] = [];
  const paths: string[] = [];
  for (const a of args) {
    if (a === '' || a.endsWith('/')) {
      prefixes.push(a);
      continue;
    }
    const file = await store.stat(a).then(
      () => true,
      (e: unknown) => (isKuraError(e, 'NOT_FOUND') || isKuraError(e, 'INVALID_INPUT') ? false : Promise.reject(e)),
    );
    const folder = (await store.list({ pathPrefix: `${a}/`, limit: 1 })).items.length > 0;
    if (file) paths.push(a);
    if (folder) prefixes.push(`${a}/`);
    if (!file && !folder) prefixes.push(a);
  }
  return { prefixes, ...(paths.length ? { paths } : {}) };
}
