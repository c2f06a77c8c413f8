/**
 * The `kura` program: commander parses, each verb lives in commands/. Returns the exit code
 * (docs/ERRORS.md) instead of exiting, so tests and `kura serve` can embed it.
 */
import { Command, CommanderError } from 'commander';
import * as add from './commands/add.js';
import * as chunks from './commands/chunks.js';
import * as gc from './commands/gc.js';
import * as forget from './commands/forget.js';
import * as policy from './commands/policy.js';
import * as token from './commands/token.js';
import * as key from './commands/key.js';
import * as copy from './commands/copy.js';
import * as watch from './commands/watch.js';
import * as get from './commands/get.js';
import * as hash from './commands/hash.js';
import * as index from './commands/index.js';
import * as init from './commands/init.js';
import * as ls from './commands/ls.js';
import * as rm from './commands/rm.js';
import * as search from './commands/search.js';
import * as grep from './commands/grep.js';
import * as serve from './commands/serve.js';
import * as snapshot from './commands/snapshot.js';
import * as stats from './commands/stats.js';
import * as tag from './commands/tag.js';
import * as verify from './commands/verify.js';
import * as rebuild from './commands/rebuild.js';
import * as versions from './commands/versions.js';
import { EXIT, describeError, exitCodeOf, isKuraError, printError } from './exit.js';
import { exitOnClosedPipe } from './output.js';
import { VERSION } from './version.js';
import * as mcp from './commands/mcp.js';

export { VERSION } from './version.js';

/** A commander error message as one `kura: … [INVALID_INPUT]` line, its suggestion and a help hint in it. */
function oneLine(text: string): string {
  const lines = text.trim().split('\n');
  const said = lines[0]!.replace(/^error: /, '');
  const suggestion = lines.slice(1).join(' ').replace(/^\(Did you mean (.*)\?\)$/, 'did you mean $1?');
  return `kura: ${said}${suggestion ? ` (${suggestion}; kura --help for usage)` : ' (kura --help for usage)'} [INVALID_INPUT]`;
}

export function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command('kura')
    .description('Kura: a content-addressable, deduplicating store')
    .version(VERSION)
    .exitOverride()
    // Commander's own errors as every other error: one line, its code last (it printed three:
    // the error, "(Did you mean --limit?)" and a help hint — a trial).
    .configureOutput({ outputError: (text) => process.stderr.write(`${oneLine(text)}\n`) })
    // Program options are recognised before and after the verb: `kura --store D ls` = `kura ls --store D`.
    .option('--store <dir>', 'the store: a directory, or s3://bucket/prefix (default: $KURA_STORE, else ./.kura)')
    .option('--endpoint <url>', 'the S3 server of an s3:// store (default: $AWS_ENDPOINT_URL_S3; credentials from $AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY)')
    .option('--password-command <cmd>', "an encrypted store's password: this shell command's output (else $KURA_PASSWORD_FILE, $KURA_PASSWORD, or a prompt)")
    .configureHelp({ showGlobalOptions: true })
    .addHelpText('after', '\nExit codes: 0 ok, 1 error, 2 usage, 3 kura verify found damage. Errors are one line on stderr.');
  init.register(program);
  add.register(program, setExit);
  get.register(program);
  ls.register(program);
  search.register(program, setExit);
  grep.register(program, setExit);
  index.register(program);
  versions.register(program);
  rm.register(program, setExit);
  tag.register(program);
  stats.register(program);
  verify.register(program, setExit);
  gc.register(program);
  rebuild.register(program);
  snapshot.register(program, setExit);
  forget.register(program);
  policy.register(program);
  token.register(program);
  key.register(program);
  copy.register(program, setExit);
  watch.register(program);
  serve.register(program);
  hash.register(program, setExit);
  chunks.register(program);
  mcp.register(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  exitOnClosedPipe();
  let code: number = EXIT.ok;
  const program = buildProgram((c) => {
    code = Math.max(code, c);
  });
  try {
    await program.parseAsync(argv);
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      // help and --version end in a CommanderError with exit code 0; parse errors are usage.
      return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    // A file-system error that reached here unnamed says which file (its own `path`): "kura: no
    // such file or directory" alone left the user to guess which argument it was.
    const path = (e as NodeJS.ErrnoException | undefined)?.path;
    printError(typeof path === 'string' && !isKuraError(e) ? `${path}: ${describeError(e)}` : describeError(e));
    return Math.max(code, exitCodeOf(e));
  }
}
