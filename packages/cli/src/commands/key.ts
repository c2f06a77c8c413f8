/**
 * The passwords of an encrypted store (FORMAT.md §17.2, decision 0062): each is a key file
 * wrapping the store's one master key, so adding, changing or removing one re-encrypts nothing.
 * Every verb first opens a key with the store's password (password.ts):
 *   kura key list [--json]                   key files: id, when made, Argon2id costs
 *   kura key add [--new-password-file F] [--kdf-memory MiB]   another password
 *   kura key passwd [--new-password-file F]  changes the password given (a new key file; every one the old opens removed)
 *   kura key remove ID                       removes a key file; the store's last is refused
 */
import { DEFAULT_KDF, openKeyRing, type KeyRing } from '@kura/store';
import type { Command } from 'commander';
import { wholeNumber } from '../args.js';
import { newPassword, requiredPassword } from '../password.js';
import { write, writeJson } from '../output.js';
import { usage } from '../exit.js';
import { storeDir } from '../store.js';

const utf8 = (s: string) => new TextEncoder().encode(s);

/** What a new password does not change (said by passwd and remove, and in their help). */
const STAYS =
  "the store's data stays encrypted with the same key: whoever had a removed password and a copy of its key file (or of the store) can still read it; to shut them out, copy the store to a new encrypted one (kura copy SRC DST --encrypt)";

/** --kdf-memory's bounds, MiB: less makes a password cheap to guess; more than the format allows (FORMAT.md §17.2). */
const KDF_MEMORY_MIB = { min: 8, max: 1024 };

/** Argon2id costs for a new key: --kdf-memory in MiB, the rest as DEFAULT_KDF. */
export function kdfOf(memoryMib: string | undefined): typeof DEFAULT_KDF {
  if (memoryMib === undefined) return DEFAULT_KDF;
  const mib = wholeNumber(memoryMib, '--kdf-memory');
  // In the option's own unit (the library's KiB bounds were quoted: a trial).
  if (mib < KDF_MEMORY_MIB.min || mib > KDF_MEMORY_MIB.max) throw usage(`--kdf-memory is in MiB, from ${KDF_MEMORY_MIB.min} (less makes the password cheap to guess) to ${KDF_MEMORY_MIB.max}, not ${memoryMib}`);
  return { ...DEFAULT_KDF, memoryKib: mib * 1024 };
}

/** Unlocks the store's keys with its password, runs `fn`, and lets the storage go. */
async function withKeys<T>(cmd: Command, fn: (ring: KeyRing, master: Uint8Array, current: string, password: Uint8Array) => Promise<T>): Promise<T> {
  const { ring, close } = await openKeyRing(storeDir(cmd));
  ring.onLockWait = () => process.stderr.write('kura: waiting for the key lock (another kura key command holds it; one left by a crash is taken over after a minute)\n');
  try {
    const password = utf8(await requiredPassword(cmd));
    const { master, id } = await ring.unlock(password);
    return await fn(ring, master, id, password);
  } finally {
    await close();
  }
}

export function register(program: Command): void {
  const key = program.command('key').description("an encrypted store's passwords: each a key file wrapping the store's key");
  key
    .command('list')
    .description('the key files, oldest first (the one the password opened marked *)')
    .option('--json', 'one JSON object per key file')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      await withKeys(cmd, async (ring, _master, current) => {
        const { keys, damaged } = await ring.list();
        for (const k of keys) {
          const costs = `argon2id ${k.kdf.memoryKib / 1024} MiB x ${k.kdf.passes} x ${k.kdf.lanes}`;
          if (opts.json) await writeJson({ ...k, current: k.id === current });
          else await write(`${k.id === current ? '*' : ' '} ${k.id}\t${new Date(k.created).toISOString()}\t${costs}\n`);
        }
        for (const id of damaged) process.stderr.write(`kura: keys/${id} is not a key file (damaged?)\n`);
      });
    });
  key
    .command('add')
    .description('add a password: a new key file for the same store key')
    .option('--new-password-file <file>', 'the new password, from the first line of this file (else asked twice on the terminal)')
    .option('--kdf-memory <MiB>', `Argon2id memory for this key (default ${DEFAULT_KDF.memoryKib / 1024}; at most 1024)`)
    .option('--json', 'print {id} as one JSON line')
    .action(async (opts: { newPasswordFile?: string; kdfMemory?: string; json?: boolean }, cmd: Command) => {
      const kdf = kdfOf(opts.kdfMemory);
      await withKeys(cmd, async (ring, master) => {
        const id = await ring.add(master, utf8(await newPassword(opts.newPasswordFile)), kdf);
        if (opts.json) await writeJson({ id });
        else await write(`added key ${id}\n`);
      });
    });
  key
    .command('passwd')
    .description(`change the password given: a key file for the new one, then the old one removed; ${STAYS}`)
    .option('--new-password-file <file>', 'the new password, from the first line of this file (else asked twice on the terminal)')
    .option('--kdf-memory <MiB>', `Argon2id memory for the new key (default ${DEFAULT_KDF.memoryKib / 1024})`)
    .option('--json', 'print {id, removed} as one JSON line (removed: every key file the old password opened)')
    .action(async (opts: { newPasswordFile?: string; kdfMemory?: string; json?: boolean }, cmd: Command) => {
      const kdf = kdfOf(opts.kdfMemory);
      await withKeys(cmd, async (ring, master, _current, password) => {
        const { id, removed } = await ring.passwd(password, master, utf8(await newPassword(opts.newPasswordFile)), kdf);
        if (opts.json) await writeJson({ id, removed });
        // (The store's key is the same: a new password does not undo a leaked one — a trial read
        // "password changed" as "re-encrypted". restic and kopia keep theirs too.)
        else await write(`key ${removed.join(', ')} replaced by ${id}\n${STAYS}\n`);
      });
    });
  key
    .command('remove <id>')
    .description("remove a key file (its password stops opening the store); the store's last is refused")
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      await withKeys(cmd, async (ring, _master, current) => {
        // As restic refuses: the password given would stop opening the store (scripts using it too).
        if (id === current && (await ring.list()).keys.length > 1) throw usage(`key ${id} is the one the password given opens: removing it would lock that password out; change it with kura key passwd, or remove the key with another password`);
        await ring.remove(id);
        await write(`removed key ${id}\n${STAYS}\n`);
      });
    });
}
