/**
 * Access tokens kept in the store (decision 0060), which every `kura serve` of the store accepts
 * besides its KURA_TOKENS; only their hashes are kept:
 *   kura token add NAME --scope read[,write…] [--prefix builds/[,logs/…] …] [--json]
 *        prints the secret once: it is kept nowhere
 *   kura token list [--json]        names, scopes, prefixes (each quoted), when made (never secrets)
 *   kura token revoke NAME          servers refuse it from their next look at the log
 */
import { NotFoundError, SCOPES, type Scope } from '@kura/store';
import type { Command } from 'commander';
import { collect } from '../args.js';
import { usage } from '../exit.js';
import { write, writeJson } from '../output.js';
import { withStore } from '../store.js';

/**
 * Prefixes as people read them: each quoted (JSON), separated by spaces — "team/" "hr/" — so
 * two prefixes never read as one holding a comma ("team/,hr/", which the HTTP API can make), nor
 * a prefix "*" as every path (*, unquoted).
 */
function quoted(prefixes: readonly string[]): string {
  return prefixes.map((p) => JSON.stringify(p)).join(' ');
}

/**
 * A request the new token may make (one it is refused was shown: `GET /v1/documents` to a
 * write-only token is 403 — a trial): a list for a reading token (under its first prefix: a
 * limited token lists no more), an upload for a writing one, a delete for one that deletes.
 */
function tryIt(t: { scopes: readonly string[]; prefixes?: readonly string[] | null }): string {
  const base = 'http://127.0.0.1:8787';
  const under = t.prefixes?.[0] ?? '';
  const auth = '-H "Authorization: Bearer <secret>"';
  if (t.scopes.includes('read') || t.scopes.includes('admin')) return `curl ${auth} '${base}/v1/documents${under ? `?pathPrefix=${encodeURIComponent(under)}` : ''}'`;
  if (t.scopes.includes('write')) return `curl ${auth} --data-binary @notes.md '${base}/v1/documents?path=${encodeURIComponent(`${under}notes.md`)}'`;
  return `curl -X DELETE ${auth} '${base}/v1/entry?path=${encodeURIComponent(`${under}notes.md`)}'`;
}

export function register(program: Command): void {
  const token = program.command('token').description('access tokens for kura serve, kept in the store as hashes');
  token
    .command('add <name>')
    .description(`make a token and print its secret once; scopes: read, write (adds, never removes), delete, admin (all of them)`)
    .option('--scope <scope>', 'what it may do (repeatable, or comma-separated)', collect)
    .option('--prefix <prefix>', 'only paths starting with this (repeatable, or comma-separated, as in KURA_TOKENS); absent: every path', collect)
    .option('--json', 'print {token, secret} as one JSON line')
    .action(async (name: string, opts: { scope?: string[]; prefix?: string[]; json?: boolean }, cmd: Command) => {
      const scopes = (opts.scope ?? []).flatMap((s) => s.split(',')).filter(Boolean);
      if (scopes.length === 0) throw usage(`name what the token may do: --scope ${SCOPES.join('|')}`);
      const unknown = scopes.find((s) => !(SCOPES as readonly string[]).includes(s));
      if (unknown !== undefined) throw usage(`--scope ${unknown}: the scopes are ${SCOPES.join(', ')}`);
      // Commas separate prefixes, as they do scopes and KURA_TOKENS' prefixes: `--prefix team/,hr/`
      // was kept as one prefix "team/,hr/", which reaches nothing (a trial).
      const prefixes = opts.prefix?.flatMap((p) => p.split(','));
      if (prefixes?.includes('')) throw usage(`--prefix ${opts.prefix!.find((p) => p.split(',').includes(''))!}: an empty prefix (prefixes are separated by commas; leave --prefix out for every path)`);
      await withStore(cmd, { readonly: false }, async (store) => {
        const made = await store.addToken({ name, scopes: scopes as Scope[], ...(prefixes ? { prefixes } : {}) });
        if (opts.json) return writeJson(made);
        const t = made.token;
        await write(
          `token ${t.name}: ${t.scopes.join(', ')}${t.prefixes ? ` under ${quoted(t.prefixes)}` : ''}\n\n    ${made.secret}\n\n` +
            'Kept nowhere but here (the store keeps its hash): give it to the client now. For example\n' +
            `(kura serve's address; 127.0.0.1:8787 unless --host or --port say otherwise):\n  ${tryIt(t)}\n`,
        );
      });
    });
  token
    .command('list')
    .description('the tokens kept in the store (never their secrets)')
    .option('--json', 'one JSON object per token')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      await withStore(cmd, { readonly: true }, async (store) => {
        for (const t of await store.tokens()) {
          if (opts.json) await writeJson(t);
          else await write(`${t.name}\t${t.scopes.join(',')}\t${t.prefixes ? quoted(t.prefixes) : '*'}\t${t.createdAt}\n`);
        }
      });
    });
  token
    .command('revoke <name>')
    .description('revoke a token: servers of the store refuse it from then on')
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      await withStore(cmd, { readonly: false }, async (store) => {
        if (!(await store.revokeToken(name))) throw new NotFoundError(`no token named ${name}`);
      });
    });
}
