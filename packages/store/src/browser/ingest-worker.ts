/**
 * The body of a browser ingest worker (browser/ingest-pool.ts): reads Blobs, runs the kernel
 * (ingest/serve.ts). Kept apart from the store so the worker bundle carries only the core.
 */
import { serveIngest, slices, type HashedSource } from '../ingest/serve.js';
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

/**
 * Files up to this size are read whole and hashed by SubtleCrypto (native SHA-256, several
 * times the wasm speed, off this thread in Chromium) while the kernel chunks them; larger
 * ones stream through the kernel's wasm SHA-256 (SubtleCrypto has no incremental digest, and
 * holding more would cost the tab too much memory: the buffer plus SubtleCrypto's copy).
 * Decision 0014.
 */
export const NATIVE_DIGEST_MAX = 128 << 20;

/** The kernel's pieces of a buffer still being read. */
async function* sliced(whole: Promise<ArrayBuffer>): AsyncGenerator<Uint8Array> {
  yield* slices(new Uint8Array(await whole));
}

function openHashed(blob: Blob): HashedSource | undefined {
  // SubtleCrypto exists only in secure contexts (https, localhost, 127.0.0.1).
  const subtle = globalThis.crypto?.subtle;
  if (!subtle || blob.size > NATIVE_DIGEST_MAX) return undefined;
  const whole = blob.arrayBuffer();
  // digest() copies the bytes when called, so the kernel reading the same buffer is safe.
  const digest = whole.then((b) => subtle.digest('SHA-256', b)).then((d) => new Uint8Array(d));
  return { pieces: sliced(whole), digest };
}

/** A Blob's bytes, or the error reading it gave. */
function readOne(blob: Blob): Promise<Uint8Array | Error> {
  return blob.arrayBuffer().then(
    (a) => new Uint8Array(a),
    (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
  );
}

/**
 * A batch of small Blobs in one read: a Blob read is a round trip to the browser's blob store,
 * so the batch is read as one Blob made of them (no copy until read) and cut by their sizes.
 * Measured in Chromium, 1,000 small files: reading them one after another (FileReaderSync) left
 * the workers waiting most of the time. If the whole read fails (a file changed or vanished),
 * each is read alone, so only that one fails.
 */
async function readMany(blobs: Blob[]): Promise<(Uint8Array | Error)[]> {
  const total = blobs.reduce((n, b) => n + b.size, 0);
  try {
    const all = new Uint8Array(await new Blob(blobs).arrayBuffer());
    if (all.length === total) {
      let at = 0;
      return blobs.map((b) => all.subarray(at, (at += b.size)));
    }
  } catch {
    // one of them could not be read: find which, below
  }
  return Promise.all(blobs.map(readOne));
}

export function serveBrowserIngest(): void {
  const scope = self as unknown as { postMessage(m: unknown, t: Transferable[]): void; onmessage: ((ev: MessageEvent) => void) | null };
  const handle = serveIngest<Blob>({
    post: (m, transfer) => scope.postMessage(m, transfer),
    open: (blob) => blobPieces(blob),
    readWhole: (blob) => ({ bytes: new Uint8Array(new FileReaderSync().readAsArrayBuffer(blob)) }),
    readMany,
    openHashed,
  });
  scope.onmessage = (ev: MessageEvent<ToWorker<Blob>>) => handle(ev.data);
  scope.postMessage({ type: 'ready' }, []); // the pool holds its messages until this

}
