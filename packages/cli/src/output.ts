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
