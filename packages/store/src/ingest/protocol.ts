/**
 * Messages between an ingest pool (pool.ts) and its workers (serve.ts). `S` names a source the
 * worker can read: a file path in Node, a Blob (File) in browsers. Payload buffers travel as
 * transfers, never copies. Flow control: a worker stops reading after WINDOW unacknowledged
 * batches of one stream.
 */
import type { IngestOptions } from '@kura/core';
import type { StreamChunk } from './chunk-groups.js';

export const WINDOW = 4;

/**
 * `known`, on the messages that start work: the store's KnownChunks table (known-chunks.ts),
 * shared memory, per message because one pool serves every store of a process (Node).
 */
export type ToWorker<S> =
  /** `head`: send the source's first this many bytes back with its end (the search index's, text-heads.ts). */
  | { type: 'file'; id: number; source: S; options: IngestOptions; regularOnly?: boolean; known?: SharedArrayBuffer; head?: number }
  | { type: 'bytes'; id: number; bytes: Uint8Array; options: IngestOptions; known?: SharedArrayBuffer }
  /** `statMax`: answer each file's stat too, and do not read one of this many bytes or more. */
  | { type: 'small'; id: number; sources: S[]; options: IngestOptions; known?: SharedArrayBuffer; statMax?: number; head?: number }
  | { type: 'ack'; id: number }
  | { type: 'cancel'; id: number };

export interface ErrorShape {
  message: string;
  code?: string;
  /** A file-system error's path (a snapshot tells a file deleted since its scan by it). */
  path?: string;
  kura: boolean;
}

export type FromWorker =
  | { type: 'chunks'; id: number; chunks: StreamChunk[] }
  /** `changed`: the source changed while it was read (a file whose size or times moved). */
  | ({ type: 'end'; id: number; digest: `sha256:${string}`; size: number; chunks: number; head?: ArrayBuffer; changed?: true })
  | ({ type: 'error'; id: number } & ErrorShape)
  /** A batch of small sources answered whole, packed (small-batch.ts). */
  | { type: 'small'; id: number; packed: ArrayBuffer; errors: ErrorShape[] };
