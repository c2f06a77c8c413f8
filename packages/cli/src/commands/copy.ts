/**
 * `kura copy SRC DST [--prefix P]… [--snapshot ID]… [--json]` (issue 50, item 2; decision 0061):
 * paths with their versions, tags and metadata, and snapshots, from one store to another —
 * directories or s3:// locations, any pair — sending only what DST lacks; run again it copies
 * only what is new, and a copy killed part way is completed by running it again. DST is made
 * with SRC's chunking parameters when it is not a store yet (so the two deduplicate alike).
 * Exit 1 when something could not be copied (each named on stderr; the rest is copied).
 */
import { DirectoryObjectStore, Store, WrongPasswordError, copyStore, isObjectLocation, listAll, openObjectLocation, type CopyReport } from '@kura/store';
import type { Command } from 'commander';
import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { collect } from '../args.js';
import { bytes, count } from '../format.js';
import { EXIT, isKuraError, usage } from '../exit.js';
import { newPassword, passwordFromFile, storePassword } from '../password.js';
import { write, writeJson } from '../output.js';
import { Progress } from '../progress.js';
import { openStore } from '../store.js';

interface CopyOpts {
  prefix?: string[];
  snapshot?: string[];
  json?: boolean;
  encrypt?: boolean;
  plain?: boolean;
  dstPasswordFile?: string;
}

const location = (l: string) => (isObjectLocation(l) ? l : resolve(l));

/** Where a location is, as one place has one name: symlinks resolved, a bucket's prefix without its trailing slash. */
function place(l: string): string {
  if (isObjectLocation(l)) return l.replace(/\/+$/, '');
  try {
    return realpathSync(resolve(l));
  } catch {
    return resolve(l); // (not made yet: it is no other store's place)
  }
}

/**
 * DST, made like SRC (chunking, compression) when it holds no store yet — encrypted with
 * `--encrypt` (then with a secret seed of its own). Its password: --dst-password-file, else
 * the command's sources (password.ts) — with `--encrypt`, the terminal, as when it was made.
 *
 * With `--encrypt`, DST may also be the store an earlier run of this copy made and was killed
 * in (decision 0061: "killed, run it again"): an encrypted store that opens with the password
 * given and has SRC's chunking and compression is gone on with (the run that made it gave it
 * those), and key files alone — a run killed between its first key file and its configuration —
 * are a store whose making was cut off, made again (`cutOff`). A plain store, an encrypted one
 * the password does not open, or one made otherwise is refused, as before.
 */
async function destination(dir: string, src: Store, opts: CopyOpts, cmd: Command): Promise<{ store: Store; created: boolean }> {
  const password = async () =>
    opts.dstPasswordFile
      ? passwordFromFile(opts.dstPasswordFile, '--dst-password-file')
      : // (Never SRC's sources with --encrypt: the password that made DST was asked for on the terminal.)
        opts.encrypt
        ? newPassword(undefined, 'destination password', 'give --dst-password-file FILE')
        : storePassword(cmd, 'destination password: ');
  try {
    // (A destination password given on its own: DST must be encrypted. The command's sources
    // may be SRC's, so they do not say what DST is. With --encrypt it must be too.)
    const store = await openStore(dir, { readonly: false, requireEncryption: Boolean(opts.dstPasswordFile) || Boolean(opts.encrypt) }, password);
    if (opts.encrypt) {
      const { chunking, compression } = store.config;
      if (chunking.avg !== src.config.chunking.avg || compression !== src.config.compression) {
        await store.close();
        throw usage(`${dir} holds an encrypted store with other chunking or compression than the source's, not one a copy --encrypt of it began: --encrypt makes a new store (to copy into this one, leave --encrypt out)`);
      }
      return { store, created: false }; // a copy --encrypt killed part way: gone on with
    }
    if (src.config.encrypted && !store.config.encrypted && !opts.plain) {
      await store.close();
      throw decrypting(dir, true);
    }
    return { store, created: false };
  } catch (e) {
    // Two stores, maybe two passwords: a wrong one says whose.
    if (isKuraError(e, 'WRONG_PASSWORD')) throw new WrongPasswordError(`the destination ${dir}: ${e.message}`, (e as { reason?: 'wrong' | 'missing' }).reason ?? 'wrong');
    if (opts.encrypt && isKuraError(e, 'FORMAT_MISMATCH') && (e as { found?: unknown }).found === 'plain') {
      throw usage(`${dir} holds a plain store already: --encrypt makes a new encrypted store (or goes on with one a copy --encrypt began)`);
    }
    if (!isKuraError(e, 'NOT_FOUND')) throw e;
  }
  const { chunking, compression } = src.config;
  if (opts.encrypt) {
    const given = opts.dstPasswordFile ? passwordFromFile(opts.dstPasswordFile, '--dst-password-file') : await newPassword(undefined, 'destination password', 'give --dst-password-file FILE');
    await cutOff(dir);
    return { store: await Store.init(dir, { chunking: { avg: chunking.avg }, compression, encryption: {}, password: given }), created: true };
  }
  if (src.config.encrypted && !opts.plain) throw decrypting(dir, false);
  // (An encrypted source's seed is its secret: a plain copy gets the public default.)
  return { store: await Store.init(dir, { chunking: { avg: chunking.avg, ...(src.config.encrypted ? {} : { seed: chunking.seed }) }, compression }), created: true };
}

/** A key file's name (FORMAT.md §17.2). */
const KEY_FILE = /^keys\/[0-9a-f]{16}$/;
/** How long key files alone must stay so before they are taken for a making cut off (a live one writes its configuration next). */
const CUT_OFF_WAIT_MS = 3_000;

/**
 * Key files and nothing else at `dir` (no configuration, log, checkpoint or pack): an
 * encrypted store whose making was cut off — `copy --encrypt` (or `init --encrypt`) killed
 * between its first key file and its configuration, ~0.1 s. Nothing was ever sealed under their
 * master key, and no password can open them (a key file is bound to a store id that only the
 * configuration held), but Store.init refuses a place that holds keys: they are removed, once
 * they have stayed alone for CUT_OFF_WAIT_MS (a making in progress writes its configuration
 * within that), and said on stderr. Anything else at `dir` is left for Store.init to refuse.
 */
async function cutOff(dir: string): Promise<void> {
  const objects = isObjectLocation(dir) ? await openObjectLocation(dir) : existsSync(dir) ? new DirectoryObjectStore(dir) : undefined;
  if (!objects) return;
  try {
    const alone = async (): Promise<string[] | undefined> => {
      const keys: string[] = [];
      for await (const o of listAll(objects, '')) {
        if (!KEY_FILE.test(o.key)) return undefined;
        keys.push(o.key);
      }
      return keys.length ? keys : undefined;
    };
    const keys = await alone();
    if (!keys) return;
    await new Promise((r) => setTimeout(r, CUT_OFF_WAIT_MS));
    const still = await alone();
    if (!still || still.join() !== keys.join()) return;
    for (const key of keys) await objects.delete(key);
    process.stderr.write(`kura: note: ${dir} held only the key file of a store whose making was cut off (killed before its configuration was written; nothing was sealed under it): removed, and the store made again\n`);
  } finally {
    await objects.close();
  }
}

/**
 * An encrypted store copied into a plain one, not asked for: one flag forgotten in a backup
 * script (`kura copy ./.kura s3://backup/…`) wrote every path, tag and byte in plain form,
 * with a note (a trial). Refused before anything is made or copied, unless --plain says so.
 */
function decrypting(dir: string, exists: boolean) {
  return usage(`the source is encrypted and ${dir} ${exists ? 'is not' : 'would not be'}: pass --encrypt to make an encrypted copy (DST must not exist), or --plain to copy its data in plain form`);
}

function summary(r: CopyReport): string {
  return (
    `${count(r.entries)} entr${r.entries === 1 ? 'y' : 'ies'}: ${count(r.versionsCopied)} version${r.versionsCopied === 1 ? '' : 's'} copied ` +
    `(${count(r.documentsSent)} sent, ${bytes(r.bytesSent)}; ${count(r.documentsLinked)} already there), ${count(r.versionsPresent)} present; ` +
    `${count(r.snapshotsCopied)} snapshot${r.snapshotsCopied === 1 ? '' : 's'} copied, ${count(r.snapshotsPresent)} present` +
    // Changes the destination saw besides versions: said, not only in --json (a trial).
    (r.entriesUpdated ? `; ${count(r.entriesUpdated)} entr${r.entriesUpdated === 1 ? "y's" : "ies'"} tags, metadata or type made the source's` : '') +
    (r.documentsMended ? `; ${count(r.documentsMended)} document${r.documentsMended === 1 ? '' : 's'} with damaged chunks mended` : '') +
    (r.pins ? `; ${count(r.pins)} pin${r.pins === 1 ? '' : 's'} copied` : '') +
    (r.conflicts.length ? `; ${count(r.conflicts.length)} path${r.conflicts.length === 1 ? '' : 's'} changed in the destination, not copied` : '')
  );
}

export function register(program: Command, setExit: (code: number) => void): void {
  program
    .command('copy <src> <dst>')
    .description('copy paths (with versions, tags, metadata) and snapshots to another store, sending only what it lacks')
    .option('--prefix <prefix>', 'only paths under this prefix (repeatable); with no --snapshot, no snapshots', collect)
    .option('--snapshot <id>', 'only this snapshot (repeatable); with no --prefix, no paths', collect)
    .option('--encrypt', 'make DST an encrypted store (it must not exist, or be one a copy --encrypt killed part way made: then gone on with): the way to encrypt a store')
    .option('--plain', 'copy an encrypted store into a plain one (else refused: the copy would hold its data in plain form)')
    .option('--dst-password-file <file>', "DST's password (new with --encrypt), from this file's first line (else, for an encrypted DST made before, the command's own password — --password-command, KURA_PASSWORD_FILE or KURA_PASSWORD, the source's too — and without one, asked on the terminal; with --encrypt, asked on the terminal)")
    .option('--json', 'print the report as one JSON line')
    .addHelpText(
      'after',
      '\nRun again, a copy sends nothing it sent before; killed, run it again (with --encrypt too: the\nencrypted store it began is gone on with). Run one copy into a destination at a time: two at\nonce can record twice a version of bytes a path showed before (decision 0061).',
    )
    .action(async (srcArg: string, dstArg: string, opts: CopyOpts, cmd: Command) => {
      // --endpoint (global) names the S3 server of s3:// locations, as for every command.
      const { endpoint } = cmd.optsWithGlobals() as { endpoint?: string };
      if (endpoint) process.env.AWS_ENDPOINT_URL_S3 = endpoint;
      // (A store onto itself: every entry "present", a mistake in the arguments said as one.)
      if (place(srcArg) === place(dstArg)) throw usage(`${srcArg} and ${dstArg} are the same store: nothing to copy`);
      const src = await openStore(location(srcArg), { readonly: true }, () => storePassword(cmd, 'source password: ')).catch((e: unknown) => {
        throw isKuraError(e, 'WRONG_PASSWORD') ? new WrongPasswordError(`the source ${srcArg}: ${e.message}`, (e as { reason?: 'wrong' | 'missing' }).reason ?? 'wrong') : e;
      });
      try {
        // Snapshots named that the source lacks (a typo) are said before a destination is made.
        for (const id of opts.snapshot ?? []) await src.snapshotInfo(id);
        const { store: dst, created } = await destination(location(dstArg), src, opts, cmd);
        // What was encrypted is copied in plain form, as asked (--plain): said all the same.
        if (src.config.encrypted && !dst.config.encrypted) process.stderr.write(`kura: note: ${srcArg} is encrypted and ${dstArg} is not: the copy holds its data in plain form\n`);
        try {
          const total = (await src.stats()).documents;
          const bar = new Progress(total, !opts.json, ({ value, total: t }) => `${count(value)}/${count(t)} entries`);
          const report = await copyStore(src, dst, {
            ...(opts.prefix ? { prefixes: opts.prefix } : {}),
            ...(opts.snapshot ? { snapshots: opts.snapshot } : {}),
            onProgress: (r) => bar.set(r.entries),
          });
          bar.stop();
          for (const c of report.conflicts) process.stderr.write(`kura: ${c.path}: ${c.message}\n`);
          for (const e of report.errors) process.stderr.write(`kura: ${e.what}: ${e.message} [${e.code}]\n`);
          if (report.errors.length || report.conflicts.length) setExit(EXIT.error);
          if (opts.json) await writeJson({ ...report, created });
          else await write(`${created ? `made a store at ${dstArg} with the source's chunking\n` : ''}${summary(report)}\n`);
        } finally {
          await dst.close();
        }
      } finally {
        await src.close();
      }
    });
}
