/** readAll: a small file whole through its descriptor, whatever its size turned out to be. */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAll } from '../src/node/read-all.js';
import { randomBytes, tempDir } from './helpers/store.js';

function readFile(path: string, expected: number): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    return readAll(fd, expected);
  } finally {
    closeSync(fd);
  }
}

/** A FIFO whose writer sends `pieces` with pauses between them: reads come back short. */
function slowFifo(pieces: string[]): number {
  const path = join(tempDir(), 'fifo');
  execFileSync('mkfifo', [path]);
  const script = `exec > "$0"; ${pieces.map((p) => `printf '%s' '${p}'`).join('; sleep 0.2; ')}`;
  spawn('sh', ['-c', script, path], { stdio: 'ignore' });
  return openSync(path, 'r'); // waits for the writer to open its end
}

describe('readAll', () => {
  it('reads a file whole whether it is the expected size, larger or smaller', () => {
    const dir = tempDir();
    for (const size of [0, 1, 4095, 4096, 70_000]) {
      const bytes = randomBytes(size, size);
      const path = join(dir, `f${size}`);
      writeFileSync(path, bytes);
      expect(Buffer.from(readFile(path, size)).equals(Buffer.from(bytes))).toBe(true);
      // Grown since it was stat'ed (expected too small), and shrunk (expected too large).
      expect(Buffer.from(readFile(path, Math.floor(size / 3))).equals(Buffer.from(bytes))).toBe(true);
      expect(Buffer.from(readFile(path, size * 2 + 10)).equals(Buffer.from(bytes))).toBe(true);
    }
  });

  it('goes on past a short read until it has the expected bytes, and stops at end of file', () => {
    const fd = slowFifo(['abc', 'def', 'gh']);
    try {
      // Short reads of 3 and 3 bytes: the first is not taken for the end (6 expected).
      expect(Buffer.from(readAll(fd, 6)).toString()).toBe('abcdef');
    } finally {
      closeSync(fd);
    }
    const fd2 = slowFifo(['abc', 'de']);
    try {
      // Fewer bytes than expected: read until a read returns 0.
      expect(Buffer.from(readAll(fd2, 10)).toString()).toBe('abcde');
    } finally {
      closeSync(fd2);
    }
  });
});
