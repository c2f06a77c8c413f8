/**
 * The `kura` program: commander parses, each verb lives in commands/. Returns the exit code
 * (docs/ERRORS.md) instead of exiting, so tests and `kura serve` can embed it.
 */
import { Command, CommanderError } from 'commander';
import * as chunks from './commands/chunks.js';
import * as hash from './commands/hash.js';
import { CliError, EXIT, describeError, printError } from './exit.js';
import { exitOnClosedPipe } from './output.js';

export const VERSION = '0.1.0';

export function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command('kura')
    .description('Kura: a content-addressable, deduplicating store')
    .version(VERSION)
    .exitOverride()
    .configureOutput({ outputError: (text) => process.stderr.write(text.startsWith('error:') ? `kura: ${text}` : text) })
    .showHelpAfterError('(run kura --help for usage)');
  hash.register(program, setExit);
  chunks.register(program);
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
    printError(describeError(e));
    return e instanceof CliError ? e.exitCode : EXIT.error;
  }
}
