/**
 * An encrypted store's password (FORMAT.md §17, decision 0062), from the first of:
 * `--password-command CMD` (its standard output), `$KURA_PASSWORD_FILE` (the file's first line),
 * `$KURA_PASSWORD` (the weakest: a process's environment is readable by its user's other
 * processes), or a prompt on the terminal without echo. Never from an argument: `ps` shows
 * those. Asked only when the store turns out to be encrypted.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { ReadStream, WriteStream } from 'node:tty';
import type { Command } from 'commander';
import { CliError, EXIT, describeError, usage } from './exit.js';

/** The first line, without its line ending: what a password file or command gives. */
const firstLine = (text: string) => text.split(/\r?\n/, 1)[0] ?? '';

/** What was typed after the line a prompt took (a pasted answer and its confirmation): the next prompt's. */
let typedAhead = '';

/** Reads a line from the controlling terminal without echoing it; undefined when there is no terminal. */
async function prompt(question: string): Promise<string | undefined> {
  let fd: number;
  try {
    fd = openSync('/dev/tty', 'r+');
  } catch {
    return undefined; // no controlling terminal (a service, CI)
  }
  const input = new ReadStream(fd);
  const output = new WriteStream(fd);
  try {
    // Echo off before the question shows: what is typed as soon as it shows is never echoed.
    input.setRawMode(true);
    output.write(question);
    return await new Promise<string>((resolve, reject) => {
      let line = '';
      const take = (typed: string) => {
        const chars = [...typed];
        for (let i = 0; i < chars.length; i++) {
          const ch = chars[i]!;
          if (ch === '\r' || ch === '\n') {
            output.write('\n');
            typedAhead = chars.slice(i + 1).join('').replace(/^\n/, ''); // (\r\n is one line end)
            input.removeAllListeners('data');
            resolve(line);
            return true;
          }
          if (ch === '\u0003') {
            output.write('\n');
            reject(new CliError('interrupted'));
            return true;
          }
          if (ch === '\u007f' || ch === '\b') line = [...line].slice(0, -1).join('');
          else if (ch >= ' ') line += ch;
        }
        return false;
      };
      const ahead = typedAhead;
      typedAhead = '';
      if (take(ahead)) return;
      input.on('data', (buf: Buffer) => void take(buf.toString('utf8')));
    });
  } finally {
    input.setRawMode(false);
    input.destroy();
    output.destroy();
    try {
      closeSync(fd);
    } catch {
      // (closed with its streams)
    }
  }
}

/**
 * The password of the store, by the sources above, else asked on the terminal; with no
 * terminal to ask on, a usage error naming the sources (the store's own message named its
 * library option, and a prompt that could not be: a trial).
 */
export async function storePassword(cmd: Command, question = 'password: '): Promise<string> {
  const p = givenPassword(cmd) ?? (await prompt(question));
  // (WRONG_PASSWORD, as the store says of a missing password: scripts read the code.)
  if (p === undefined) throw new CliError(`this store is encrypted, and there is no terminal to ask for its ${question.replace(/: $/, '')} on: give it with --password-command, KURA_PASSWORD_FILE or KURA_PASSWORD`, EXIT.usage, 'WRONG_PASSWORD');
  return p;
}

/** The password the command was given without a prompt (--password-command, a file, the environment), if any. */
export function givenPassword(cmd: Command): string | undefined {
  const { passwordCommand } = cmd.optsWithGlobals() as { passwordCommand?: string };
  if (passwordCommand) {
    let out: string;
    try {
      out = firstLine(execFileSync('/bin/sh', ['-c', passwordCommand], { encoding: 'utf8', stdio: ['inherit', 'pipe', 'inherit'] }));
    } catch (e) {
      const status = (e as { status?: number | null }).status;
      throw usage(`--password-command ${JSON.stringify(passwordCommand)} failed${typeof status === 'number' ? ` (exit ${status})` : ''}: no password [PASSWORD_SOURCE]`);
    }
    if (!out) throw usage(`--password-command ${JSON.stringify(passwordCommand)} printed an empty first line: no password [PASSWORD_SOURCE]`);
    return out;
  }
  const file = process.env.KURA_PASSWORD_FILE;
  if (file) {
    const p = passwordFromFile(file, 'KURA_PASSWORD_FILE');
    // (An empty one was tried as a password and answered "wrong password": a trial.)
    if (!p) throw usage(`KURA_PASSWORD_FILE ${file}: its first line is empty: no password [PASSWORD_SOURCE]`);
    return p;
  }
  // (Set but empty: none, as no password is empty. A line end at its end is not the password's,
  // as a file's is not: `KURA_PASSWORD=$(cat pw.txt)` drops it, `$'pw\n'` did not — a trial.)
  return process.env.KURA_PASSWORD?.replace(/\r?\n$/, '') || undefined;
}

/**
 * Whether the command has a password source other than the prompt (without running
 * --password-command). Then the store must be encrypted: a plain one in its place is refused
 * (`requireEncryption`), never read or written with the password ignored.
 */
export function passwordConfigured(cmd: Command): boolean {
  const { passwordCommand } = cmd.optsWithGlobals() as { passwordCommand?: string };
  return Boolean(passwordCommand || process.env.KURA_PASSWORD_FILE || process.env.KURA_PASSWORD);
}

/** A password from the first line of `file` (a usage error when it cannot be read); `source` names where the file was given. */
export function passwordFromFile(file: string, source = '--new-password-file'): string {
  try {
    return firstLine(readFileSync(file, 'utf8'));
  } catch (e) {
    throw usage(`${source} ${file}: ${describeError(e)}`);
  }
}

/**
 * A new password: from the file `fileOption` names when given, else asked twice on the terminal
 * (they must match); `instead` says how to give it without a terminal. Empty ones are refused.
 */
export async function newPassword(fileOption: string | undefined, what = 'new password', instead = 'give --new-password-file FILE'): Promise<string> {
  let password: string | undefined;
  if (fileOption) password = passwordFromFile(fileOption);
  else {
    password = await prompt(`${what}: `);
    if (password === undefined) throw usage(`no terminal to ask for the ${what} on: ${instead}`);
    if ((await prompt(`${what} again: `)) !== password) throw usage('the passwords differ');
  }
  if (!password) throw usage(`the ${what} is empty`);
  return password;
}

/** The store's current password as the sources above give it, or a usage error naming them. */
export const requiredPassword = (cmd: Command): Promise<string> => storePassword(cmd);
