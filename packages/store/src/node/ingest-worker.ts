/**
 * A worker of the ingest pool (ingest-pool.ts): runs the fused ingest kernel over files the
 * main thread names and streams the chunks back. Payload buffers are transferred, not copied.
 * Flow control: a worker stops reading after `WINDOW` unacknowledged batches.
 */
import { closeSync, constants, createReadStream, fstatSync, openSync, readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { Ingester, KuraError, type IngestChunk, type IngestOptions } from '@kura/core';

export const WINDOW = 4;

export type ToWorker =
  | { type: 'file'; id: number; path: string; options: IngestOptions; regularOnly?: boolean }
  | { type: 'bytes'; id: number; bytes: Uint8Array; options: IngestOptions }
  | { type: 'small'; id: number; paths: string[]; options: IngestOptions }
  | { type: 'ack'; id: number }
  | { type: 'cancel'; id: number };

/** One small file's ingest, whole (a batch answers in one message). */
export type SmallResult =
  | { chunks: IngestChunk[]; digest: `sha256:${string}`; size: number; count: number }
  | { error: { message: string; code?: string; kura: boolean } };

export type FromWorker =
  | { type: 'chunks'; id: number; chunks: IngestChunk[] }
  | { type: 'end'; id: number; digest: `sha256:${string}`; size: number; chunks: number }
  | { type: 'error'; id: number; message: string; code?: string; kura: boolean }
  | { type: 'small'; id: number; results: SmallResult[] };

const port = parentPort!;
const credits = new Map<number, { inFlight: number; wake?: () => void; cancelled?: boolean }>();

class Cancelled extends Error {}

function send(msg: FromWorker): void {
  const transfer =
    msg.type === 'chunks'
      ? msg.chunks.map((c) => c.payload.buffer as ArrayBuffer)
      : msg.type === 'small'
        ? msg.results.flatMap((r) => ('chunks' in r ? r.chunks.map((c) => c.payload.buffer as ArrayBuffer) : []))
        : [];
  port.postMessage(msg, transfer);
}

/** Opens a file without following a link, and only if it is a regular file (snapshots). */
function openRegular(path: string): number {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new Error(`${path} is no longer a regular file (changed while the snapshot ran)`);
  }
  return fd;
}

/**
 * Many small files in one message each way (snapshots of source trees): per-file messaging
 * would cost more than the ingest. Each file is read whole; its result or error is kept apart.
 */
function ingestSmall(id: number, paths: string[], options: IngestOptions): void {
  const results: SmallResult[] = paths.map((path) => {
    const ingester = new Ingester(options);
    try {
      // Not following a link planted since the scan.
      const fd = openRegular(path);
      let bytes: Buffer;
      try {
        bytes = readFileSync(fd);
      } finally {
        closeSync(fd);
      }
      const chunks = [...ingester.update(bytes), ...ingester.finish()];
      const r = ingester.result!;
      return { chunks, digest: r.digest, size: r.size, count: r.chunks };
    } catch (e) {
      const err = e as Error & { code?: string };
      return { error: { message: err.message, kura: e instanceof KuraError, ...(typeof err.code === 'string' ? { code: err.code } : {}) } };
    } finally {
      ingester.dispose();
    }
  });
  send({ type: 'small', id, results });
}

/** 1 MiB pieces, the size the kernel takes per call. */
function* slices(bytes: Uint8Array): Generator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += 1 << 20) yield bytes.subarray(at, at + (1 << 20));
}

async function ingestSource(id: number, source: Iterable<Uint8Array> | AsyncIterable<Uint8Array>, options: IngestOptions): Promise<void> {
  const flow = { inFlight: 0 } as { inFlight: number; wake?: () => void; cancelled?: boolean };
  credits.set(id, flow);
  const ingester = new Ingester(options);
  try {
    const emit = async (chunks: IngestChunk[]) => {
      if (chunks.length === 0) return;
      // Each payload is its own copy out of wasm memory (a fresh ArrayBuffer): safe to transfer.
      if (flow.cancelled) throw new Cancelled();
      send({ type: 'chunks', id, chunks });
      flow.inFlight++;
      while (flow.inFlight >= WINDOW && !flow.cancelled) await new Promise<void>((r) => (flow.wake = r));
      if (flow.cancelled) throw new Cancelled();
    };
    for await (const piece of source) {
      await emit(ingester.update(piece as Uint8Array));
    }
    await emit(ingester.finish());
    const r = ingester.result!;
    send({ type: 'end', id, digest: r.digest, size: r.size, chunks: r.chunks });
  } catch (e) {
    if (e instanceof Cancelled) return; // nobody listens any more
    const err = e as Error & { code?: string };
    send({ type: 'error', id, message: err.message, kura: e instanceof KuraError, ...(typeof err.code === 'string' ? { code: err.code } : {}) });
  } finally {
    ingester.dispose();
    credits.delete(id);
  }
}

port.on('message', (msg: ToWorker) => {
  if (msg.type === 'file') {
    let source: AsyncIterable<Uint8Array>;
    try {
      source = msg.regularOnly ? createReadStream('', { fd: openRegular(msg.path), highWaterMark: 1 << 20 }) : createReadStream(msg.path, { highWaterMark: 1 << 20 });
    } catch (e) {
      const err = e as Error & { code?: string };
      send({ type: 'error', id: msg.id, message: err.message, kura: false, ...(typeof err.code === 'string' ? { code: err.code } : {}) });
      return;
    }
    void ingestSource(msg.id, source, msg.options);
  }
  else if (msg.type === 'bytes') void ingestSource(msg.id, slices(msg.bytes), msg.options);
  else if (msg.type === 'small') ingestSmall(msg.id, msg.paths, msg.options);
  else if (msg.type === 'cancel') {
    const flow = credits.get(msg.id);
    if (flow) {
      flow.cancelled = true;
      flow.wake?.();
    }
  } else {
    const flow = credits.get(msg.id);
    if (flow) {
      flow.inFlight--;
      flow.wake?.();
    }
  }
});
