/** Writing to stdout with backpressure, so output of any size keeps memory bounded. */
import { once } from 'node:events';

export async function write(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

/** Exits quietly when the reader goes away (`kura chunks big | head`). */
export function exitOnClosedPipe(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
}

/** Raw bytes to stdout, with backpressure. */
export async function writeBytes(bytes: Uint8Array): Promise<void> {
  if (!process.stdout.write(bytes)) await once(process.stdout, 'drain');
}

/** One JSON value on its own line (NDJSON). */
export async function writeJson(value: unknown): Promise<void> {
  await write(`${JSON.stringify(value)}\n`);
}
