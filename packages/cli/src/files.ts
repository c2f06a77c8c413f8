/** Reading input files as streams of bounded pieces. */
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';

/** 1 MiB pieces: the size the wasm core takes per call. */
const PIECE = 1 << 20;

/** A file (or stdin for `-`) as an async iterable of byte pieces. */
export function openInput(path: string): Readable {
  return path === '-' ? process.stdin : createReadStream(path, { highWaterMark: PIECE });
}

/** How a file argument is shown: `-` is "standard input". */
export function displayName(path: string): string {
  return path === '-' ? 'standard input' : path;
}
