/**
 * Exit codes scripts can rely on (docs/ERRORS.md): 0 ok, 1 error, 2 usage, 3 verify found
 * damage. Errors print one line on stderr, never a stack trace.
 */
import { isKuraError as isAnyKuraError, type KuraError, type KuraErrorCode } from '@kura/core';

/** `partial`: done, with entries left out and named on stderr (a snapshot: restic's 3, here taken by damage). */
export const EXIT = { ok: 0, error: 1, usage: 2, damaged: 3, partial: 4 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the command has already explained, carrying its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.error,
    /** The code its line ends with (`[CODE]`), as a store error's does. */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** A value the user typed that cannot be: exit 2, `[INVALID_INPUT]` as the store's own refusals. */
export function usage(message: string): CliError {
  return new CliError(message, EXIT.usage, 'INVALID_INPUT');
}

/** File-system errors people meet, in the words of coreutils. */
const FS_ERRORS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EISDIR: 'is a directory',
  ENOTDIR: 'not a directory',
  ELOOP: 'too many levels of symbolic links',
  EEXIST: 'file exists',
  ENOSPC: 'no space left on device',
  EROFS: 'read-only file system',
};

/** One line for stderr. */
export function describeError(e: unknown): string {
  if (isKuraError(e)) return `${e.message} [${e.code}]`;
  // (A message that already names its code keeps it once.)
  if (e instanceof CliError) return e.code && !/\[[A-Z_]+\]$/.test(e.message) ? `${e.message} [${e.code}]` : e.message;
  if (e instanceof Error) {
    const code = (e as NodeJS.ErrnoException).code;
    // (With its errno code, as the README promises every error line a [CODE].)
    if (code && code in FS_ERRORS) return `${FS_ERRORS[code]!} [${code}]`;
    return code ? `${e.message} [${code}]` : e.message;
  }
  return String(e);
}

/**
 * The exit code of each library code: a value the user typed that the store rejected is usage
 * (2); everything else is 1, damaged data included (damage found by `kura verify` is 3, returned
 * by that command, never thrown). Exhaustive, so a code added to @kura/core needs a line here.
 */
export const EXIT_OF: Readonly<Record<KuraErrorCode, ExitCode>> = {
  INVALID_INPUT: EXIT.usage,
  MODEL_UNAVAILABLE: EXIT.error,
  WRONG_PASSWORD: EXIT.usage,
  CORRUPT_DATA: EXIT.error,
  INVALID_STATE: EXIT.error,
  INTERNAL: EXIT.error,
  NOT_FOUND: EXIT.error,
  STORE_LOCKED: EXIT.error,
  STORAGE_UNAVAILABLE: EXIT.error,
  STORAGE_UNREACHABLE: EXIT.error,
  FORMAT_MISMATCH: EXIT.error,
  READ_ONLY: EXIT.error,
  STORE_CLOSED: EXIT.error,
  DIGEST_MISMATCH: EXIT.error,
  MISSING_CHUNKS: EXIT.error,
  AMBIGUOUS: EXIT.error,
  STORAGE_FULL: EXIT.error,
  IO_ERROR: EXIT.error,
  SYNC_FAILED: EXIT.error,
};

/**
 * The exit code an uncaught error ends the command with: a CliError says its own, a KuraError
 * its code's (EXIT_OF); anything else, file-system errors included, is 1.
 */
export function exitCodeOf(e: unknown): ExitCode {
  if (e instanceof CliError) return e.exitCode;
  if (isKuraError(e)) return EXIT_OF[e.code];
  return EXIT.error;
}

/**
 * A KuraError, optionally with the given code (compare codes, not classes: docs/ERRORS.md),
 * from any copy of @kura/core (`kura serve` runs the server's own: core's isKuraError).
 */
export function isKuraError(e: unknown, code?: KuraErrorCode): e is KuraError {
  return isAnyKuraError(e) && (code === undefined || e.code === code);
}

/** An error line: one line whatever the message holds (a JSON parser's quoted the broken text, line ends and all). */
export function errorLine(message: string): string {
  return `kura: ${message.replace(/\s*[\r\n]+\s*/g, ' ')}\n`;
}

export function printError(message: string): void {
  process.stderr.write(errorLine(message));
}
