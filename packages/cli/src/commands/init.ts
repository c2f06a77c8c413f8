/**
 * `kura init [--avg N] [--seed N|random] [--compression N|none] [--durability full|normal]
 * [--json]`: creates the store (at --store, $KURA_STORE or ./.kura). Chunking is fixed for the
 * store's life. A directory that already holds a store, or holds anything else, is refused
 * (exit 1); a parameter that breaks a rule (e.g. --avg 1000) is a usage error (exit 2).
 */
import { InvalidInputError, LEVEL_MAX, LEVEL_MIN, resolveChunkParams } from '@kura/core';
import { DEFAULT_KDF, Store, isObjectLocation } from '@kura/store';
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { durability, wholeNumber } from '../args.js';
import { CliError, EXIT, describeError, isKuraError, usage } from '../exit.js';
import { write, writeJson } from '../output.js';
import { storeDir } from '../store.js';
import { givenPassword, newPassword, passwordConfigured } from '../password.js';
import { kdfOf } from './key.js';

interface InitOpts {
  encrypt?: boolean;
  kdfMemory?: string;
  avg?: string;
  seed?: string;
  compression?: string;
  durability?: string;
  json?: boolean;
}

function seed(value: string | undefined): bigint | 'random' | undefined {
  if (value === undefined || value === 'random') return value;
  if (!/^(\d+|0x[0-9a-fA-F]+)$/.test(value)) throw usage(`--seed must be a decimal or 0x-hex integer or "random", got "${value}"`);
  return BigInt(value);
}

function compression(value: string | undefined): number | false | undefined {
  if (value === undefined) return undefined;
  if (value === 'none') return false;
  const level = /^-?\d+$/.test(value) ? Number(value) : NaN;
  if (!(level >= LEVEL_MIN && level <= LEVEL_MAX && level !== 0)) {
    throw usage(`--compression must be a zstd level (${LEVEL_MIN}..${LEVEL_MAX}, not 0) or "none", got "${value}"`);
  }
  return level;
}

/** Checks chunking before Store.init touches the disk, so a bad value leaves nothing behind. */
function checkChunking(avg: number | undefined, s: bigint | 'random' | undefined): void {
  try {
    resolveChunkParams({ ...(avg !== undefined ? { avg } : {}), ...(typeof s === 'bigint' ? { seed: s } : {}) });
  } catch (e) {
    if (e instanceof InvalidInputError) throw usage(e.message.replace(/^chunking\./, '--'));
    throw e;
  }
}

export function register(program: Command): void {
  program
    .command('init')
    .description('create a store')
    .option('--avg <bytes>', 'average chunk size, a power of two from 256 to 4 MiB (default 16384)')
    .option('--seed <n|random>', 'chunking seed, 0 <= n < 2^64, or random (default 0)')
    .option('--compression <level|none>', 'zstd level for stored chunks, -7..22 except 0 (default 3), or none')
    .option('--durability <mode>', "full or normal (default): recorded as the store's default; kura add --durability overrides it")
    .option('--encrypt', 'encrypt everything the store writes (a password: --password-command, $KURA_PASSWORD_FILE, $KURA_PASSWORD, or asked twice); its database lives in the cache, outside the store')
    .option('--kdf-memory <MiB>', `with --encrypt: Argon2id memory for the first key (default ${DEFAULT_KDF.memoryKib / 1024})`)
    .option('--json', 'print the new store\'s settings as one JSON line')
    .action(async (opts: InitOpts, cmd: Command) => {
      const dir = storeDir(cmd);
      const avg = opts.avg === undefined ? undefined : wholeNumber(opts.avg, '--avg');
      const s = seed(opts.seed);
      const level = compression(opts.compression);
      const mode = durability(opts.durability);
      checkChunking(avg, s);
      if (opts.kdfMemory !== undefined && !opts.encrypt) throw usage('--kdf-memory is for --encrypt');
      // A password given but no --encrypt: a plain store every later command (given that
      // password) refuses — the admin meant an encrypted one, or no password. Said now.
      if (!opts.encrypt && passwordConfigured(cmd)) throw usage('a password is configured (--password-command, $KURA_PASSWORD_FILE or $KURA_PASSWORD) but --encrypt is not given: add --encrypt for an encrypted store, or leave the password out for a plain one');
      if (opts.encrypt && s !== undefined && s !== 'random') throw usage("--seed: an encrypted store's chunking seed is drawn at random and kept secret");
      const encryption = opts.encrypt ? { encryption: { kdf: kdfOf(opts.kdfMemory) }, password: givenPassword(cmd) ?? (await newPassword(undefined, 'password', 'give it with --password-command, KURA_PASSWORD_FILE or KURA_PASSWORD')) } : {};
      const created = !isObjectLocation(dir) && !existsSync(dir);
      let store: Store;
      try {
        store = await Store.init(dir, {
          chunking: { ...(avg !== undefined ? { avg } : {}), ...(s !== undefined ? { seed: s } : {}) },
          ...(level !== undefined ? { compression: level } : {}),
          ...(mode ? { durability: mode } : {}),
          ...encryption,
        });
      } catch (e) {
        if (created) await rm(dir, { recursive: true, force: true });
        // An occupied directory is not a syntax error: exit 1.
        if (isKuraError(e, 'INVALID_INPUT') && (e as { field?: string }).field === 'dir') throw new CliError(e.message, EXIT.error, 'INVALID_INPUT');
        if (isKuraError(e, 'STORE_LOCKED')) throw new CliError(`${dir}: the store is locked by another process [STORE_LOCKED]`);
        if (isKuraError(e)) throw e;
        throw new CliError(`${dir}: ${describeError(e)}`);
      }
      try {
        const c = store.config;
        // (An encrypted store's seed is secret: never printed.)
        const settings = {
          store: dir,
          avg: c.chunking.avg,
          ...(opts.encrypt ? { encrypted: true } : { seed: c.chunking.seed.toString() }),
          compression: c.compression === false ? 'none' : c.compression,
        };
        if (opts.json) await writeJson(settings);
        else {
          const comp = c.compression === false ? 'no compression' : `zstd level ${c.compression}`;
          const how = opts.encrypt ? 'encrypted' : `seed ${c.chunking.seed}`;
          await write(`created ${opts.encrypt ? 'an encrypted' : 'a'} Kura store in ${dir} (chunks avg ${c.chunking.avg} bytes, ${how}, ${comp})\n`);
        }
      } finally {
        await store.close();
      }
    });
}
