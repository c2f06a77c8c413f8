/**
 * Finding and opening the store: `--store DIR` (before or after the verb) > $KURA_STORE >
 * ./.kura. Read commands open it read-only, so they work while another process writes.
 */
import { Store, isObjectLocation, type PasswordSource } from '@kura/store';
import { passwordConfigured, storePassword } from './password.js';
import type { Command } from 'commander';
import { resolve } from 'node:path';
import { CliError, describeError, isKuraError } from './exit.js';
import type { DurabilityArg } from './args.js';

export const DEFAULT_STORE = '.kura';

/**
 * The store for this command: a directory, absolute, or an s3:// location as given (its
 * server from --endpoint, which sets AWS_ENDPOINT_URL_S3 for the S3 client).
 */
export function storeDir(cmd: Command): string {
  const { store: flag, endpoint } = cmd.optsWithGlobals() as { store?: string; endpoint?: string };
  const env = process.env.KURA_STORE;
  const location = flag ?? (env ? env : DEFAULT_STORE);
  if (!isObjectLocation(location)) return resolve(location);
  if (endpoint) process.env.AWS_ENDPOINT_URL_S3 = endpoint;
  return location;
}

export interface OpenArgs {
  readonly: boolean;
  durability?: DurabilityArg | undefined;
  /** The store must be encrypted (a password is configured: password.ts's passwordConfigured). */
  requireEncryption?: boolean;
}

/**
 * Opens the store at `dir`; `password` is asked for only when it is encrypted (password.ts:
 * by default the command's sources, `cmd`'s).
 */
export async function openStore(dir: string, args: OpenArgs, password?: PasswordSource): Promise<Store> {
  try {
    // A store on object storage has no lock to share with a writer: its reads open it as any
    // server does (its cache is made from the log).
    const readonly = args.readonly && !isObjectLocation(dir);
    const store = await Store.open(dir, { readonly, ...(args.durability ? { durability: args.durability } : {}), ...(password ? { password } : {}), ...(args.requireEncryption ? { requireEncryption: true } : {}) });
    if (store.unappliedCommits > 0) {
      // (A writer stopped inside a batch, and this process may not write the store to apply them.)
      process.stderr.write(`kura: note: the log holds ${store.unappliedCommits} commit(s) the database lacks, not shown here; opening the store for writing applies them\n`);
    }
    return store;
  } catch (e) {
    if (isKuraError(e, 'STORE_LOCKED')) {
      throw new CliError(`${dir}: the store is locked: another process is writing to it (read commands still work) [STORE_LOCKED]`);
    }
    // Store.open's own errors name the store; anything else (e.g. a damaged kura.db) gets its name.
    if (isKuraError(e)) throw e;
    // (A CLI error, such as a password source's, keeps its exit code and its code.)
    throw e instanceof CliError ? new CliError(`${dir}: ${e.message}`, e.exitCode, e.code) : new CliError(`${dir}: ${describeError(e)}`);
  }
}

/** Opens the store, runs `fn`, and always closes it. */
export async function withStore<T>(cmd: Command, args: OpenArgs, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(storeDir(cmd), { ...args, requireEncryption: passwordConfigured(cmd) }, () => storePassword(cmd));
  let result: T;
  try {
    result = await fn(store);
  } catch (e) {
    await store.close().catch(() => undefined); // the first error is the one to report
    throw e;
  }
  await store.close();
  return result;
}
