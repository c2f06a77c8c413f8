/**
 * The worker side of an ingest pool: runs the fused ingest kernel over the sources the pool
 * names and streams the chunks back (protocol.ts). Platform-neutral: the host says how to post
 * and how to read a source (Node: file descriptors; browsers: Blobs).
 */
import { DEFAULT_LEVEL, Ingester, KuraError, type IngestOptions } from '@kura/core';
import { KnownChunks } from './known-chunks.js';
import { ChunkGrouper, groupFrames, type StreamChunk } from './chunk-groups.js';
import { WINDOW, type ErrorShape, type FromWorker, type ToWorker } from './protocol.js';
import { packSmallResults, type SmallResult, type SourceStat } from './small-batch.js';

export interface IngestHost<S> {
  post(message: FromWorker, transfer: ArrayBuffer[]): void;
  /**
   * The bytes of a source as pieces (may throw: the error goes back to the pool). A source
   * whose `changed` is true once its pieces are read changed while it was read (the end says so).
   * A piece's buffer may be reused for the next piece: its bytes are taken (hashed, copied into
   * wasm, the head copied) before the next is asked for.
   */
  open(source: S, regularOnly: boolean): (Iterable<Uint8Array> | AsyncIterable<Uint8Array>) & { changed?: boolean };
  /**
   * A small source whole, synchronously (a batch is answered in one go); `changed`: it changed
   * while it was read (a file whose size or times moved), as `open`'s.
   */
  readWhole(source: S): { bytes: Uint8Array; changed?: boolean };
  /**
   * Optional: many small sources whole, their reads overlapped (or each one's error); used
   * instead of `readWhole` for a batch when given.
   */
  readMany?(sources: S[]): Promise<(Uint8Array | Error)[]>;
  /**
   * Optional (files): the source's stat as opened, and its bytes unless it has `max` bytes or
   * more. Used when a request asks for stats (`statMax`).
   */
  readWithStat?(source: S, max: number): { bytes?: Uint8Array | undefined; stat: SourceStat };
  /**
   * Optional: the source's pieces with its SHA-256 taken by a native hasher over the same
   * bytes (browsers: SubtleCrypto, which only hashes whole buffers), or undefined to use
   * `open` (the Ingester's own hasher). Tried first.
   */
  openHashed?(source: S): HashedSource | undefined;
}

export interface HashedSource {
  pieces: AsyncIterable<Uint8Array>;
  /** The 32-byte SHA-256 of exactly the bytes `pieces` yields. */
  digest: Promise<Uint8Array>;
}

class Cancelled extends Error {}

function shape(e: unknown): ErrorShape {
  const err = e as Error & { code?: unknown; path?: unknown };
  return {
    message: err?.message ?? String(e),
    kura: e instanceof KuraError,
    ...(typeof err?.code === 'string' ? { code: err.code } : {}),
    ...(typeof err?.path === 'string' ? { path: err.path } : {}),
  };
}

/** `pieces` in one fresh buffer of `length` bytes (the only piece when it is one). */
function joined(pieces: Uint8Array[], length: number): Uint8Array {
  if (pieces.length === 1 && pieces[0]!.byteOffset === 0 && pieces[0]!.buffer.byteLength === length) return pieces[0]!;
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The most the kernel takes per call (1 MiB), as @kura/core's BLOCK. */
const BLOCK = 1 << 20;

/** 1 MiB pieces, the size the kernel takes per call. */
export function* slices(bytes: Uint8Array): Generator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += BLOCK) yield bytes.subarray(at, at + BLOCK);
}

/** Returns the handler for messages from the pool. */
export function serveIngest<S>(host: IngestHost<S>): (message: ToWorker<S>) => void {
  const credits = new Map<number, { inFlight: number; wake?: () => void; cancelled?: boolean }>();

  const send = (msg: FromWorker) => {
    // Each payload is its own copy out of wasm memory (a fresh ArrayBuffer): safe to transfer.
    // (A group's members have no payload of their own: the group's frame holds their bytes.)
    const transfer =
      msg.type === 'chunks'
        ? [...msg.chunks.filter((c) => !c.group).map((c) => c.payload.buffer as ArrayBuffer), ...groupFrames(msg.chunks)]
        : msg.type === 'small'
          ? [msg.packed]
          : msg.type === 'end' && msg.head
            ? [msg.head]
            : [];
    host.post(msg, transfer);
  };

  /** Many small sources, one message each way: per-source messaging would cost more than the ingest. */
  const ingestSmall = async (id: number, sources: S[], options: IngestOptions, known: KnownChunks | undefined, statMax: number | undefined, headMax = 0) => {
    type Read = { bytes?: Uint8Array | undefined; stat?: SourceStat | undefined; changed?: boolean } | { error: ErrorShape };
    const readOne = (source: S): Read => {
      try {
        return statMax !== undefined && host.readWithStat ? host.readWithStat(source, statMax) : host.readWhole(source);
      } catch (e) {
        return { error: shape(e) };
      }
    };
    // All of a batch's reads at once where a read waits on another process (browsers' Blobs):
    // one after another, a batch of 64 small files waited ~1 ms per file.
    const reads: Read[] = host.readMany && statMax === undefined ? (await host.readMany(sources)).map((r) => (r instanceof Uint8Array ? { bytes: r } : { error: shape(r) })) : sources.map(readOne);
    // The batch's new chunks are compressed in groups across its documents (chunk-groups.ts):
    // a small file compressed alone took ~22 µs and stored 1.6x less than its text; in groups
    // of a batch, ~15 µs and 3.6x (2.5 KB files of text, decision 0063).
    const level = options.compression === undefined ? DEFAULT_LEVEL : options.compression;
    const grouper = level === false ? undefined : new ChunkGrouper(level, known && ((key) => known.has(key)));
    const results: SmallResult[] = reads.map((read) => {
      if ('error' in read) return read;
      if (!read.bytes) return { large: read.stat! };
      const ingester = new Ingester(grouper ? { ...options, compression: false } : options);
      try {
        const chunks = [...ingester.update(read.bytes), ...ingester.finish()];
        grouper?.push(chunks); // (changes the chunks in place: members get their group by the batch's end)
        const r = ingester.result!;
        const head = headMax > 0 ? read.bytes.subarray(0, headMax) : undefined;
        return { chunks, digest: r.digest, size: r.size, count: r.chunks, stat: read.stat, head, ...(read.changed ? { changed: true as const } : {}) };
      } catch (e) {
        return { error: shape(e) };
      } finally {
        ingester.dispose();
      }
    });
    try {
      grouper?.finish();
    } finally {
      grouper?.dispose();
    }
    send({ type: 'small', id, ...packSmallResults(results) });
  };

  const ingestSource = async (
    id: number,
    source: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
    options: IngestOptions,
    known: KnownChunks | undefined,
    nativeDigest?: Promise<Uint8Array>,
    headMax = 0,
  ) => {
    const flow: { inFlight: number; wake?: () => void; cancelled?: boolean } = { inFlight: 0 };
    credits.set(id, flow);
    // With a native digest the kernel skips its own SHA-256; the digest is awaited before
    // finish() asks for it.
    let native: Uint8Array | undefined;
    const hasher = () => ({ update: () => undefined, digest: () => native! });
    // A put's new chunks are compressed in groups (chunk-groups.ts): the kernel emits them raw.
    const level = options.compression === undefined ? DEFAULT_LEVEL : options.compression;
    const grouper = level === false ? undefined : new ChunkGrouper(level, known && ((key) => known.has(key)));
    const ingester = new Ingester({ ...options, ...(grouper ? { compression: false } : {}), ...(nativeDigest ? { documentHasher: hasher } : {}) });
    try {
      // Grouped, the kernel's chunks stay in wasm memory until the grouper has taken them
      // (a member's bytes into its group there, the others' copied out): one kernel call at a
      // time, so pieces go in BLOCK at most.
      const update = (piece: Uint8Array): StreamChunk[] => {
        if (!grouper) return ingester.update(piece);
        const out: StreamChunk[] = [];
        for (let at = 0; at < piece.length; at += BLOCK) out.push(...grouper.push(ingester.updateDeferred(piece.subarray(at, at + BLOCK)), ingester));
        return out;
      };
      const emit = async (chunks: StreamChunk[]) => {
        if (chunks.length === 0) return;
        if (flow.cancelled) throw new Cancelled();
        send({ type: 'chunks', id, chunks });
        flow.inFlight++;
        while (flow.inFlight >= WINDOW && !flow.cancelled) await new Promise<void>((r) => (flow.wake = r));
        if (flow.cancelled) throw new Cancelled();
      };
      // The first `headMax` bytes, copied as they pass (the pieces' buffers may be reused).
      const head: Uint8Array[] = [];
      let headLength = 0;
      for await (const piece of source) {
        if (headLength < headMax) {
          head.push(piece.slice(0, headMax - headLength));
          headLength += head[head.length - 1]!.length;
        }
        await emit(update(piece));
      }
      if (nativeDigest) native = await nativeDigest;
      await emit(grouper ? grouper.push(ingester.finishDeferred(), ingester) : ingester.finish());
      if (grouper) await emit(grouper.finish());
      const r = ingester.result!;
      const changed = (source as { changed?: boolean }).changed === true;
      send({ type: 'end', id, digest: r.digest, size: r.size, chunks: r.chunks, ...(headMax > 0 ? { head: joined(head, headLength).buffer as ArrayBuffer } : {}), ...(changed ? { changed: true as const } : {}) });
    } catch (e) {
      if (e instanceof Cancelled) return; // nobody listens any more
      send({ type: 'error', id, ...shape(e) });
    } finally {
      ingester.dispose();
      grouper?.dispose();
      credits.delete(id);
    }
  };

  return (msg) => {
    if (msg.type === 'ack' || msg.type === 'cancel') {
      const flow = credits.get(msg.id);
      if (!flow) return;
      if (msg.type === 'cancel') flow.cancelled = true;
      else flow.inFlight--;
      flow.wake?.();
      return;
    }
    const known = msg.known ? new KnownChunks(msg.known) : undefined;
    if (msg.type === 'file') {
      let source: Iterable<Uint8Array> | AsyncIterable<Uint8Array>;
      let digest: Promise<Uint8Array> | undefined;
      try {
        const hashed = host.openHashed?.(msg.source);
        if (hashed) {
          ({ pieces: source, digest } = hashed);
          digest.catch(() => undefined); // a failed read rejects both; the loop reports it
        } else source = host.open(msg.source, msg.regularOnly ?? false);
      } catch (e) {
        send({ type: 'error', id: msg.id, ...shape(e) });
        return;
      }
      void ingestSource(msg.id, source, msg.options, known, digest, msg.head);
    } else if (msg.type === 'bytes') void ingestSource(msg.id, slices(msg.bytes), msg.options, known);
    else void ingestSmall(msg.id, msg.sources, msg.options, known, msg.statMax, msg.head);
  };
}
