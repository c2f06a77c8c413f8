/**
 * The body of a browser ingest worker (browser/ingest-pool.ts): reads Blobs, runs the kernel
 * (ingest/serve.ts). Kept apart from the store so the worker bundle carries only the core.
 */
import { serveIngest } from '../ingest/serve.js';
import type { ToWorker } from '../ingest/protocol.js';

/** FileReaderSync exists in dedicated workers (lib.webworker; not in lib.dom). */
declare const FileReaderSync: { new (): { readAsArrayBuffer(blob: Blob): ArrayBuffer } };

/** Bytes read per step: a Blob's stream() hands out 64 KiB pieces, each a round trip. */
const PIECE = 4 << 20;

/** A Blob's bytes in 4 MiB pieces, the next read already under way while one is ingested. */
async function* blobPieces(blob: Blob): AsyncGenerator<Uint8Array> {
  let next: Promise<ArrayBuffer> | undefined = blob.size > 0 ? blob.slice(0, PIECE).arrayBuffer() : undefined;
  for (let at = 0; next; ) {
    const piece = await next;
    at += piece.byteLength;
    next = at < blob.size ? blob.slice(at, at + PIECE).arrayBuffer() : undefined;
    yield new Uint8Array(piece);
  }
}

export function serveBrowserIngest(): void {
  const scope = self as unknown as { postMessage(m: unknown, t: Transferable[]): void; onmessage: ((ev: MessageEvent) => void) | null };
  const handle = serveIngest<Blob>({
    post: (m, transfer) => scope.postMessage(m, transfer),
    open: (blob) => blobPieces(blob),
    readWhole: (blob) => new Uint8Array(new FileReaderSync().readAsArrayBuffer(blob)),
  });
  scope.onmessage = (ev: MessageEvent<ToWorker<Blob>>) => handle(ev.data);
  scope.postMessage({ type: 'ready' }, []); // the pool holds its messages until this

}
