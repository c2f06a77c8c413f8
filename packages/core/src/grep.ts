/**
 * Lines of text that match a regular expression, in time linear in the text whatever the
 * pattern (wasm-core/src/grep.rs: Rust's regex crate, finite automata; decision 0055). The
 * same module in Node and in browsers.
 */
import { InvalidInputError, InvalidStateError } from './errors.js';
import { check, copyIn, memory, wasm } from './wasm/instance.js';
import { WASM_ERROR } from './wasm/exports.js';

const registry = new FinalizationRegistry<number>((h) => wasm().kura_grep_free(h));
const utf8 = new TextEncoder();
const decoder = new TextDecoder();

/** A matching line of a block of text: its index in the block, its bytes, its first match. */
export interface LineMatch {
  line: number;
  start: number;
  end: number;
  matchStart: number;
  matchEnd: number;
}

export class LineMatcher {
  #handle: number;

  /**
   * `pattern`: Rust regex syntax (docs/HTTP.md "grep"); `^`/`$` match at line ends, and no
   * match crosses one (as ripgrep's: `\s`, `[^x]`, `(?s).` do not match `\n`). A pattern that
   * is not a regular expression, whose automaton would be too large, or that names a line
   * break (`\n`, `\x0A`: ripgrep refuses it too) is INVALID_INPUT with the reason.
   */
  constructor(
    readonly pattern: string,
    readonly ignoreCase = false,
  ) {
    if (typeof pattern !== 'string') throw new InvalidInputError('the pattern must be a string', 'pattern');
    const h = wasm().kura_grep_new(ignoreCase ? 1 : 0, copyIn(utf8.encode(pattern)));
    if (h === 0) {
      const code = wasm().kura_last_error();
      const at = wasm().kura_out_ptr() >>> 0;
      const why = code === WASM_ERROR.invalidPattern ? decoder.decode(memory().slice(at, at + wasm().kura_out_len())) : `error ${code}`;
      const reason = why.split('\n').filter(Boolean).at(-1) ?? why;
      // The matcher carries Unicode's case folding and \w \d \s, not its property tables (left
      // out of the wasm module: decision 0055): said, with what works instead.
      const hint = /Unicode property/i.test(reason) ? ' (\\p{…} classes are not built in: \\w matches letters of every script; a range such as [\\u4e00-\\u9fff] names a script)' : '';
      throw new InvalidInputError(`not a usable pattern: ${reason}${hint}`, 'pattern');
    }
    this.#handle = h;
    registry.register(this, h, this);
  }

  /** The lines of `text` (UTF-8) holding a match, each once, in order; and its newlines. */
  lines(text: Uint8Array): { matches: LineMatch[]; newlines: number } {
    if (this.#handle === 0) throw new InvalidStateError('LineMatcher.lines: disposed');
    const n = check(wasm().kura_grep_lines(this.#handle, copyIn(text)), 'LineMatcher.lines');
    const at = wasm().kura_out_ptr() >>> 0;
    const v = new Uint32Array(memory().buffer.slice(at, at + 4 + n * 20));
    const matches: LineMatch[] = new Array(n);
    for (let i = 0, k = 1; i < n; i++, k += 5) matches[i] = { line: v[k]!, start: v[k + 1]!, end: v[k + 2]!, matchStart: v[k + 3]!, matchEnd: v[k + 4]! };
    return { matches, newlines: v[0]! };
  }

  /**
   * Every match in `line` (UTF-8, one line without its line end), in order, not overlapping:
   * `[start, end]` byte offsets (`grep -o`). An empty match is one too (`x*`); none follows a
   * match directly.
   */
  matchesIn(line: Uint8Array): [number, number][] {
    if (this.#handle === 0) throw new InvalidStateError('LineMatcher.matchesIn: disposed');
    const n = check(wasm().kura_grep_matches(this.#handle, copyIn(line)), 'LineMatcher.matchesIn');
    const at = wasm().kura_out_ptr() >>> 0;
    const v = new Uint32Array(memory().buffer.slice(at, at + n * 8));
    const spans: [number, number][] = new Array(n);
    for (let i = 0; i < n; i++) spans[i] = [v[2 * i]!, v[2 * i + 1]!];
    return spans;
  }

  /** Frees the matcher. Idempotent. */
  dispose(): void {
    if (this.#handle === 0) return;
    registry.unregister(this);
    wasm().kura_grep_free(this.#handle);
    this.#handle = 0;
  }
}
