/**
 * `kura search QUERY [--tag T] [--type M] [--prefix P] [--limit N] [--offset N] [--json]`:
 * search, best first. Human output: digest, path, and the snippet with matches in bold on a
 * terminal (between [ and ] otherwise); operator syntax read as words is said on stderr.
 * --json: one SearchHit per line.
 */
import type { Command } from 'commander';
import { storePrefix } from '../store-path.js';
import { cosine, isoDate, wholeNumber } from '../args.js';
import { EXIT, usage } from '../exit.js';
import { writeJson, write } from '../output.js';
import { shownPath } from '../format.js';
import { configuredReranker, parseQuery, type Embedder, type Store } from '@kura/store';
import { embedderFor, parseMode, type Mode } from '../embedder.js';
import { withStore } from '../store.js';

interface SearchOptions {
  mode?: string;
  tag?: string;
  type?: string;
  prefix?: string;
  limit?: string;
  offset?: string;
  waitMs?: string;
  minScore?: string;
  allVersions?: boolean;
  /** `--every-path`: a hit per path (the search's `collapse: false`). */
  everyPath?: boolean;
  snapshot?: string;
  since?: string;
  until?: string;
  json?: boolean;
}

/** How long a search embeds documents still to embed by default before it answers without them (ms). */
const CLI_WAIT_MS = 20_000;

export function register(program: Command, setExit: (code: number) => void): void {
  program
    .command('search')
    .description('search paths, tags, metadata and the text of documents (text files, PDF, DOCX, HTML) by words and, with the local model, by meaning')
    .argument('<query...>', 'words or a question in your own words (documents with more of its words rank first); operators where well formed: "a phrase", pre*, AND, OR, NOT, -word, path:P, tag:T, type:M (see README)')
    .option('--tag <tag>', 'only documents with this tag')
    .option('--type <media-type>', 'only documents of this media type')
    .option('--prefix <path>', 'only documents whose path starts with this')
    .option('--since <iso>', 'only paths changed at or after this time (e.g. 2024-05-01 or 2024-05-01T10:30:00Z)')
    .option('--until <iso>', 'only paths changed before this time')
    .option('--limit <n>', 'at most N hits (default 20)')
    .option('--offset <n>', 'skip the first N hits (for the next page)')
    .option('--wait-ms <ms>', `semantic and hybrid: embed documents still to embed for at most this long, then leave the rest out (and say how many; default ${CLI_WAIT_MS})`)
    .option('--mode <mode>', 'keyword, semantic (by meaning, the local model) or hybrid (both fused); default hybrid when the model is installed, else keyword')
    .option('--every-path', 'a hit for each path holding a document, not one hit per document (whose other paths are listed under it)')
    .option('--all-versions', 'every version of each path, not only the latest (by words): hits are path@N')
    .option('--snapshot <id>', "the files of this snapshot (an id or its first digits; by words): hits are the file's path in it")
    .option('--min-score <cosine>', 'semantic and hybrid: the least cosine similarity of a semantic hit (default: the floor calibrated for the model; -1: none)')
    .option('--json', 'one JSON object per hit: {"digest","path","mediaType","size","score","snippet","matched"}, "keyword"/"semantic"/"exact": {"rank","score"} for each side that found it, and "alsoAt" (and "alsoAtMore"): the other paths of the same bytes')
    // `kura search harbour -ferry`: `-word` is the grammar's exclusion, not an option (it was
    // refused as "unknown option '-ferry'"). A word spelled like a long option is still one
    // mistyped, unless the query follows `--`.
    .allowUnknownOption()
    .action(async (words: string[], opts: SearchOptions, cmd: Command) => {
      const raw = ((cmd.parent as unknown as { rawArgs?: string[] } | null)?.rawArgs ?? []);
      const mistyped = words.find((w) => /^--[a-z]/i.test(w));
      if (mistyped && !raw.includes('--')) throw usage(`unknown option ${mistyped.split('=')[0]} (to search for a word starting with --, put the query after --: kura search -- ${mistyped})`);
      const query = words.join(' ');
      const mode = parseMode(opts.mode);
      // A semantic side's floor: in keyword mode it was ignored without a word (a trial).
      if (opts.minScore !== undefined && (mode === 'keyword' || opts.allVersions || opts.snapshot !== undefined)) throw usage('--min-score is the least similarity of a hit by meaning: keyword search (and search through history) has none; leave it out, or search --mode semantic or hybrid');
      // A search through history is by words: no model to load for it.
      const embedder = opts.allVersions || opts.snapshot !== undefined ? undefined : await embedderFor(mode);
      try {
        // Writable: a search finishes the index first, text still to extract and to embed
        // included (`kura add` leaves that for later); several writers may share a store.
        const damaged = await withStore(cmd, { readonly: false }, async (store) => searchWith(store, embedder, query, mode, opts));
        if (damaged) setExit(EXIT.damaged); // (as grep: a hit whose document is damaged is said, exit 3)
      } finally {
        await embedder?.close();
      }
    });
}

/** Prints the hits; answers whether one's document is damaged. */
async function searchWith(store: Store, embedder: Embedder | undefined, query: string, mode: Mode | undefined, opts: SearchOptions): Promise<boolean> {
  if (embedder) store.useEmbedder(embedder);
  // By meaning, documents still to embed are embedded first, for CLI_WAIT_MS at most: said,
  // since that takes time (a search printed nothing for 25 s and more: a trial), and bounded —
  // a folder of 7,000 files added, the first search waited hours for all of them (another).
  // What is left is embedded by the next searches, or `kura index --wait`.
  if (embedder && mode !== 'keyword' && opts.waitMs === undefined) {
    const pending = (await store.indexStatus()).embedding?.pending ?? 0;
    if (pending > 0) process.stderr.write(`kura: embedding ${pending} document${pending === 1 ? '' : 's'} before searching by meaning, for ${CLI_WAIT_MS / 1000} s at most (--wait-ms sets how long; kura index --wait embeds them all)\n`);
  }
  store.useReranker(configuredReranker(process.env)); // KURA_RERANK_URL: the first hits reranked
  const hits = await store.search(query, {
    ...(mode ? { mode } : {}),
    ...(opts.tag ? { tag: opts.tag } : {}),
    ...(opts.type ? { mediaType: opts.type } : {}),
    ...(opts.prefix ? { pathPrefix: storePrefix(opts.prefix) } : {}),
    ...(opts.since !== undefined ? { since: isoDate(opts.since, '--since') } : {}),
    ...(opts.until !== undefined ? { until: isoDate(opts.until, '--until') } : {}),
    ...(opts.limit ? { limit: wholeNumber(opts.limit, '--limit') } : {}),
    ...(opts.offset ? { offset: wholeNumber(opts.offset, '--offset') } : {}),
    waitMs: opts.waitMs !== undefined ? wholeNumber(opts.waitMs, '--wait-ms') : CLI_WAIT_MS,
    ...(opts.minScore !== undefined ? { minScore: cosine(opts.minScore, '--min-score') } : {}),
    ...(opts.allVersions ? { allVersions: true } : {}),
    ...(opts.everyPath ? { collapse: false } : {}),
    ...(opts.snapshot !== undefined ? { snapshot: opts.snapshot } : {}),
  });
  // Each notice, then how the query was read, once and cut short: a pasted page repeated its
  // 256 terms in every notice (11 KB of stderr: a trial).
  const fallbacks = hits.fallbacks ?? [];
  for (const f of fallbacks) process.stderr.write(`kura: ${f}\n`);
  if (fallbacks.length) process.stderr.write(`kura: searched: ${shortened(hits.parsedAs || 'nothing', 300)}\n`);
  if (hits.reranked && !hits.reranked.applied) process.stderr.write(`kura: not reranked (${hits.reranked.reason}): the hits are in their own order\n`);
  if (hits.notEmbedded) process.stderr.write(`kura: ${hits.notEmbedded} document${hits.notEmbedded === 1 ? ' is' : 's are'} not embedded yet: the semantic ranking left ${hits.notEmbedded === 1 ? 'it' : 'them'} out (kura index --wait embeds everything)\n`);
  // Nothing searchable (only filters, or nothing at all): no hits, as the grammar says, and why.
  if (hits.length === 0 && parseQuery(query).expr === null) {
    process.stderr.write(`kura: no words to search for${query.trim() ? ` in ${JSON.stringify(query)}` : ''}: search ranks documents by words; kura ls lists by --tag, --prefix or --type alone\n`);
  }
  const tty = process.stdout.isTTY;
  for (const h of hits) {
    if (opts.json) {
      await writeJson(h);
      continue;
    }
    const snippet = unescapeHtml(h.snippet.replace(/\s+/g, ' ').replace(/<mark>(.*?)<\/mark>/g, tty ? '\x1b[1m$1\x1b[0m' : '[$1]'));
    // A hit found by meaning alone has no word of the query to show for it: said, before its
    // passage (a trial could not tell why such a hit was there).
    // (A hit past keyword's window is semantic's alone though its words match: its snippet
    // marks them, and it is not said — a trial's "(by meaning) [LICENSE]: [MIT]".)
    const why = h.matched?.length === 1 && h.matched[0] === 'semantic' && hits.mode === 'hybrid' && !h.snippet.includes('<mark>') ? '(by meaning) ' : '';
    // The same bytes at other paths (one hit per document): named under it, a few at most.
    const also = h.alsoAt?.length ? `    also at ${h.alsoAt.slice(0, ALSO_SHOWN).map(shownPath).join(', ')}${moreThan(h.alsoAt.length - ALSO_SHOWN + (h.alsoAtMore ?? 0))}\n` : '';
    await write(`${h.digest}  ${h.path ? shownPath(h.path) : '-'}${h.version !== undefined ? `@${h.version}` : ''}\n    ${why}${snippet}\n${also}`);
  }
  for (const h of hits) if (h.damaged !== undefined) process.stderr.write(`kura: ${h.path ? shownPath(h.path) : h.digest}: damaged: ${h.damaged} [CORRUPT_DATA] (kura verify)\n`);
  return hits.some((h) => h.damaged !== undefined);
}

/** Other paths of a hit shown at most (`--json` has them all: 20, and a count of the rest). */
const ALSO_SHOWN = 3;
const moreThan = (n: number) => (n > 0 ? ` and ${n} more` : '');

/** Snippets are HTML fragments (text escaped); the terminal wants the text back. */
function unescapeHtml(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);
}

/** `text` cut to `max` characters, saying how much was left out. */
function shortened(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}
