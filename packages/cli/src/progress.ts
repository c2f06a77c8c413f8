/**
 * Progress bars on stderr (cli-progress), only when stderr is a terminal and the output is not
 * --json. While a bar is up, lines for people go through it (above the bar) so the two do not
 * tear each other; without a bar they go straight to stdout/stderr.
 */
import cliProgress from 'cli-progress';
import { errorLine, printError } from './exit.js';
import { write } from './output.js';
import { signalsTaken } from './interrupt.js';

export interface BarValues {
  value: number;
  total: number;
  /** Milliseconds since the bar started. */
  elapsed: number;
}

export class Progress {
  readonly #multi: cliProgress.MultiBar | undefined;
  readonly #bar: cliProgress.SingleBar | undefined;
  readonly #started = Date.now();

  /**
   * `describe` renders the text after the bar; `enabled: false` (or stderr not a terminal)
   * makes every call a no-op except the line and error output.
   */
  constructor(total: number, enabled: boolean, describe: (v: BarValues) => string) {
    if (!enabled || !process.stderr.isTTY) return;
    this.#multi = new cliProgress.MultiBar({
      stream: process.stderr,
      hideCursor: true,
      clearOnComplete: true,
      barsize: 24,
      fps: 8,
      format: (options, params) =>
        `${cliProgress.Format.BarFormat(params.progress, options)} ${describe({
          value: params.value,
          total: params.total,
          elapsed: Date.now() - this.#started,
        })}`,
    });
    this.#bar = this.#multi.create(Math.max(total, 1), 0);
    // (A command that takes Ctrl-C itself stops the bar as it stops: interrupt.ts.)
    if (signalsTaken()) return;
    process.once('SIGINT', this.#interrupted);
    process.once('SIGTERM', this.#interrupted);
  }

  /** Ctrl-C: restore the cursor, then die of the signal as if we had not caught it. */
  readonly #interrupted = (signal: NodeJS.Signals) => {
    this.stop();
    process.kill(process.pid, signal);
  };

  get active(): boolean {
    return this.#bar !== undefined;
  }

  set(value: number): void {
    this.#bar?.update(value);
  }

  setTotal(total: number): void {
    this.#bar?.setTotal(Math.max(total, 1));
  }

  /** A line of the command's output (stdout), drawn above the bar while one is up. */
  async line(text: string): Promise<void> {
    if (this.#multi && process.stdout.isTTY) this.#multi.log(`${text}\n`);
    else await write(`${text}\n`);
  }

  /** A `kura: ...` error line on stderr, above the bar while one is up. */
  error(message: string): void {
    if (this.#multi) this.#multi.log(errorLine(message));
    else printError(message);
  }

  /** Removes the bar, flushing the lines logged since its last redraw. */
  stop(): void {
    if (!this.#multi || !this.#multi.isActive) return;
    process.off('SIGINT', this.#interrupted);
    process.off('SIGTERM', this.#interrupted);
    this.#multi.update();
    this.#multi.stop();
  }
}
